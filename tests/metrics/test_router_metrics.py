"""``Router.metrics`` through the test client: what a scrape says after requests (labels that
stay bounded: the route's pattern, never the path; ``_OTHER`` for an unknown method; no route
for a 404), the body sizes, the WebSocket sessions, and the configuration mistakes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
import trio

from trioframe import (
    ConfigurationError,
    Error,
    Path,
    Request,
    Response,
    Router,
    WebSocketConnection,
    freeze,
    openapi_document,
)
from trioframe.testing import TestClient

from ._scrape import Scrape


async def get_user(user_id: Path[int]) -> Response:
    if user_id > 100:
        raise Error.not_found(f"user {user_id}")
    return Response.json({"id": user_id})


async def upload(request: Request) -> Response:
    return Response.text(f"{len(await request.read_body())} bytes")


async def stream() -> Response:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(3):
            yield b"x" * 1000

    return Response.stream(chunks())


async def echo(ws: WebSocketConnection) -> None:
    async for message in ws:
        await ws.send_text(f"echo: {getattr(message, 'text', '')}")


def app_router() -> Router:
    return (
        Router()
        .get("/users/{user_id}", get_user)
        .post("/upload", upload)
        .get("/stream", stream)
        .websocket("/ws", echo)
        .metrics()
    )


async def scrape(client: object) -> Scrape:
    response = await client.get("/metrics")  # type: ignore[attr-defined]
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return Scrape(response.text)


async def test_requests_are_counted_by_route_pattern_method_and_status() -> None:
    async with TestClient(app_router()) as client:
        for user_id in (1, 2, 3):
            assert (await client.get(f"/users/{user_id}")).status_code == 200
        assert (await client.get("/users/999")).status_code == 404  # the route's own 404
        page = await scrape(client)
    assert page.requests(http_route="/users/{user_id}", http_response_status_code="200") == 3
    assert page.requests(http_route="/users/{user_id}", http_response_status_code="404") == 1
    assert page.requests(http_request_method="GET") == 4
    labels = {
        tuple(sorted(found))
        for found, _ in page.samples("http_server_request_duration_seconds_count")
    }
    assert labels == {("http_request_method", "http_response_status_code", "http_route")}
    assert "/users/1" not in page.text  # never the path


async def test_answers_no_route_gives_have_an_empty_route() -> None:
    async with TestClient(app_router()) as client:
        assert (await client.get("/nowhere/42")).status_code == 404
        assert (await client.delete("/users/1")).status_code == 405
        page = await scrape(client)
    assert page.requests(http_route="", http_response_status_code="404") == 1
    assert page.requests(http_route="", http_response_status_code="405") == 1
    assert "/nowhere" not in page.text


async def test_methods_outside_the_standard_nine_are_other() -> None:
    async with TestClient(app_router()) as client:
        for method in ("BREW", "PURGE", "M-SEARCH"):
            await client.request(method, "/users/1")
        await client.request("OPTIONS", "/users/1")
        page = await scrape(client)
    assert page.requests(http_request_method="_OTHER") == 3
    assert page.requests(http_request_method="OPTIONS") == 1
    for method in ("BREW", "PURGE", "M-SEARCH"):
        assert f'"{method}"' not in page.text


async def test_the_scrape_itself_is_in_progress_while_it_is_answered() -> None:
    async with TestClient(app_router()) as client:
        first = await scrape(client)
        second = await scrape(client)
    assert first.value("http_server_active_requests", http_request_method="GET") == 1
    assert first.requests(http_route="/metrics") == 0  # recorded once its answer is out
    assert second.requests(http_route="/metrics", http_response_status_code="200") == 1


async def test_body_sizes_are_what_was_declared_and_what_went_out() -> None:
    async with TestClient(app_router()) as client:
        await client.post("/upload", content=b"a" * 1500)
        await client.get("/stream")
        page = await scrape(client)
    received = "http_server_request_body_size_bytes"
    assert page.value(f"{received}_sum", http_route="/upload") == 1500
    assert page.value(f"{received}_count", http_route="/upload") == 1
    assert page.value(f"{received}_count", http_route="/stream") == 0  # no body: not counted
    sent = "http_server_response_body_size_bytes"
    assert page.value(f"{sent}_sum", http_route="/upload") == len(b"1500 bytes")
    assert page.value(f"{sent}_sum", http_route="/stream") == 3000  # streamed, as sent
    assert page.value(f"{sent}_bucket", http_route="/stream", le="1000.0") == 0
    assert page.value(f"{sent}_bucket", http_route="/stream", le="10000.0") == 1


async def test_durations_fall_in_the_conventions_buckets() -> None:
    async with TestClient(app_router()) as client:
        await client.get("/users/1")
        page = await scrape(client)
    buckets = {
        found["le"]
        for found, _ in page.samples("http_server_request_duration_seconds_bucket")
        if found["http_route"] == "/users/{user_id}"
    }
    expected = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
    assert buckets == {str(float(b)) for b in expected} | {"+Inf"}


async def test_websocket_sessions_and_their_handshake() -> None:
    async with TestClient(app_router()) as client:
        async with client.websocket("/ws") as ws:
            await ws.send_text("hi")
            assert await ws.receive_text() == "echo: hi"
            during = await scrape(client)
        with trio.fail_after(5):  # the session ends on the server a moment after
            while True:
                after = await scrape(client)
                if after.value("trioframe_websocket_sessions_active") == 0:
                    break
                await trio.sleep(0.01)
    route = {"http_route": "/ws"}
    assert during.value("trioframe_websocket_sessions_active", **route) == 1
    assert during.value("trioframe_websocket_sessions_total", **route) == 1
    assert during.requests(http_response_status_code="101", **route) == 1  # at the switch
    assert after.value("trioframe_websocket_sessions_total", **route) == 1


async def test_connections_by_protocol() -> None:
    async with TestClient(app_router()) as client:
        page = await scrape(client)
    assert page.value("trioframe_open_connections", protocol="http/1.1") >= 1
    assert page.value("trioframe_connections_total", protocol="http/1.1") >= 1


async def test_two_apps_in_one_process_count_apart() -> None:
    router = app_router()
    async with TestClient(router) as first, TestClient(router) as second:
        await first.get("/users/1")
        await first.get("/users/2")
        await second.get("/users/3")
        assert (await scrape(first)).requests(http_route="/users/{user_id}") == 2
        assert (await scrape(second)).requests(http_route="/users/{user_id}") == 1
    other = Router().get("/", stream).metrics()  # another router, the same metric names
    async with TestClient(other) as client:
        assert (await scrape(client)).requests(http_route="/users/{user_id}") == 0


async def test_without_metrics_the_app_has_no_observer() -> None:
    assert freeze(Router().get("/users/{user_id}", get_user)).observer is None
    assert freeze(app_router()).observer is not None


def test_the_metrics_route_is_left_out_of_the_openapi_document() -> None:
    router = app_router().openapi(title="t", version="1")
    document = openapi_document(router, title="t", version="1")
    assert "/metrics" not in document["paths"]
    assert "/users/{user_id}" in document["paths"]
    route = next(r for r in freeze(router).routes if r.path == "/metrics")
    assert route.include_in_schema is False


async def test_another_path() -> None:
    async with TestClient(Router().get("/", stream).metrics("/internal/prometheus")) as client:
        assert (await client.get("/internal/prometheus")).status_code == 200
        assert (await client.get("/metrics")).status_code == 404


def test_metrics_on_a_nested_router_say_to_use_the_outermost() -> None:
    inner = Router().get("/users/{user_id}", get_user).metrics()
    outer = Router().nest("/api", inner)
    with pytest.raises(ConfigurationError, match=r"nested router.*outermost router"):
        freeze(outer)


def test_metrics_twice_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="twice"):
        Router().metrics().metrics("/other")


def test_a_multiprocess_directory_set_too_late_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    # prometheus_client is imported (without the variable) in this process already
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    with pytest.raises(ConfigurationError, match="before the application is imported"):
        freeze(app_router())


def test_without_prometheus_client_the_error_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['prometheus_client'] = None  # makes the import fail\n"
        "from trioframe import ConfigurationError, Router\n"
        "try:\n"
        "    Router().metrics()\n"
        "except ConfigurationError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "pip install 'trioframe[prometheus]'" in result.stdout, result.stderr
