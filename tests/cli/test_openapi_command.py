"""``trioframe openapi MODULE:ATTR``: the document printed or written, never served."""

from __future__ import annotations

import json
from pathlib import Path

from openapi_spec_validator import validate

from ._cli import assert_one_line, run_cli, write_module


def test_it_prints_the_document_with_router_openapi_s_title(tmp_path: Path) -> None:
    write_module(
        tmp_path,
        "served",
        """
        from trioframe import Router

        async def hello() -> str:
            return "hi"

        router = Router().get("/", hello).openapi(title="Served", version="3.0")
        """,
    )
    done = run_cli("openapi", "served:router", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    validate(document)
    assert document["info"] == {"title": "Served", "version": "3.0"}
    assert list(document["paths"]) == ["/"]


def test_it_writes_a_file_with_the_options_title_and_version(tmp_path: Path) -> None:
    output = tmp_path / "openapi.json"
    done = run_cli(
        "openapi",
        "examples.rest_api:router",
        "--title",
        "Items",
        "--api-version",
        "2.0",
        "-o",
        str(output),
    )
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    document = json.loads(output.read_text())
    assert document["info"] == {"title": "Items", "version": "2.0"}
    validate(document)


def test_a_wrong_target_is_one_line_and_status_2() -> None:
    done = run_cli("openapi", "no_such_module:router")
    assert done.returncode == 2
    assert_one_line(done.stderr, "cannot import module 'no_such_module'")
