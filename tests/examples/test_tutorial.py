"""``examples/tutorial/``: the tutorial's steps (docs/tutorial/), each one the code its page
shows. Every step's app runs in memory; the tests a step writes pass; the commands the pages
give (``trioframe run``, ``--workers``, ``trioframe openapi``) work; the last step runs behind
Debian's nginx with the tutorial's own nginx configuration."""

from __future__ import annotations

import ast
import json
import os
import re
import runpy
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import trio

from trioframe.testing import TestClient

from ..deployment._nginx import NGINX, free_port

TUTORIAL = Path(__file__).parents[2] / "examples" / "tutorial"
STEPS = sorted(p.name for p in TUTORIAL.iterdir() if p.is_dir() and p.name.startswith("step"))
ROOT = str(Path(__file__).parents[2])
#: Subprocesses import this checkout's trioframe, whatever is installed.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
KINDRED = {"title": "Kindred", "author": "Octavia E. Butler", "year": 1979}


def step_app(step: str) -> dict[str, object]:
    return runpy.run_path(str(TUTORIAL / step / "app.py"))


def test_seven_steps_and_their_copies() -> None:
    """A step that changes nothing in a file carries the previous step's file unchanged, so
    the pages never show two versions of one thing."""
    assert len(STEPS) == 7, STEPS
    same = [("step3", "step4", "app.py"), ("step6", "step7", "app.py")]
    same += [("step6", "step7", "test_app.py")]
    same += [("step1", step, "pyproject.toml") for step in STEPS[1:]]
    same += [("step4", step, "noxfile.py") for step in STEPS[4:]]
    for first, second, name in same:
        assert (TUTORIAL / first / name).read_text() == (TUTORIAL / second / name).read_text(), (
            f"{second}/{name} differs from {first}/{name}"
        )


async def test_step1_in_memory() -> None:
    async with TestClient(step_app("step1")["router"]) as client:  # type: ignore[arg-type]
        assert (await client.get("/")).text == "Welcome to the bookshelf!"


async def test_step2_routes_and_extractors() -> None:
    async with TestClient(step_app("step2")["router"]) as client:  # type: ignore[arg-type]
        books = (await client.get("/books")).json()
        assert [book["id"] for book in books] == [1, 2, 3]
        by_butler = await client.get("/books", params={"author": "Octavia E. Butler"})
        assert by_butler.json() == [{"id": 3, **KINDRED}]
        assert len((await client.get("/books?limit=2")).json()) == 2
        assert (await client.get("/books?limit=0")).json()["errors"] == [
            "query.limit: must be at least 1"
        ]
        assert (await client.get("/books/3")).json() == {"id": 3, **KINDRED}
        assert (await client.get("/books/9")).json()["message"] == "book 9 not found"
        assert (await client.get("/books/nine")).json()["errors"] == [
            "path.book_id: expected an integer"
        ]


async def test_step3_json_api() -> None:
    create_app = step_app("step3")["create_app"]
    async with TestClient(create_app()) as client:  # type: ignore[operator]
        created = await client.post("/books", json=KINDRED)
        assert created.status_code == 201
        assert created.json() == {"id": 1, **KINDRED}
        refused = await client.post("/books", json={"title": "", "author": "A", "year": 99})
        assert refused.status_code == 422
        assert refused.json()["errors"] == [
            "body.title: must be at least 1 character long",
            "body.year: must be at least 1450",
        ]
        replaced = await client.put("/books/1", json={**KINDRED, "title": "Dawn"})
        assert replaced.json()["title"] == "Dawn"
        assert (await client.delete("/books/1")).status_code == 204
        assert (await client.get("/books")).json() == []


@pytest.mark.parametrize("step", ["step4", "step5", "step6", "step7"])
async def test_the_steps_own_tests_pass(step: str) -> None:
    """``pytest`` in the step's directory, as the reader runs it (its pyproject.toml turns
    on trio mode)."""
    result = await trio.run_process(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=TUTORIAL / step,
        env=ENV,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    output = result.stdout.decode()
    assert result.returncode == 0, output + result.stderr.decode()
    assert re.search(r"\b\d+ passed\b", output) and "failed" not in output, output


def test_the_noxfile_has_the_three_sessions() -> None:
    """nox itself is not a test dependency: the noxfile is read, not run."""
    tree = ast.parse((TUTORIAL / "step4" / "noxfile.py").read_text())
    sessions = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(ast.unparse(d) == "nox.session" for d in node.decorator_list)
    ]
    assert sessions == ["tests", "lint", "typing"]


async def test_step5_openapi_command_prints_the_served_document() -> None:
    result = await trio.run_process(
        [sys.executable, "-m", "trioframe", "openapi", "app:create_app"],
        cwd=TUTORIAL / "step5",
        env=ENV,
        capture_stdout=True,
    )
    printed = json.loads(result.stdout)
    async with TestClient(step_app("step5")["create_app"]()) as client:  # type: ignore[operator]
        assert (await client.get("/openapi.json")).json() == printed
    assert printed["info"]["title"] == "Bookshelf"


