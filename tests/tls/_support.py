"""Certificates for the TLS tests (trustme, made in a temporary directory), and a raw
loopback connection helper."""

from __future__ import annotations

import pathlib
import ssl

import attrs
import trustme


@attrs.frozen
class Certificates:
    """A CA, a server certificate for localhost/127.0.0.1 (chain and key in one PEM file),
    and a client certificate from the same CA (for mutual TLS)."""

    ca: trustme.CA
    ca_file: pathlib.Path
    server_file: pathlib.Path
    client_file: pathlib.Path

    def client_context(self, *, with_certificate: bool = False) -> ssl.SSLContext:
        """A client context trusting the CA, optionally presenting the client certificate."""
        context = ssl.create_default_context(cafile=str(self.ca_file))
        if with_certificate:
            context.load_cert_chain(str(self.client_file))
        return context


def make_certificates(directory: pathlib.Path) -> Certificates:
    ca = trustme.CA()
    ca_file = directory / "ca.pem"
    server_file = directory / "server.pem"
    client_file = directory / "client.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    ca.issue_cert("localhost", "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
        str(server_file)
    )
    ca.issue_cert("ada@example.org").private_key_and_cert_chain_pem.write_to_path(str(client_file))
    return Certificates(ca, ca_file, server_file, client_file)
