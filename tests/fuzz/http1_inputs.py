"""Inputs for the HTTP/1.1 fuzz target: the seed corpus, a structured request generator,
byte-level mutations and the client's write patterns, as hypothesis strategies.

``connection_inputs()`` draws a ``ConnectionInput``: a byte stream (a seed, generated
requests, or both, then mutated), a write pattern, whether the client closes its sending
side at the end, and the handler's behaviours.
"""

from __future__ import annotations

import pathlib

from hypothesis import strategies as st

from tests.fuzz.http1_harness import Behaviour, ConnectionInput

__all__ = ["CORPUS", "connection_inputs", "generated_requests", "streams"]

CORPUS_DIR = pathlib.Path(__file__).parent / "corpus" / "http1"
#: The seed corpus: every ``*.http`` file, by name.
CORPUS = {path.stem: path.read_bytes() for path in sorted(CORPUS_DIR.glob("*.http"))}

# -- the structured generator -------------------------------------------------------------------
# Each vocabulary is one strategy, built once. Repeated entries weigh a choice; hypothesis
# shrinks towards the first entry.
_METHODS = st.sampled_from(
    b"GET POST GET POST PUT HEAD DELETE OPTIONS PATCH TRACE CONNECT BREW get G@T".split()
)
_TARGETS = st.sampled_from(
    [
        b"/",
        b"/a",
        b"/echo?x=1&y=%41",
        b"/%7e/p;q",
        b"http://t/abs?z",
        b"https://t:8443",
        b"/a|b",
        b"/{x}",
        b"/%zz",
        b"*",
        b"t:80",
        b"//",
        b"/?",
        b"http://u@t/",
        b"/\x80",
        b"/a#f",
        b"/a%00",
        b"/?q=%00",
        b"http://u/abs",
    ]
)
_VERSIONS = st.sampled_from(
    [b"HTTP/1.1"] * 6 + [b"HTTP/1.0", b"HTTP/1.2", b"HTTP/2.0", b"http/1.1", b"HTTP/1.10"]
)
_HOSTS = st.sampled_from([b"t", b"t", b"t:8080", b"[::1]:80", b"", b"t t", b"t@u", b"t:x"])
_BODIES = st.sampled_from(
    [
        b"",
        b"hello",
        b"x" * 33,
        b"0\r\n\r\n",
        b"GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
        b"\r\n",
        b"a" * 600,
        b"\x00\xff\r\n \t;:",
    ]
)
_EXTENSIONS = st.sampled_from(
    [
        b"",
        b"",
        b";a",
        b";a=b",
        b';a="q \\" s"',
        b";a;b=c",
        b" ;a",
        b";a =b",
        b" ",
        b"\t",
        b";a\rb",
        b";a=\x00",
        b";\x7f",
        b";",
        b";a=",
        b'";a"',
        b"x",
    ]
)
_LAST_CHUNKS = st.sampled_from([b"0", b"0", b"000"])
_TRAILERS = st.sampled_from(
    [
        b"",
        b"",
        b"X-Sum: 5\r\n",
        b"A: 1\r\nB: 2\r\n",
        b"X: y\n",
        b"X: y\r\n folded\r\n",
        b"X: a\x01b\r\n",
        b"Content-Length: 9\r\n",
        b"X y\r\n",
        b"X : y\r\n",
    ]
)
_SIZE_FORMATS = st.sampled_from([b"%x", b"%x", b"%X", b"0%x", b"%x ", b" %x", b"0x%x", b"+%x"])
_FIELDS = st.sampled_from(
    [
        (b"Accept", b"*/*"),
        (b"X-Empty", b""),
        (b"X-Obs", b"caf\xe9"),
        (b"Cookie", b"a=b"),
        (b"Connection", b"close"),
        (b"Connection", b"keep-alive"),
        (b"Expect", b"fancy"),
        (b"Upgrade", b"websocket"),
        (b"Connection", b"Upgrade"),
        (b"X", b"a" * 300),
        (b"Transfer-Encoding", b"chunked"),
        (b"Content-Length", b"3"),
        (b"Host", b"t"),
    ]
)
_TE_VALUES = st.sampled_from(
    [b"chunked"] * 4
    + [
        b"Chunked",
        b"chunked, identity",
        b"xchunked",
        b"\tchunked",
        b"chunked\t",
        b"gzip, chunked",
        b"chunked, chunked",
        b" chunked ,",
        b"chunked\x00",
    ]
)
_BAD_LENGTHS = st.sampled_from([b"-1", b"1_0", b"5, 5", b" ", b"0x5", b"9" * 30])
_SEPARATORS = st.sampled_from([b": "] * 6 + [b":", b":\t", b" : ", b"\t: ", b":  ", b"::"])
_LINE_ENDS = st.sampled_from([b"\r\n"] * 12 + [b"\n", b"\r", b"\r\r\n", b"\n\r"])
_FRAMINGS = st.sampled_from(
    ["length", "chunked", "none", "length", "chunked", "both", "lengths", "bad length"]
)


