from __future__ import annotations

import pathlib

import pytest

from tests.tls._support import Certificates, make_certificates


@pytest.fixture
def certs(tmp_path: pathlib.Path) -> Certificates:
    return make_certificates(tmp_path)
