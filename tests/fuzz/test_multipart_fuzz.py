"""Fuzz target: the multipart decoder on mutated realistic bodies, fed in random chunkings.

Seeds are the bodies in ``corpus/multipart/*.bin`` (browser, curl and httpx style, RFC 8187
names, empty parts, many parts); each starts with its delimiter line, which gives the
boundary. A seed is mutated (another boundary, bit flips, inserted bytes and tokens,
deletions, truncation, duplicated delimiters) and decoded twice: whole, and cut into random
chunks.

The oracle:

* only ``BadRequest``, ``PayloadTooLarge`` and ``UnsupportedMediaType`` may escape (anything
  else would be a 500), also when a part's charset is resolved and its content decoded the
  way ``Field.text()`` does;
* the outcome does not depend on the chunking: the same parts (headers, names, content), or
  an error both ways (which rule refuses a broken body may depend on where it was cut), for
  every input; an unmutated seed always decodes;
* no single ``feed`` call takes pathological time (decoding is linear).

A second target feeds mutated request Content-Type values to ``boundary_of``.
"""

from __future__ import annotations

import contextlib
import pathlib
import time

from hypothesis import given
from hypothesis import strategies as st

from trioframe._errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from trioframe._multipart.charsets import text_codec
from trioframe._multipart.decoder import (
    MAX_BOUNDARY,
    Event,
    MultipartConfig,
    MultipartDecoder,
    PartData,
    PartStart,
    boundary_of,
)

from ._settings import fuzz_settings

CORPUS = pathlib.Path(__file__).parent / "corpus" / "multipart"
SEEDS = {path.name: path.read_bytes() for path in sorted(CORPUS.glob("*.bin"))}
EXPECTED = (BadRequest, PayloadTooLarge, UnsupportedMediaType)
#: CPU seconds: a feed of a few KiB takes well under a millisecond; quadratic work on it
#: would take seconds. (CPU time of this thread, so a loaded machine does not count.)
PATHOLOGICAL = 0.25
CONFIGS = [
    MultipartConfig(),
    MultipartConfig(
        max_fields=5,
        max_field_size=64,
        max_file_size=300,
        max_total_size=2048,
        max_part_header_size=128,
    ),
]
TOKENS = [
    b"\r\n", b"\r", b"\n", b"\r\n\r\n", b"--", b"-", b'"', b"\\", b'\\"', b";", b"=", b":",
    b" ", b"\t", b"*", b"*0=", b"*1*=", b"'", b"''", b"%", b"%0", b"%FF", b"%22", b"\x00",
    b"\x7f", b"\xff", b"\xc3", b"\xe5\x86\x99", b"form-data", b"; name=x", b'; filename="f"',
    b"; filename*=UTF-8''%E5%86%99", b"; name*0=a; name*1=b", b"; name*=x; name*0=y",
    b'Content-Disposition: form-data; name="d"\r\n',
    b"Content-Type: text/plain; charset=punycode\r\n",
    b"Content-Type: text/plain; charset*=UTF-8''utf-16\r\n",
]  # fmt: skip


def seed_boundary(seed: bytes) -> bytes:
    """The boundary of a seed: its first line without the leading ``--`` (and the trailing
    ``--`` of an empty form's closing delimiter)."""
    first_line = seed.split(b"\r\n", 1)[0]
    return first_line[2:].removesuffix(b"--")


#: Boundaries ``boundary_of`` can return: printable ASCII, space and HTAB (a quoted-string
#: carries no other control character), 1 to 70 characters.
BOUNDARIES = st.text(
    st.characters(min_codepoint=32, max_codepoint=126) | st.just("\t"),
    min_size=1,
    max_size=MAX_BOUNDARY,
)