def _chunked(draw: st.DrawFn, body: bytes) -> bytes:
    """``body`` as chunks, with extensions, size formats and a trailer section drawn."""
    sizes = draw(st.lists(st.integers(1, 40), max_size=4))
    encoded = b""
    at = 0
    for size in sizes:
        piece = body[at : at + size]
        if not piece:
            break
        at += len(piece)
        size_text = draw(_SIZE_FORMATS) % len(piece)
        encoded += size_text + draw(_EXTENSIONS) + b"\r\n" + piece + b"\r\n"
    if at < len(body):
        encoded += b"%x\r\n" % (len(body) - at) + body[at:] + b"\r\n"
    last = draw(_LAST_CHUNKS) + draw(_EXTENSIONS)
    return encoded + last + b"\r\n" + draw(_TRAILERS) + b"\r\n"


@st.composite
def generated_requests(draw: st.DrawFn) -> bytes:
    """One request built from parts: request line, fields, framing and body."""
    method = draw(_METHODS)
    target = draw(_TARGETS)
    version = draw(_VERSIONS)
    body = draw(_BODIES)
    fields: list[tuple[bytes, bytes]] = []
    if draw(st.integers(0, 9)):
        fields.append((b"Host", draw(_HOSTS)))
    framing = draw(_FRAMINGS)
    if framing in ("length", "both", "lengths"):
        fields.append((b"Content-Length", b"%d" % len(body)))
    if framing == "lengths":
        fields.append((b"Content-Length", b"%d" % draw(st.integers(0, len(body) + 2))))
    if framing == "bad length":
        fields.append((b"Content-Length", draw(_BAD_LENGTHS)))
    if framing in ("chunked", "both"):
        fields.append((b"Transfer-Encoding", draw(_TE_VALUES)))
    if draw(st.integers(0, 5)) == 0:
        fields.append((b"Expect", b"100-continue"))
    fields += draw(st.lists(_FIELDS, max_size=3))
    fields = draw(st.permutations(fields))
    line_end = draw(_LINE_ENDS)
    head = method + b" " + target + b" " + version + line_end
    for name, value in fields:
        head += name + draw(_SEPARATORS) + value + line_end
    head += line_end
    if framing in ("chunked", "both"):
        return head + _chunked(draw, body)
    return head + body


# -- mutations ----------------------------------------------------------------------------------
_INSERTS = st.sampled_from(
    [
        b"\r",
        b"\n",
        b"\r\n",
        b" ",
        b"\t",
        b"\x00",
        b";",
        b":",
        b"\x7f",
        b",",
        b'"',
        b"0",
        b"\r\n\r\n",
        b"\xff",
        b"\r\n ",
        b"\n\n",
        b"Transfer-Encoding: chunked\r\n",
    ]
)
_MUTATIONS = st.sampled_from(["insert", "flip", "delete", "duplicate", "truncate", "replace"])


def _mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` after up to four byte-level mutations."""
    out = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(_MUTATIONS)
        at = draw(st.integers(0, len(out)))
        if kind == "insert":
            out[at:at] = draw(_INSERTS)
        elif kind == "replace" and at < len(out):
            out[at : at + 1] = draw(_INSERTS)
        elif kind == "flip" and at < len(out):
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete":
            del out[at : at + draw(st.integers(1, 8))]
        elif kind == "duplicate":
            size = draw(st.integers(1, 64))
            out[at:at] = out[at : at + size]
        elif kind == "truncate":
            del out[at:]
    return bytes(out)


_SEEDS = st.sampled_from(sorted(CORPUS)).map(CORPUS.__getitem__)
_GENERATED = st.lists(generated_requests(), min_size=1, max_size=3).map(b"".join)
_SOURCES = st.sampled_from(["seed", "generated", "seed then generated"])


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    """A client's byte stream: a seed, generated requests, or both; then mutated."""
    source = draw(_SOURCES)
    if source == "seed":
        data = draw(_SEEDS)
    elif source == "generated":
        data = draw(_GENERATED)
    else:
        data = draw(_SEEDS) + draw(_GENERATED)
    return _mutated(draw, data)


_WRITES = st.one_of(
    st.just(()), st.just((1,)), st.lists(st.integers(1, 48), min_size=1, max_size=6).map(tuple)
)


def connection_inputs() -> st.SearchStrategy[ConnectionInput]:
    """Whole fuzz cases."""
    return st.builds(
        ConnectionInput,
        data=streams(),
        writes=_WRITES,
        close_write=st.booleans(),
        behaviours=st.lists(st.sampled_from(Behaviour), min_size=1, max_size=3).map(tuple),
    )
