"""The stores' fixtures: ``redis_server``, a real ``redis-server`` per test."""

from __future__ import annotations

from .redis_fixture import redis_server

__all__ = ["redis_server"]