@st.composite
def mutated_bodies(draw: st.DrawFn) -> tuple[bytes, bytes, bool]:
    """``(boundary, body, mutated)``: a seed, perhaps under another boundary, with up to
    five mutations."""
    seed = SEEDS[draw(st.sampled_from(sorted(SEEDS)))]
    boundary = seed_boundary(seed)
    new_boundary = draw(st.integers(0, 3)) == 0
    if new_boundary:  # odd ones too: "-", " ", a prefix of the content, ...
        other = draw(BOUNDARIES).encode()
        seed, boundary = seed.replace(boundary, other), other
    body = bytearray(seed)
    mutations = draw(st.integers(0, 5))
    for _ in range(mutations):
        kind = draw(st.sampled_from(["flip", "insert", "token", "delete", "truncate", "delim"]))
        pos = draw(st.integers(0, len(body)))
        if kind == "flip" and pos < len(body):
            body[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            body[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "token":
            body[pos:pos] = draw(st.sampled_from(TOKENS))
        elif kind == "delete":
            del body[pos : pos + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del body[pos:]
        elif kind == "delim":
            ending = draw(st.sampled_from([b"\r\n", b"--\r\n", b"--", b"", b" \r\n", b"\t\r\n"]))
            body[pos:pos] = b"\r\n--" + boundary + ending
    return boundary, bytes(body), new_boundary or mutations > 0


@st.composite
def chunkings(draw: st.DrawFn, size: int) -> list[int]:
    """Where to cut a body of ``size`` bytes: random points, or every ``n`` bytes."""
    if draw(st.booleans()):
        return sorted(set(draw(st.lists(st.integers(1, max(1, size - 1)), max_size=24))))
    step = draw(st.integers(1, 64))
    return list(range(step, size, step))


Part = tuple[PartStart, bytes]


def _collect(events: list[Event], parts: list[Part]) -> None:
    for event in events:
        if isinstance(event, PartStart):
            parts.append((event, b""))
        elif isinstance(event, PartData):
            start, content = parts[-1]
            parts[-1] = (start, content + event.data)


def _read_as_text(parts: list[Part]) -> None:
    """What ``Field.text()`` does with each part's charset and content."""
    for start, content in parts:
        codec = text_codec("utf-8" if start.charset is None else start.charset)
        if codec is not None:
            with contextlib.suppress(UnicodeDecodeError):  # Field.text() answers 400
                content.decode(codec)


def decode(
    boundary: bytes, body: bytes, cuts: list[int], config: MultipartConfig
) -> list[Part] | tuple[str, str]:
    """The parts, or the error (type and message), of ``body`` fed in pieces cut at ``cuts``."""
    parts: list[Part] = []
    decoder = MultipartDecoder(boundary, config)
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    try:
        for piece in pieces:
            started = time.thread_time()
            _collect(decoder.feed(piece), parts)
            elapsed = time.thread_time() - started
            assert elapsed < PATHOLOGICAL, f"feed of {len(piece)} bytes: {elapsed:.3f} s of CPU"
        _collect(decoder.finish(), parts)
    except EXPECTED as exc:
        return (type(exc).__name__, exc.message)
    _read_as_text(parts)
    return parts


@fuzz_settings(1100)
@given(st.data(), mutated_bodies(), st.sampled_from(CONFIGS))
def test_multipart_decoder(
    data: st.DataObject, case: tuple[bytes, bytes, bool], config: MultipartConfig
) -> None:
    boundary, body, mutated = case
    whole = decode(boundary, body, [], config)
    if not mutated and config == CONFIGS[0]:
        assert isinstance(whole, list), whole  # every seed is a valid body
    cuts = data.draw(chunkings(len(body)))
    chunked = decode(boundary, body, cuts, config)
    if isinstance(whole, list):
        assert chunked == whole
    else:  # which rule a broken body is refused under may depend on where it was cut
        assert not isinstance(chunked, list), (whole, chunked)


@st.composite
def content_types(draw: st.DrawFn) -> str:
    """A request Content-Type (as ``Headers`` gives it: ISO-8859-1): a realistic one, mutated."""
    value = draw(
        st.sampled_from(
            [
                "multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW",
                'multipart/form-data; boundary="a\'()+_,-./:=? Z"',
                "multipart/form-data; charset=utf-8; boundary*=UTF-8''x%41",
                "Multipart/Form-Data;Boundary=x;",
            ]
        )
    )
    for _ in range(draw(st.integers(0, 4))):
        pos = draw(st.integers(0, len(value)))
        if draw(st.booleans()):
            tokens = st.sampled_from([token.decode("latin-1") for token in TOKENS])
            insert = draw(tokens | st.text(st.characters(max_codepoint=255)))
            value = value[:pos] + insert + value[pos:]
        else:
            value = value[:pos] + value[pos + draw(st.integers(1, 8)) :]
    return value


@fuzz_settings(200)
@given(st.lists(content_types(), min_size=1, max_size=2))
def test_request_content_type(values: list[str]) -> None:
    try:
        boundary = boundary_of(values)
    except EXPECTED:
        return
    assert 0 < len(boundary) <= MAX_BOUNDARY
    assert boundary.isascii()
