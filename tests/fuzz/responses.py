"""A strict parser of the server's side of an HTTP/1.1 connection, for the fuzz oracle.

``parse_responses(output, methods)`` cuts the bytes the server sent into responses and
raises ``MalformedOutput`` at the first thing a strict client would not accept: a bad status
line, a reason phrase other than the standard one, a field line that is not ``name: value``
with a token name and a clean value, ambiguous framing (``Content-Length`` with
``Transfer-Encoding``, two lengths), a broken chunked body, or bytes after the end of the
output. Body framing follows RFC 9112 6.3; ``methods`` names the request each final
response answers, since a response to ``HEAD`` has no body.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from http import HTTPStatus

import attrs

__all__ = ["MalformedOutput", "ServerResponse", "parse_responses"]

_STATUS_LINE = re.compile(rb"HTTP/1\.1 ([1-5][0-9][0-9]) ([\x20-\x7e]*)")
_FIELD_LINE = re.compile(
    rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+): ([\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?"
)
_CHUNK_SIZE_LINE = re.compile(rb"[0-9A-Fa-f]{1,16}")


class MalformedOutput(AssertionError):
    """The server's output is not a well-formed sequence of HTTP/1.1 responses."""


@attrs.frozen
class ServerResponse:
    """One final response (``interim``: the 1xx statuses sent before it)."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]  # names lower-case
    body: bytes
    interim: tuple[int, ...]
    truncated: bool  # the output ended inside its body (a close-delimited body is never)

    def header(self, name: bytes) -> bytes | None:
        """The value of the one field ``name`` (lower-case), or ``None``."""
        found = [value for field, value in self.headers if field == name]
        return found[0] if found else None

    @property
    def closes(self) -> bool:
        """True when the response says ``Connection: close``."""
        value = self.header(b"connection")
        return value is not None and b"close" in value.lower().split(b",")


def parse_responses(
    output: bytes, methods: Sequence[str]
) -> tuple[list[ServerResponse], tuple[int, ...]]:
    """Every final response in ``output``, and the interim (1xx) statuses after the last one.
    The i-th final response answers a ``methods[i]`` request (a request past the end of
    ``methods`` is taken as not ``HEAD``)."""
    responses: list[ServerResponse] = []
    pos = 0
    interim: list[int] = []
    while pos < len(output):
        status, headers, pos = _head(output, pos)
        if status < 200:
            if headers:
                raise MalformedOutput(f"{status} with header fields {headers!r}")
            interim.append(status)
            continue
        method = methods[len(responses)] if len(responses) < len(methods) else "GET"
        body, pos, truncated = _body(output, pos, status, headers, method)
        responses.append(ServerResponse(status, headers, body, tuple(interim), truncated))
        interim = []
    return responses, tuple(interim)


def _head(output: bytes, pos: int) -> tuple[int, tuple[tuple[bytes, bytes], ...], int]:
    end = output.find(b"\r\n\r\n", pos)
    if end == -1:
        raise MalformedOutput(f"output ends inside a response head: {output[pos:]!r}")
    lines = output[pos:end].split(b"\r\n")
    status_line = _STATUS_LINE.fullmatch(lines[0])
    if status_line is None:
        raise MalformedOutput(f"bad status line {lines[0]!r}")
    status = int(status_line.group(1))
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        raise MalformedOutput(f"unregistered status {status}") from None
    if status_line.group(2).decode() != phrase:
        raise MalformedOutput(f"reason {status_line.group(2)!r} for {status}")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        field = _FIELD_LINE.fullmatch(line)
        if field is None:
            raise MalformedOutput(f"bad field line {line!r} in the {status} response")
        headers.append((field.group(1).lower(), field.group(2) or b""))
    return status, tuple(headers), end + 4


def _body(
    output: bytes, pos: int, status: int, headers: tuple[tuple[bytes, bytes], ...], method: str
) -> tuple[bytes, int, bool]:
    lengths = [value for name, value in headers if name == b"content-length"]
    codings = [value for name, value in headers if name == b"transfer-encoding"]
    if len(lengths) > 1 or (lengths and not lengths[0].isdigit()):
        raise MalformedOutput(f"Content-Length {lengths!r} in the {status} response")
    if lengths and codings:
        raise MalformedOutput(f"the {status} response has Content-Length and Transfer-Encoding")
    if codings and codings != [b"chunked"]:
        raise MalformedOutput(f"Transfer-Encoding {codings!r} in the {status} response")
    if status == 204 and (codings or lengths):
        raise MalformedOutput("a 204 response with Content-Length or Transfer-Encoding")
    if status in (204, 304) or method == "HEAD":  # framing fields of a GET are allowed
        return b"", pos, False
    if codings:
        return _chunked(output, pos)
    if lengths:
        end = pos + int(lengths[0])
        return output[pos:end], min(end, len(output)), end > len(output)
    return output[pos:], len(output), False  # delimited by the close


def _chunked(output: bytes, pos: int) -> tuple[bytes, int, bool]:
    chunks: list[bytes] = []
    while True:
        line_end = output.find(b"\r\n", pos)
        if line_end == -1:
            return b"".join(chunks), len(output), True
        size_line = output[pos:line_end]
        if not _CHUNK_SIZE_LINE.fullmatch(size_line):
            raise MalformedOutput(f"bad chunk size line {size_line!r}")
        size = int(size_line, 16)
        pos = line_end + 2
        if size == 0:
            if output[pos : pos + 2] == b"\r\n":
                return b"".join(chunks), pos + 2, False
            if len(output) < pos + 2 and b"\r\n".startswith(output[pos:]):
                return b"".join(chunks), len(output), True
            raise MalformedOutput(f"trailer or junk after the last chunk: {output[pos:]!r}")
        if len(output) < pos + size + 2:
            return b"".join(chunks), len(output), True
        if output[pos + size : pos + size + 2] != b"\r\n":
            raise MalformedOutput("chunk data not followed by CRLF")
        chunks.append(output[pos : pos + size])
        pos += size + 2
