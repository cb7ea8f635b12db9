"""Where state shared between requests lives: ``MemoryStore`` (in the process, the default)
and ``RedisStore`` (in Redis or Valkey, shared by every worker and machine); ``Broadcast``
publishes messages through either."""

from __future__ import annotations

from .broadcast import Broadcast, Subscription
from .memory import MemoryStore
from .redis import RedisStore

__all__ = ["Broadcast", "MemoryStore", "RedisStore", "Subscription"]
