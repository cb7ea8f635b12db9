"""Helpers for the HTTP/2 client tests: server configs, curl and h2load run as
subprocesses (bounded in time), and their output parsed."""

from __future__ import annotations

import re
from typing import Any

import attrs
import trio

from tests.tls._support import Certificates
from trioframe import ServerConfig

__all__ = [
    "CurlResult",
    "H2loadResult",
    "curl",
    "h2_config",
    "h2load",
    "parse_h2load",
    "tls_config",
]


def h2_config(**settings: Any) -> ServerConfig:
    """A cleartext server config with HTTP/2 (h2c prior knowledge) on."""
    return ServerConfig(http2=True, **settings)


def tls_config(certs: Certificates, *, http2: bool = True, **settings: Any) -> ServerConfig:
    """An HTTPS server config (HTTP/2 by ALPN unless ``http2`` is false)."""
    return ServerConfig(http2=http2, **settings).with_tls(certs.server_file, certs.server_file)


@attrs.frozen
class CurlResult:
    """What curl reported: the exit status, the version of the (last) response, its status
    and headers (lower-case names, every value), and the body."""

    returncode: int
    version: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    stderr: bytes

    def header(self, name: str) -> str | None:
        values = self.header_all(name)
        return values[0] if values else None

    def header_all(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]


def _parse_head(head: bytes) -> tuple[str, int, list[tuple[str, str]]]:
    status_line, *lines = head.decode("latin-1").split("\r\n")
    version, status, *_ = status_line.split(" ", 2)
    headers = []
    for line in lines:
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    return version, int(status), headers


async def curl(
    *args: str, max_time: float = 10.0, check: bool = True, include: bool = True
) -> CurlResult:
    """Run ``curl -sS -i ARGS``; the response curl printed (after any interim responses
    such as a 100 Continue, which are skipped). ``check``: curl must exit 0. ``include``
    false: no ``-i`` (pass ``-D -`` and ``-o FILE`` to have the head alone on stdout)."""
    command = ["curl", "-sS", *(["-i"] if include else []), "--max-time", str(max_time), *args]
    with trio.fail_after(max_time + 5):
        done = await trio.run_process(
            command, capture_stdout=True, capture_stderr=True, check=False
        )
    if check:
        assert done.returncode == 0, (command, done.returncode, done.stderr)
    output = done.stdout
    version, status, headers = "", 0, list[tuple[str, str]]()
    while output.startswith(b"HTTP/"):
        head, _, output = output.partition(b"\r\n\r\n")
        version, status, headers = _parse_head(head)
        if not 100 <= status < 200:
            break
    return CurlResult(done.returncode, version, status, headers, output, done.stderr)


@attrs.frozen
class H2loadResult:
    """The counts of ``h2load``'s summary."""

    protocol: str
    total: int
    done: int
    succeeded: int
    failed: int
    errored: int
    timeout: int
    status_2xx: int
    status_3xx: int
    status_4xx: int
    status_5xx: int
    #: response body bytes received, all requests together
    data_bytes: int
    output: str


_REQUESTS = re.compile(
    r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, "
    r"(\d+) errored, (\d+) timeout"
)
_STATUSES = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
_DATA = re.compile(r"traffic: .*\((\d+)\) data")
_PROTOCOL = re.compile(r"Application protocol: (\S+)")


def parse_h2load(output: str) -> H2loadResult:
    """``h2load``'s summary as numbers (``AssertionError`` if a line is missing)."""
    requests = _REQUESTS.search(output)
    statuses = _STATUSES.search(output)
    protocol = _PROTOCOL.search(output)
    data = _DATA.search(output)
    assert requests and statuses and protocol and data, output
    total, done, succeeded, failed, errored, timeout = map(int, requests.groups())
    s2, s3, s4, s5 = map(int, statuses.groups())
    return H2loadResult(
        protocol[1], total, done, succeeded, failed, errored, timeout, s2, s3, s4, s5,
        int(data[1]), output,
    )  # fmt: skip


async def h2load(url: str, *args: str, limit: float = 60.0) -> H2loadResult:
    """Run ``h2load ARGS URL`` (a connection silent for 20 s is given up; the whole run is
    bounded by ``limit`` seconds); its summary."""
    command = ["h2load", "--connection-inactivity-timeout=20", *args, url]
    with trio.fail_after(limit):
        done = await trio.run_process(command, capture_stdout=True, capture_stderr=True)
    return parse_h2load(done.stdout.decode())
