"""Strict HTTP/1.1 parsing: ambiguous framing and odd request forms are refused (400, 414,
505) with ``Connection: close``; the server keeps serving new connections afterwards."""

from __future__ import annotations

import pytest
import trio

from trioframe import Request, Response, Router, ServerConfig

from ._support import assert_error_body, fetch, serving, simple_get

pytestmark = pytest.mark.loopback

HANDLED: list[str] = []


async def index() -> Response:
    return Response.text("index")


async def sink(request: Request) -> Response:
    HANDLED.append(request.body.decode("latin-1"))
    return Response.text(f"got {len(request.body)}")


ROUTER = Router().get("/", index).post("/", sink)

H = "Host: test\r\n"

CASES_400 = {
    "content-length-and-transfer-encoding": (
        f"POST / HTTP/1.1\r\n{H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: test\r\n\r\n"
    ),
    "transfer-encoding-and-content-length": (
        f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"
    ),
    "two-content-length-headers": (
        f"POST / HTTP/1.1\r\n{H}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello"
    ),
    "two-different-content-length-headers": (
        f"POST / HTTP/1.1\r\n{H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"
    ),
    "list-content-length": f"POST / HTTP/1.1\r\n{H}Content-Length: 5, 5\r\n\r\nhello",
    "obs-fold": f"GET / HTTP/1.1\r\n{H}X-Folded: first\r\n second\r\n\r\n",
    "obs-fold-tab": f"GET / HTTP/1.1\r\n{H}X-Folded: first\r\n\tsecond\r\n\r\n",
    "control-char-in-value": f"GET / HTTP/1.1\r\n{H}X-Bad: a\x01b\r\n\r\n",
    "transfer-encoding-on-http-1.0": (
        f"POST / HTTP/1.0\r\n{H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    ),
    "asterisk-form-target": f"GET * HTTP/1.1\r\n{H}\r\n",
    "authority-form-target": f"GET example.com:80 HTTP/1.1\r\n{H}\r\n",
    "authority-form-connect": f"CONNECT example.com:80 HTTP/1.1\r\n{H}\r\n",
    "absolute-form-without-host": f"GET http:///smuggled HTTP/1.1\r\n{H}\r\n",
    "absolute-form-with-empty-authority": f"GET http://?x HTTP/1.1\r\n{H}\r\n",
    "absolute-form-https-nothing-after": f"GET https:// HTTP/1.1\r\n{H}\r\n",
}

# A chunked body h11 would accept although RFC 9112 7.1 forbids it, followed by a request a
# lenient proxy in front may see as part of the body: the server must answer 400 and close
# before that request reaches a handler.
CHUNKED = f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n"
SMUGGLED = f"POST / HTTP/1.1\r\n{H}Content-Length: 8\r\n\r\nsmuggled"
CHUNKED_400 = {
    "bare-lf-ending-trailer-section": "0\r\n\n",
    "bare-lf-in-trailer-field": "0\r\nX: y\n\r\n",
    "obs-fold-in-trailer": "0\r\nX: y\r\n z\r\n\r\n",
    "control-char-in-trailer": "0\r\nX: a\x01b\r\n\r\n",
    "cr-in-chunk-extension": "5;a\rb\r\nhello\r\n0\r\n\r\n",
    "nul-in-chunk-extension": "5;a\x00\r\nhello\r\n0\r\n\r\n",
    "del-in-chunk-extension": "5;a\x7f\r\nhello\r\n0\r\n\r\n",
    "space-after-chunk-size": "5 \r\nhello\r\n0\r\n\r\n",
    "hundred-hex-digit-chunk-size": "0" * 99 + "5\r\nhello\r\n0\r\n\r\n",
}
CASES_400.update(
    {f"chunked-{name}": CHUNKED + body + SMUGGLED for name, body in CHUNKED_400.items()}
)


async def _assert_refused_and_closed(
    request: bytes, status: int, config: ServerConfig | None = None
) -> None:
    HANDLED.clear()
    async with serving(ROUTER, config) as served:
        response, connection = await fetch(served.host, served.port, request)
        assert_error_body(response, status)
        assert response.closes, response.headers
        # Nothing else follows: no second response for smuggled bytes, then EOF.
        assert await connection.read_until_eof() == b""
        await connection.aclose()
        assert HANDLED == []
        # A new connection to the same server is served normally.
        response, connection = await fetch(served.host, served.port, simple_get())
        assert response.status == 200
        assert response.body == b"index"
        await connection.aclose()


@pytest.mark.parametrize("request_text", CASES_400.values(), ids=CASES_400.keys())
async def test_ambiguous_request_is_400_and_closes(request_text: str) -> None:
    with trio.fail_after(10):
        await _assert_refused_and_closed(request_text.encode("latin-1"), 400)


async def test_a_head_with_bare_lf_line_ends_is_400_without_waiting() -> None:
    with trio.fail_after(5):
        await _assert_refused_and_closed(
            b"GET / HTTP/1.1\nHost: test\n\n", 400, ServerConfig(header_timeout=30)
        )


async def test_http_2_0_on_http1_parser_is_505() -> None:
    with trio.fail_after(10):
        await _assert_refused_and_closed(f"GET / HTTP/2.0\r\n{H}\r\n".encode(), 505)


async def test_request_line_over_8_kib_is_414() -> None:
    with trio.fail_after(10):
        request = simple_get("/" + "a" * (9 * 1024))
        assert len(request) < 16 * 1024  # under the head limit: the line limit decides
        await _assert_refused_and_closed(request, 414)


async def test_request_line_over_8_kib_without_its_end_is_414() -> None:
    with trio.fail_after(10):
        await _assert_refused_and_closed(b"GET /" + b"a" * (9 * 1024), 414)


async def test_valid_post_on_same_router_is_accepted() -> None:
    """Control for the cases above: the well-formed versions of these requests work."""
    with trio.fail_after(10):
        HANDLED.clear()
        async with serving(ROUTER) as served:
            response, connection = await fetch(
                served.host,
                served.port,
                f"POST / HTTP/1.1\r\n{H}Content-Length: 5\r\n\r\nhello".encode(),
            )
            assert response.status == 200
            assert response.body == b"got 5"
            await connection.send(
                f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n"
                "5\r\nhello\r\n0\r\n\r\n".encode()
            )
            response = await connection.read_response()
            assert response.status == 200
            assert response.body == b"got 5"
            await connection.aclose()
        assert HANDLED == ["hello", "hello"]
