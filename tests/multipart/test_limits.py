"""``MultipartConfig`` limits, each at N-1 and N (accepted) and N+1 (413 naming the limit),
with the documented defaults and with small limits set by ``Router.multipart_config``;
per-route limits through nested routers; ``max_total_size`` against declared and chunked
lengths, and in place of ``ServerConfig.max_body_size``.

Bodies come from ``_support.encode`` so that N is exact: the number of parts (``max_fields``),
a part's content length (``max_field_size``, ``max_file_size``), the whole body length
(``max_total_size``) and the header name + value bytes of one part as the decoder's
``_count_header`` adds them (``max_part_header_size``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import pytest

from trioframe import Body, Multipart, MultipartConfig, Response, Router, ServerConfig
from trioframe.testing import TestClient

from ._support import (
    CONTENT_TYPE,
    KiB,
    MiB,
    Part,
    assert_error,
    encode,
    header_bytes,
    overhead,
    padded_part,
)

HEADERS = {"content-type": CONTENT_TYPE}


class Seen:
    """What the handler saw: whether it ran, and per field its content and header bytes."""

    def __init__(self) -> None:
        self.entered = False
        self.sizes: list[int] = []
        self.header_bytes: list[int] = []


def reading_handler(seen: Seen) -> Callable[[Multipart], Any]:
    async def upload(form: Multipart) -> Response:
        seen.entered = True
        async for field in form:
            seen.header_bytes.append(sum(len(k) + len(v) for k, v in field.headers.items()))
            seen.sizes.append(len(await field.bytes()))
        return Response.json({"fields": len(seen.sizes)})

    return upload


async def chunked(body: bytes, piece: int = 64 * KiB) -> AsyncIterator[bytes]:
    """``body`` streamed: httpx sends it with Transfer-Encoding: chunked, no length."""
    for start in range(0, len(body), piece):
        yield body[start : start + piece]


# -- the documented defaults ------------------------------------------------------------------
def test_defaults_are_the_documented_ones() -> None:
    config = MultipartConfig()
    assert config.max_fields == 100
    assert config.max_field_size == 1 * MiB
    assert config.max_file_size == 10 * MiB
    assert config.max_total_size == 10 * MiB
    assert config.max_part_header_size == 16 * KiB


@pytest.mark.parametrize(
    "name",
    ["max_fields", "max_field_size", "max_file_size", "max_total_size", "max_part_header_size"],
)
@pytest.mark.parametrize("value", [0, -1])
def test_limits_must_be_positive(name: str, value: int) -> None:
    with pytest.raises(ValueError, match=name):
        MultipartConfig(**{name: value})


# -- exact bodies for each limit ----------------------------------------------------------
def _fields(n: int) -> bytes:
    return encode([Part(f"f{i}", b"x") for i in range(n)])


def _field_size(n: int) -> bytes:
    return encode([Part("text", b"a" * n)])


def _file_size(n: int) -> bytes:
    return encode([Part("file", b"a" * n, filename="a.bin", content_type="image/png")])


TOTAL_PARTS = [Part("note", b"hi"), Part("file", filename="a.bin", content_type="image/png")]


def _total_size(n: int) -> bytes:
    note, file = TOTAL_PARTS
    body = encode([note, file.with_content(b"a" * (n - overhead(TOTAL_PARTS) - 2))])
    assert len(body) == n
    return body


def _header_size(n: int) -> bytes:
    part = padded_part("h", n)
    assert header_bytes(part) == n
    return encode([part])


def _check_fields(seen: Seen, n: int) -> None:
    assert len(seen.sizes) == n


def _check_size(seen: Seen, n: int) -> None:
    assert seen.sizes == [n]


def _check_total(seen: Seen, n: int) -> None:
    assert seen.sizes == [2, n - overhead(TOTAL_PARTS) - 2]


def _check_header(seen: Seen, n: int) -> None:
    assert seen.header_bytes == [n]


@attrs.frozen
class Limit:
    name: str
    n: int
    config: MultipartConfig | None  # None: the router sets nothing (the defaults)
    build: Callable[[int], bytes]
    check: Callable[[Seen, int], None]

    def __str__(self) -> str:
        return f"{self.name}={self.n}{'' if self.config else '(default)'}"


LIMITS = [
    # The documented defaults. A 10 MiB file cannot fit the default 10 MiB total with its
    # framing, so that one case raises max_total_size alone.
    Limit("max_fields", 100, None, _fields, _check_fields),
    Limit("max_field_size", 1 * MiB, None, _field_size, _check_size),
    Limit("max_file_size", 10 * MiB, MultipartConfig(max_total_size=11 * MiB), _file_size, _check_size),
    Limit("max_total_size", 10 * MiB, None, _total_size, _check_total),
    Limit("max_part_header_size", 16 * KiB, None, _header_size, _check_header),
    # Small limits set with Router.multipart_config.
    Limit("max_fields", 3, MultipartConfig(max_fields=3), _fields, _check_fields),
    Limit("max_field_size", 10, MultipartConfig(max_field_size=10), _field_size, _check_size),
    Limit("max_file_size", 20, MultipartConfig(max_file_size=20), _file_size, _check_size),
    Limit("max_total_size", 500, MultipartConfig(max_total_size=500), _total_size, _check_total),
    Limit("max_part_header_size", 100, MultipartConfig(max_part_header_size=100), _header_size, _check_header),
]  # fmt: skip


def _router(limit: Limit, seen: Seen) -> Router:
    router = Router().post("/u", reading_handler(seen))
    if limit.config is not None:
        router.multipart_config(limit.config)
    return router


@pytest.mark.parametrize("limit", LIMITS, ids=str)
@pytest.mark.parametrize("delta", [-1, 0])
async def test_limit_reached_is_accepted(limit: Limit, delta: int) -> None:
    seen = Seen()
    n = limit.n + delta
    async with TestClient(_router(limit, seen)) as client:
        response = await client.post("/u", content=limit.build(n), headers=HEADERS)
    assert response.status_code == 200, response.text
    limit.check(seen, n)


@pytest.mark.parametrize("limit", LIMITS, ids=str)
async def test_limit_crossed_by_one_is_413_naming_it(limit: Limit) -> None:
    seen = Seen()
    async with TestClient(_router(limit, seen)) as client:
        response = await client.post("/u", content=limit.build(limit.n + 1), headers=HEADERS)
    assert_error(response, 413, limit.name, f"({limit.n}")


@pytest.mark.parametrize("limit", LIMITS, ids=str)
async def test_limit_crossed_in_a_chunked_body_is_413(limit: Limit) -> None:
    """No Content-Length: every limit is found while the body streams in."""
    seen = Seen()
    body = limit.build(limit.n + 1)
    async with TestClient(_router(limit, seen)) as client:
        response = await client.post("/u", content=chunked(body, 1000), headers=HEADERS)
    assert_error(response, 413, limit.name, f"({limit.n}")
    assert seen.entered


@pytest.mark.parametrize("limit", [x for x in LIMITS if x.name == "max_total_size"], ids=str)
async def test_declared_length_over_max_total_size_is_413_before_the_handler(
    limit: Limit,
) -> None:
    seen = Seen()
    body = limit.build(limit.n + 1)
    async with TestClient(_router(limit, seen)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
        assert response.request.headers["content-length"] == str(limit.n + 1)
    assert_error(response, 413, f"larger than max_total_size ({limit.n} bytes)")
    assert not seen.entered


@pytest.mark.parametrize("limit", [x for x in LIMITS if x.name == "max_total_size"], ids=str)
async def test_chunked_body_of_exactly_max_total_size_is_accepted(limit: Limit) -> None:
    seen = Seen()
    async with TestClient(_router(limit, seen)) as client:
        response = await client.post("/u", content=chunked(limit.build(limit.n)), headers=HEADERS)
    assert response.status_code == 200, response.text
    limit.check(seen, limit.n)


async def test_part_headers_of_one_long_line_within_max_part_header_size_are_accepted() -> None:
    """A single 5,000-byte header (a long file name, say) is well within the default 16 KiB
    of ``max_part_header_size`` and must be accepted like the same bytes spread over several
    lines."""
    seen = Seen()
    name = "n" * 5000 + ".txt"
    body = encode([Part("f", b"data", filename=name)])
    async with TestClient(Router().post("/u", reading_handler(seen))) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert seen.sizes == [4]


async def test_one_header_line_over_max_part_header_size_is_413_naming_it() -> None:
    size = 16 * KiB + 1
    part = Part("f", b"v", extra=(("X-Big", "p" * (size - header_bytes(Part("f", b"v")) - 5)),))
    assert header_bytes(part) == size
    async with TestClient(Router().post("/u", reading_handler(Seen()))) as client:
        response = await client.post("/u", content=encode([part]), headers=HEADERS)
    assert_error(response, 413, "max_part_header_size")


async def test_a_part_with_ten_short_headers_is_accepted() -> None:
    """Ten headers of a few bytes each are far below max_part_header_size."""
    seen = Seen()
    part = Part("f", b"v", extra=tuple((f"X-H{i}", str(i)) for i in range(9)))
    async with TestClient(Router().post("/u", reading_handler(seen))) as client:
        response = await client.post("/u", content=encode([part]), headers=HEADERS)
    assert response.status_code == 200, response.text
    assert seen.header_bytes == [header_bytes(part)]


async def test_field_and_file_limits_apply_by_kind() -> None:
    """``max_field_size`` caps fields without a file name, ``max_file_size`` file fields."""
    config = MultipartConfig(max_field_size=10, max_file_size=1000)
    seen = Seen()
    router = Router().post("/u", reading_handler(seen)).multipart_config(config)
    async with TestClient(router) as client:
        ok = encode([Part("text", b"t" * 10), Part("file", b"f" * 1000, filename="f")])
        response = await client.post("/u", content=ok, headers=HEADERS)
        assert response.status_code == 200, response.text
        big_text = encode([Part("text", b"t" * 11)])
        assert_error(
            await client.post("/u", content=big_text, headers=HEADERS), 413, "max_field_size"
        )
        big_file = encode([Part("file", b"f" * 1001, filename="f")])
        assert_error(
            await client.post("/u", content=big_file, headers=HEADERS), 413, "max_file_size"
        )
        # A file field is judged as a file even with an empty file name.
        empty_name = encode([Part("file", b"f" * 11, filename="")])
        response = await client.post("/u", content=empty_name, headers=HEADERS)
        assert response.status_code == 200, response.text


# -- per-route limits through nesting ----------------------------------------------------------
async def test_nested_routers_give_per_route_limits() -> None:
    seen = Seen()
    handler = reading_handler(seen)
    small = Router().post("/u", handler).multipart_config(MultipartConfig(max_field_size=10))
    inherits = Router().post("/u", handler)  # no config: the enclosing router's
    outer = (
        Router()
        .post("/u", handler)
        .multipart_config(MultipartConfig(max_field_size=100))
        .nest("/small", small)
        .nest("/inherits", inherits)
    )
    top = Router().post("/defaults", handler).nest("/outer", outer)
    sizes = {"/defaults": 1 * MiB, "/outer/u": 100, "/outer/inherits/u": 100, "/outer/small/u": 10}
    async with TestClient(top) as client:
        for path, limit in sizes.items():
            at_limit = await client.post(path, content=_field_size(limit), headers=HEADERS)
            assert at_limit.status_code == 200, (path, at_limit.text)
            over = await client.post(path, content=_field_size(limit + 1), headers=HEADERS)
            assert_error(over, 413, f"max_field_size ({limit})")


async def test_nested_max_total_size_replaces_the_outer_one_before_the_handler() -> None:
    seen = Seen()
    inner = Router().post("/u", reading_handler(seen))
    inner.multipart_config(MultipartConfig(max_total_size=300))
    outer = Router().multipart_config(MultipartConfig(max_total_size=5000)).nest("/in", inner)
    async with TestClient(outer) as client:
        response = await client.post("/in/u", content=_total_size(301), headers=HEADERS)
        assert_error(response, 413, "max_total_size (300 bytes)")
        assert not seen.entered
        response = await client.post("/in/u", content=_total_size(300), headers=HEADERS)
        assert response.status_code == 200, response.text


# -- max_total_size in place of ServerConfig.max_body_size ---------------------------------------
def _body_routes(seen: Seen) -> Router:
    async def raw(body: Body) -> Response:
        return Response.json({"raw": len(body)})

    return Router().post("/u", reading_handler(seen)).post("/raw", raw)


@pytest.mark.parametrize("streamed", [False, True], ids=["content-length", "chunked"])
async def test_multipart_route_accepts_a_body_over_max_body_size(streamed: bool) -> None:
    seen = Seen()
    body = _total_size(50_000)
    async with TestClient(_body_routes(seen), ServerConfig(max_body_size=1000)) as client:
        content: Any = chunked(body, 4096) if streamed else body
        response = await client.post("/u", content=content, headers=HEADERS)
        assert response.status_code == 200, response.text
        assert seen.sizes == [2, 50_000 - overhead(TOTAL_PARTS) - 2]
        # The server limit itself is in force on the other route.
        content = chunked(body, 4096) if streamed else body
        response = await client.post("/raw", content=content, headers=HEADERS)
        assert_error(response, 413, "max_body_size (1000 bytes)")


async def test_max_total_size_above_max_body_size_is_still_enforced() -> None:
    seen = Seen()
    router = _body_routes(seen).multipart_config(MultipartConfig(max_total_size=5000))
    async with TestClient(router, ServerConfig(max_body_size=1000)) as client:
        response = await client.post("/u", content=_total_size(5000), headers=HEADERS)
        assert response.status_code == 200, response.text
        response = await client.post("/u", content=chunked(_total_size(5001), 512), headers=HEADERS)
        assert_error(response, 413, "max_total_size (5000")
