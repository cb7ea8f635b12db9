"""The server's TLS contexts and the config API that asks for them (no sockets)."""

from __future__ import annotations

import pathlib
import ssl
import sys

import pytest

from trioframe import ConfigurationError, ServerConfig
from trioframe._server.tls import SelfSigned, TLSFiles, server_context

from ._support import Certificates


def test_a_context_from_files_is_tls_1_2_or_later_without_compression_or_renegotiation(
    certs: Certificates,
) -> None:
    baseline = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).options
    context = server_context(TLSFiles(str(certs.server_file), str(certs.server_file)), http2=False)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert context.options & ssl.OP_NO_COMPRESSION
    assert context.options & ssl.OP_NO_RENEGOTIATION
    assert context.options & baseline == baseline  # OR-ed in: the ssl module's own options stay
    assert context.verify_mode == ssl.CERT_NONE


def test_client_ca_asks_every_client_for_a_certificate(certs: Certificates) -> None:
    files = TLSFiles(str(certs.server_file), str(certs.server_file), str(certs.ca_file))
    assert server_context(files, http2=False).verify_mode == ssl.CERT_REQUIRED


def test_a_given_context_is_used_as_it_is(certs: Certificates) -> None:
    mine = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    mine.load_cert_chain(str(certs.server_file))
    assert server_context(mine, http2=False) is mine


def test_self_signed_without_trustme_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trustme", None)  # "import trustme" now fails
    with pytest.raises(ConfigurationError, match=r"trioframe\[self-signed\]"):
        server_context(SelfSigned(), http2=False)


def test_with_tls_and_with_self_signed_build_the_setting(certs: Certificates) -> None:
    base = ServerConfig()
    assert base.with_tls("c.pem", "k.pem").tls == TLSFiles("c.pem", "k.pem")
    assert base.with_tls(certs.server_file, certs.server_file, client_ca=certs.ca_file).tls == (
        TLSFiles(str(certs.server_file), str(certs.server_file), str(certs.ca_file))
    )
    assert ServerConfig(tls=("c.pem", "k.pem")).tls == TLSFiles("c.pem", "k.pem")
    assert base.with_self_signed(["example.test"]).tls == SelfSigned(("example.test",))
    assert base.with_self_signed().tls == SelfSigned()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    assert base.with_tls(context).tls is context


def test_with_tls_refuses_half_a_setting() -> None:
    with pytest.raises(ValueError, match="key file"):
        ServerConfig().with_tls("c.pem")
    with pytest.raises(ValueError, match="takes no key_file"):
        ServerConfig().with_tls(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER), "k.pem")


def test_a_missing_certificate_or_key_file_is_named(
    certs: Certificates, tmp_path: pathlib.Path
) -> None:
    missing = str(tmp_path / "missing.pem")
    present = str(certs.server_file)
    for files, named in [
        (TLSFiles(missing, present), f"cannot load the TLS certificate {missing}: "),
        (TLSFiles(present, missing), f"cannot load the TLS key {missing}: "),
        (TLSFiles(present, present, missing), f"cannot load the TLS client CA {missing}: "),
    ]:
        with pytest.raises(ConfigurationError) as info:
            server_context(files, http2=False)
        assert str(info.value) == named + "No such file or directory"


def test_a_file_that_is_no_certificate_names_both_files(
    certs: Certificates, tmp_path: pathlib.Path
) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    with pytest.raises(ConfigurationError) as info:
        server_context(TLSFiles(str(garbage), str(certs.server_file)), http2=False)
    assert str(info.value).startswith(
        f"cannot load the TLS certificate {garbage} with the key {certs.server_file}: "
    )