class Served:
    """A ``trioframe run`` process started in a step's directory, its stderr collected."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.stderr = b""

    async def collect(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.receive_some():
            self.stderr += chunk

    async def wait_for(self, pattern: bytes) -> re.Match[bytes]:
        while (found := re.search(pattern, self.stderr)) is None:
            assert self.process.returncode is None, self.stderr.decode()
            await trio.sleep(0.02)
        return found


@asynccontextmanager
async def trioframe_run(
    step: str, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[Served, int]]:
    """``trioframe run ARGS`` in the step's directory; yields once it serves, with its port."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "trioframe", "run", *args],
        cwd=TUTORIAL / step,
        env={**ENV, **(env or {})},
        stderr=subprocess.PIPE,
    )
    served = Served(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(served.collect)
            line = await served.wait_for(rb"serving on http://127\.0\.0\.1:(\d+)")
            yield served, int(line[1])
            nursery.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.loopback
async def test_step1_trioframe_run_and_ctrl_c() -> None:
    with trio.fail_after(15):
        async with trioframe_run("step1", "app:router", "--port", "0") as (served, port):
            async with httpx.AsyncClient() as http:
                response = await http.get(f"http://127.0.0.1:{port}/")
            assert response.text == "Welcome to the bookshelf!"
            served.process.send_signal(signal.SIGINT)
            assert await served.process.wait() == 0


@pytest.mark.loopback
async def test_step6_with_two_workers_and_json_logs() -> None:
    args = ["app:create_app", "--port", str(free_port()), "--workers", "2"]
    with trio.fail_after(30):
        async with trioframe_run("step6", *args, env={"BOOKSHELF_LOG_FORMAT": "json"}) as (
            served,
            port,
        ):
            await served.wait_for(rb"\(2 workers\)")
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                assert (await http.get("/health")).text == "ok"
                assert (await http.get("/books")).json() == []
                metrics = (await http.get("/metrics")).text
            assert 'http_route="/health"' in metrics  # the fleet's figures, summed
            line = await served.wait_for(rb'\{"time":[^\n]*"path":"/books"[^\n]*\}')
            assert json.loads(line[0])["status"] == 200
            served.process.send_signal(signal.SIGTERM)
            assert await served.process.wait() == 0


def nginx_config(prefix: Path, port: int, app_port: int) -> str:
    """The tutorial's site file, listening on ``port`` and proxying to ``app_port``, inside
    a main configuration that keeps every file nginx writes under ``prefix``."""
    site = (TUTORIAL / "step7" / "bookshelf.nginx.conf").read_text()
    assert "listen 80;" in site and "server 127.0.0.1:8000;" in site
    site = site.replace("listen 80;", f"listen 127.0.0.1:{port};")
    site = site.replace("server 127.0.0.1:8000;", f"server 127.0.0.1:{app_port};")
    temp_paths = "".join(
        f"    {kind}_temp_path {prefix}/{kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"daemon off;\nworker_processes 1;\nerror_log {prefix}/error.log warn;\n"
        f"pid {prefix}/nginx.pid;\nevents {{ worker_connections 64; }}\n"
        f"http {{\n    access_log off;\n{temp_paths}{site}\n}}\n"
    )


@asynccontextmanager
async def tutorial_nginx(prefix: Path, app_port: int) -> AsyncIterator[int]:
    if not await trio.Path(NGINX).exists():
        pytest.skip("nginx is not installed (.ci/run installs Debian's nginx-light)")
    port = free_port()
    config = prefix / "nginx.conf"
    await trio.Path(config).write_text(nginx_config(prefix, port, app_port))
    process = await trio.lowlevel.open_process(
        [NGINX, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log")],
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:  # nginx says nothing when it listens
            try:
                await (await trio.open_tcp_stream("127.0.0.1", port)).aclose()
                break
            except OSError:
                assert process.returncode is None, await trio.Path(prefix / "error.log").read_text()
                await trio.sleep(0.05)
        yield port
    finally:
        process.send_signal(signal.SIGQUIT)
        with trio.move_on_after(5):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.loopback
async def test_step7_behind_nginx(tmp_path: Path) -> None:
    """The command of step 7 behind the tutorial's nginx site: requests go through, the
    client's address reaches the access log through X-Forwarded-For, /metrics stays
    inside."""
    app_port = free_port()
    args = ["app:create_app", "--port", str(app_port), "--workers", "2"]
    args += ["--trusted-proxy", "127.0.0.1"]
    with trio.fail_after(30):
        async with (
            trioframe_run("step7", *args, env={"BOOKSHELF_LOG_FORMAT": "json"}) as (served, _),
            tutorial_nginx(tmp_path, app_port) as port,
        ):
            transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
            async with httpx.AsyncClient(
                transport=transport, base_url=f"http://127.0.0.1:{port}"
            ) as http:
                created = await http.post("/books", json=KINDRED)
                assert created.status_code == 201, created.text
                assert (await http.get("/health")).text == "ok"
                assert (await http.get("/openapi.json")).json()["info"]["title"] == "Bookshelf"
                assert (await http.get("/docs")).status_code == 200
                assert (await http.get("/metrics")).status_code == 404  # nginx keeps it in
            async with httpx.AsyncClient() as direct:
                assert (await direct.get(f"http://127.0.0.1:{app_port}/metrics")).is_success
            line = await served.wait_for(rb'\{"time":[^\n]*"method":"POST"[^\n]*\}')
            logged = json.loads(line[0])
            assert logged["client"].startswith("127.0.0.2"), logged
            assert logged["status"] == 201
            served.process.send_signal(signal.SIGTERM)
            assert await served.process.wait() == 0
