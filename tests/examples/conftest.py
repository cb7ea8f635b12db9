"""The examples' fixtures: ``redis_server`` for the chat over Redis."""

from __future__ import annotations

from ..stores.redis_fixture import redis_server

__all__ = ["redis_server"]
