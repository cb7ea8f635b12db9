"""The benchmark app on trioframe, in one process.

Usage: python bench/apps/trioframe_app.py PORT [--http2] [--max-requests-per-connection N]
    [--keep-alive-timeout SECONDS] [--http1-parser h11|llhttp]
(binds 127.0.0.1; SIGINT/SIGTERM stop it). ``--http2`` serves with ``ServerConfig(http2=True)``:
HTTP/2 with prior knowledge (h2c) as well as HTTP/1.1 on the same port. ``--http1-parser``
chooses the HTTP/1.1 parser (``h11`` is accepted by checkouts older than the option too: h11
was their only one). ``--keep-alive-timeout`` keeps idle connections open longer than the
default 5 s (bench/instructions_streams.py leaves its connections idle between the warm-up and
the count). Without options the server runs with the default configuration. With the
environment variable ``BENCH_TELEMETRY=1`` the routes run under ``Telemetry()`` (no provider
configured: what the middleware costs when nothing is exported). With ``BENCH_METRICS=1``
the app serves ``Router.metrics()`` (the prometheus extra): what recording every request's
metrics costs. With ``BENCH_RATE_LIMIT=1`` the routes run under ``RateLimitMiddleware`` with
a limit never reached (its default in-memory store: what a check costs).
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import enum
import os
import uuid

import attrs

from trioframe import Json, Request, Response, Router, Server


async def plaintext() -> Response:
    return Response.text("Hello, World!")


async def json_message() -> Response:
    return Response.json({"message": "Hello, World!"})


async def user(request: Request) -> Response:
    uid = int(request.params["id"])
    return Response.json({"id": uid, "name": f"user{uid}"})


async def echo(request: Request) -> Response:
    return (
        Response(200)
        .with_body(request.body)
        .with_header("content-type", "application/octet-stream")
    )


class Status(enum.Enum):
    DRAFT = "draft"
    PAID = "paid"
    SHIPPED = "shipped"


@attrs.frozen
class Dimensions:
    width_mm: int
    height_mm: int
    weight_g: int


@attrs.frozen
class Record:
    id: uuid.UUID
    name: str
    sku: str
    price: decimal.Decimal
    quantity: int
    created_at: datetime.datetime
    ship_on: datetime.date
    status: Status
    tags: list[str]
    dimensions: Dimensions
    note: str | None
    priority: int


async def record(value: Json[Record]) -> Record:
    return value


router = (
    Router()
    .get("/plaintext", plaintext)
    .get("/json", json_message)
    .get("/users/{id}", user)
    .post("/echo", echo)
    .post("/record", record, status=201)
)

if os.environ.get("BENCH_TELEMETRY") == "1":
    from trioframe.middleware import Telemetry

    router.middleware(Telemetry())

if os.environ.get("BENCH_METRICS") == "1":
    router.metrics()

if os.environ.get("BENCH_RATE_LIMIT") == "1":
    from trioframe.middleware import RateLimitMiddleware

    router.middleware(RateLimitMiddleware(10**9, per_seconds=1))

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--http2", action="store_true")
    parser.add_argument("--max-requests-per-connection", type=int)
    parser.add_argument("--keep-alive-timeout", type=float)
    parser.add_argument("--http1-parser", choices=["h11", "llhttp"])
    args = parser.parse_args()
    config = None
    if (
        args.http2
        or args.max_requests_per_connection
        or args.keep_alive_timeout
        or args.http1_parser
    ):
        from trioframe import ServerConfig

        config = ServerConfig(http2=args.http2)
        if args.max_requests_per_connection:
            config = config.with_max_requests_per_connection(args.max_requests_per_connection)
        if args.keep_alive_timeout:
            config = config.with_keep_alive_timeout(args.keep_alive_timeout)
        if args.http1_parser and hasattr(config, "http1_parser"):
            config = attrs.evolve(config, http1_parser=args.http1_parser)
        elif args.http1_parser == "llhttp":
            parser.error("this trioframe has no http1_parser option (h11 only)")
    Server(router, f"127.0.0.1:{args.port}", config).run()
