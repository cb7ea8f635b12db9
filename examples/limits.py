"""Request size limits, raw headers, and one handler for several methods and paths.

What it shows:

* ``POST /upload`` takes a raw body of at most 5 MiB. ``UploadBody`` is a custom
  ``FromRequest`` extractor (an async classmethod) that first checks the declared
  ``Content-Length`` and answers 413 (``Error.payload_too_large``) without reading a byte,
  then reads the body and checks its real length, which also covers chunked bodies that
  declare no length. The server's own ``ServerConfig.max_body_size`` (10 MiB by default)
  still applies to every route and bounds what is read here; a route limit below it is the
  application's business, as here. (Taking ``Body`` instead would read the whole body
  before the handler could look at ``Content-Length``.)
* ``GET /headers`` takes the ``Headers`` extractor and sends it back with
  ``Response.json(headers)``: lower-case names, repeated headers joined with ``", "``.
* ``resource`` is one handler registered with ``Router.route`` under ``/resource`` (GET,
  POST, PUT) and ``/archive`` (GET, PUT). It branches on the ``Method`` and ``Uri``
  extractors; the archive is read-only, so the handler itself answers PUT there with 405
  (``Error.method_not_allowed``). Methods registered on neither path (DELETE, ...) get the
  router's built-in 405.

Run it with ``python examples/limits.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port), then for example::

    head -c 1000 /dev/zero | curl --data-binary @- localhost:3000/upload
    head -c 6000000 /dev/zero | curl --data-binary @- localhost:3000/upload    # 413
    curl -H 'x-tag: a' -H 'x-tag: b' localhost:3000/headers
    curl -X PUT localhost:3000/archive                                          # 405
"""

from __future__ import annotations

import hashlib
import logging
import os

import attrs

from trioframe import (
    Error,
    FromRequest,
    Headers,
    Method,
    Request,
    Response,
    Router,
    Server,
    StatusCode,
    Uri,
)

MiB = 1024 * 1024
UPLOAD_LIMIT = 5 * MiB


@attrs.frozen
class UploadBody(FromRequest):
    """A request body of at most ``UPLOAD_LIMIT`` bytes; 413 for a larger one."""

    data: bytes

    @classmethod
    async def from_request(cls, request: Request) -> UploadBody:
        declared = request.header("content-length")
        if declared is not None and declared.isdigit() and int(declared) > UPLOAD_LIMIT:
            raise Error.payload_too_large(
                f"Content-Length {declared} is over the upload limit of {UPLOAD_LIMIT} bytes"
            )
        data = await request.read_body()
        if len(data) > UPLOAD_LIMIT:
            raise Error.payload_too_large(
                f"the body is over the upload limit of {UPLOAD_LIMIT} bytes"
            )
        return cls(data)


async def upload(body: UploadBody) -> Response:
    return Response.json({"size": len(body.data), "sha256": hashlib.sha256(body.data).hexdigest()})


async def echo_headers(headers: Headers) -> Response:
    return Response.json(headers)


async def resource(method: Method, uri: Uri) -> Response:
    seen = {"method": str(method), "path": uri.path, "query": uri.query, "target": str(uri)}
    if uri.path == "/archive":
        if method not in (Method.GET, Method.HEAD):
            raise Error.method_not_allowed(
                f"{method} is not allowed on {uri.path}: the archive is read-only",
                headers={"Allow": "GET, HEAD"},
            )
        return Response.json({**seen, "action": "read the archive"})
    if method in (Method.GET, Method.HEAD):
        return Response.json({**seen, "action": "read"})
    if method == Method.POST:
        return Response.json({**seen, "action": "create"}, status=StatusCode.CREATED)
    if method == Method.PUT:
        return Response.json({**seen, "action": "replace"})
    raise Error.method_not_allowed(f"{method} is not allowed on {uri.path}")


#: What the OpenAPI document says of answers ``resource`` gives besides 200.
CREATES = {201: "created"}
READ_ONLY = {405: "the archive is read-only"}

router = (
    Router()
    .post("/upload", upload)
    .get("/headers", echo_headers)
    .route("/resource", resource, methods=[Method.GET, Method.POST, Method.PUT], responses=CREATES)
    .route("/archive", resource, methods=[Method.GET, Method.PUT], responses=READ_ONLY)
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
