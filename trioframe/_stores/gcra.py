"""The rate limit's algorithm, GCRA (the generic cell rate algorithm), written twice: in
Python for ``MemoryStore`` and in Lua for ``RedisStore``, with the same integer arithmetic
so both stores take the same decisions for the same sequence of requests.

Each key keeps one number, its theoretical arrival time ``tat`` (microseconds): when the
key's allowance would be full again. A request at ``now`` is allowed when
``max(tat, now) + interval - period <= now``; then ``tat`` becomes ``max(tat, now) +
interval`` and the key expires when it would be full again. ``period / interval`` requests
pass at once (the burst), then one every ``interval``. A refused request changes nothing.

Integers only: microsecond timestamps stay exact in Lua's doubles (below 2**53), so the two
implementations agree to the microsecond.
"""

from __future__ import annotations

import hashlib

from .base import Rate

__all__ = ["LUA", "LUA_SHA", "decide"]


def decide(tat: int | None, now: int, interval: int, period: int) -> tuple[Rate, int | None]:
    """The decision for a request at ``now`` on a key whose stored ``tat`` is ``tat``
    (``None``: nothing stored), and the ``tat`` to store (``None``: leave it as it is)."""
    start = now if tat is None or tat < now else tat
    new_tat = start + interval
    allow_at = new_tat - period
    if allow_at > now:
        return Rate(False, 0, start - now, allow_at - now), None
    return Rate(True, (period - (new_tat - now)) // interval, new_tat - now, 0), new_tat


#: KEYS[1]: the key. ARGV: interval, period (microseconds). The time is the server's
#: (``TIME``), so instances whose clocks disagree still agree on every key; ``RedisStore``
#: never passes ARGV[3], a time the tests give to compare the two implementations. Returns
#: {allowed (0/1), remaining, reset_us, retry_us}. ``PEXPIRE`` rounds up to whole
#: milliseconds, so a key never expires before it would be full again.
LUA = """
local interval = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if now == nil then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local tat = tonumber(redis.call('GET', KEYS[1]))
local start = now
if tat ~= nil and tat > now then
    start = tat
end
local new_tat = start + interval
local allow_at = new_tat - period
if allow_at > now then
    return {0, 0, start - now, allow_at - now}
end
local reset = new_tat - now
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil(reset / 1000))
return {1, math.floor((period - reset) / interval), reset, 0}
"""
#: What ``EVALSHA`` names the script by.
LUA_SHA = hashlib.sha1(LUA.encode()).hexdigest()
