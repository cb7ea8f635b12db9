"""TLS for the server: the ``ssl.SSLContext`` a config asks for, and the handshake.

Three ways to ask (``ServerConfig.tls``): certificate and key files (``TLSFiles``, optionally
with a CA that client certificates must chain to: mutual TLS), a development certificate made
in memory (``SelfSigned``, the ``self-signed`` extra: trustme), or a ready ``ssl.SSLContext``.
Contexts built here require TLS 1.2 or later and turn compression and renegotiation off
(OR-ed into the options the ssl module starts with, so its own safe defaults stay). ALPN
offers ``h2`` (when HTTP/2 is on) and ``http/1.1``; it is set on a given context too.

The handshake runs in the connection's own task, bounded by ``tls_handshake_timeout`` (see
``streams.py``), so a slow or silent client only ever delays itself; a failed handshake is one
debug log line.
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
from typing import Any

import attrs
import trio

from .._errors import ConfigurationError
from .._http.tls import TLSInfo

__all__ = [
    "SelfSigned",
    "TLSFiles",
    "handshake",
    "memory_tls_contexts",
    "self_signed_files",
    "server_context",
    "tls_info",
]

log = logging.getLogger("trioframe")

ALPN_HTTP1 = "http/1.1"
ALPN_H2 = "h2"


@attrs.frozen
class TLSFiles:
    """A certificate chain and its private key, as PEM files; ``client_ca``: a CA bundle that
    client certificates must chain to (mutual TLS: a client without one is refused)."""

    cert_file: str
    key_file: str
    client_ca: str | None = None


@attrs.frozen
class SelfSigned:
    """A development certificate for ``hosts``, made in memory at startup by a throwaway CA
    whose certificate is written to a file (its path is logged) for clients to trust."""

    hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")


def server_context(
    setting: TLSFiles | SelfSigned | ssl.SSLContext, *, http2: bool
) -> ssl.SSLContext:
    """The server-side context for ``setting``. Raises ``ConfigurationError`` for files that
    cannot be loaded or a missing extra."""
    protocols = [ALPN_H2, ALPN_HTTP1] if http2 else [ALPN_HTTP1]
    if isinstance(setting, ssl.SSLContext):
        setting.set_alpn_protocols(protocols)
        return setting
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= ssl.OP_NO_COMPRESSION | ssl.OP_NO_RENEGOTIATION
    context.set_alpn_protocols(protocols)
    if isinstance(setting, SelfSigned):
        _self_signed(context, setting.hosts)
        return context
    _load_files(context, setting)
    return context


def _load_files(context: ssl.SSLContext, setting: TLSFiles) -> None:
    """Load ``setting`` into ``context``; a ``ConfigurationError`` names the file at fault
    (``ssl`` itself does not say which of the two it could not read)."""
    files = [("certificate", setting.cert_file), ("key", setting.key_file)]
    if setting.client_ca is not None:
        files.append(("client CA", setting.client_ca))
    for role, path in files:
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ConfigurationError(f"cannot load the TLS {role} {path}: {reason}") from None
    try:
        context.load_cert_chain(setting.cert_file, setting.key_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(
            f"cannot load the TLS certificate {setting.cert_file} with the key "
            f"{setting.key_file}: {exc}"
        ) from None
    if setting.client_ca is not None:
        try:
            context.load_verify_locations(setting.client_ca)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigurationError(
                f"cannot load the TLS client CA {setting.client_ca}: {exc}"
            ) from None
        context.verify_mode = ssl.CERT_REQUIRED


def _self_signed(context: ssl.SSLContext, hosts: tuple[str, ...]) -> None:
    authority = _development_ca()
    authority.issue_cert(*hosts).configure_cert(context)
    _announce_ca(authority, hosts)


def self_signed_files(hosts: tuple[str, ...]) -> tuple[str, str]:
    """A development certificate for ``hosts`` written to files (chain, key) that several
    processes can load: the worker fleet shares one certificate."""
    authority = _development_ca()
    certificate = authority.issue_cert(*hosts)
    paths = []
    for blob, suffix in (
        (b"".join(pem.bytes() for pem in certificate.cert_chain_pems), "-chain.pem"),
        (certificate.private_key_pem.bytes(), "-key.pem"),
    ):
        fd, path = tempfile.mkstemp(prefix="trioframe-dev", suffix=suffix)
        with os.fdopen(fd, "wb") as file:
            file.write(blob)
        paths.append(path)
    _announce_ca(authority, hosts)
    return paths[0], paths[1]


def _development_ca() -> Any:
    try:
        import trustme
    except ImportError:
        raise ConfigurationError(
            "a self-signed certificate needs trustme: pip install 'trioframe[self-signed]'"
        ) from None
    return trustme.CA(organization_name="trioframe development CA")


def _announce_ca(authority: Any, hosts: tuple[str, ...]) -> None:
    fd, path = tempfile.mkstemp(prefix="trioframe-dev-ca-", suffix=".pem")
    with os.fdopen(fd, "wb") as file:
        file.write(authority.cert_pem.bytes())
    log.warning(
        "serving a self-signed certificate for %s; clients can trust its CA with: "
        "curl --cacert %s (development only)",
        ", ".join(hosts),
        path,
    )


async def handshake(
    stream: trio.abc.Stream, context: ssl.SSLContext, client: str
) -> trio.SSLStream[trio.abc.Stream] | None:
    """Run the server side of the TLS handshake on ``stream``. Returns the TLS stream, or
    ``None`` after closing ``stream`` when the handshake failed (logged at debug level: a port
    scanner or a plain-HTTP client is not an error). The caller bounds the time with a cancel
    scope (``tls_handshake_timeout``); cancellation closes the stream."""
    tls = trio.SSLStream(stream, context, server_side=True, https_compatible=True)
    try:
        await tls.do_handshake()
        return tls
    except trio.BrokenResourceError as exc:
        log.debug("TLS handshake with %s failed: %s", client, exc.__cause__ or exc)
    except BaseException:
        await trio.aclose_forcefully(tls)
        raise
    await trio.aclose_forcefully(tls)
    return None


def tls_info(stream: trio.SSLStream[trio.abc.Stream]) -> TLSInfo:
    """The negotiated parameters of an established TLS stream."""
    cipher = stream.cipher()
    der = stream.getpeercert(binary_form=True)
    return TLSInfo(
        version=stream.version(),
        alpn_protocol=stream.selected_alpn_protocol(),
        cipher=cipher[0] if cipher else None,
        client_certificate=dict(stream.getpeercert() or {}) if der else None,
        client_certificate_der=der,
    )


def memory_tls_contexts(hostname: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for ``hostname`` from a throwaway CA, and a client
    context that trusts that CA: TLS for the in-memory test client (the ``self-signed``
    extra, trustme)."""
    try:
        import trustme
    except ImportError:
        raise ConfigurationError(
            "TestClient(tls=True) needs trustme: pip install 'trioframe[self-signed]'"
        ) from None
    authority = trustme.CA(organization_name="trioframe test CA")
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.minimum_version = ssl.TLSVersion.TLSv1_2
    authority.issue_cert(hostname).configure_cert(server)
    client = ssl.create_default_context()
    authority.configure_trust(client)
    client.set_alpn_protocols([ALPN_HTTP1])
    return server, client
