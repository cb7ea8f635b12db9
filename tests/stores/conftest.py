"""The ``redis_server`` fixture: a real redis-server for the test (see redis_server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .redis_server import RedisServer, redis_server_fixture


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    yield from redis_server_fixture(tmp_path)
