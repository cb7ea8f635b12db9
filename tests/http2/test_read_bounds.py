"""The work one read can start: whatever frames a 64 KiB read holds, the server handles it in
time linear in its frames."""

from __future__ import annotations

from typing import Any

import h2.connection
import pytest
import trio
import trio.testing

from tests.http2.lab import Lab, router
from tests.http2.support import connect, connections, h2_config, h2_server, request_fields


async def test_new_streams_cost_linear_time_in_h2s_stream_table(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    # h2 counts the open streams for every new one by walking its whole stream table (and
    # dropping the closed streams from it). Walked for each of N new streams, that is N * N
    # steps for one read; the server walks it only once the table has doubled.
    count = 2000
    visited = 0
    walk = h2.connection.H2Connection._open_streams

    def counted(self: h2.connection.H2Connection, remainder: int) -> Any:
        nonlocal visited
        visited += len(self.streams)
        return walk(self, remainder)

    monkeypatch.setattr(h2.connection.H2Connection, "_open_streams", counted)
    config = h2_config(max_concurrent_streams=10 * count, max_requests_per_connection=10 * count)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        fields = request_fields(b"GET", b"/")
        await peer.send(b"".join(peer.headers_frame(2 * i + 1, fields) for i in range(count)))
        await peer.until(lambda: sum(r.ended for r in peer.streams.values()) == count)
        assert visited <= 4 * count  # N * N / 2 = 2,000,000 when walked for every stream
        (connection,) = connections(server)
        await peer.send(peer.headers_frame(2 * count + 1, fields))
        assert (await peer.response(2 * count + 1)).status == 200
        assert len(connection.adapter._h2.streams) <= 2 * count + 64  # dropped now and then
