"""Where state shared between requests lives: ``MemoryStore`` (in the process, the default)
and ``RedisStore`` (in Redis or Valkey, shared by every worker and machine)."""

from __future__ import annotations

from .memory import MemoryStore
from .redis import RedisStore

__all__ = ["MemoryStore", "RedisStore"]
