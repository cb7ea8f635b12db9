"""A small app the client tests share: who the server thinks the client is, an echo."""

from __future__ import annotations

from trioframe import Request, Response, Router


async def whoami(request: Request) -> Response:
    """What the request looked like to the app: protocol version, scheme, ALPN, the
    client's port (one per connection) and the Upgrade header it carried."""
    tls = request.tls
    client = request.client
    return Response.json(
        {
            "version": request.version,
            "scheme": request.scheme,
            "alpn": None if tls is None else tls.alpn_protocol,
            "port": None if client is None else client[1],
            "upgrade": request.header("upgrade"),
        }
    )


async def echo(request: Request) -> Response:
    """The request body back."""
    return Response(200, request.body, [(b"content-type", b"application/octet-stream")])


async def hello() -> Response:
    return Response.text("hello")


def whoami_router() -> Router:
    return Router().get("/", whoami).post("/echo", echo).get("/hello", hello)
