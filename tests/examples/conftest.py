"""The examples' fixtures: ``redis_server`` for the chat over Redis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..stores.redis_server import RedisServer, redis_server_fixture


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    yield from redis_server_fixture(tmp_path)
