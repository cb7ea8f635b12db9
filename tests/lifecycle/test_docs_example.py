"""The complete example of ``docs/lifecycle.md`` runs as documented."""

from __future__ import annotations

import pathlib
import re
from typing import Any

import trio
import trio.testing

from trioframe.testing import TestClient

DOC = pathlib.Path(__file__).parents[2] / "docs" / "lifecycle.md"


def load_example() -> dict[str, Any]:
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert code is not None
    namespace: dict[str, Any] = {"__name__": "lifecycle_example"}
    exec(compile(code[1], str(DOC), "exec"), namespace)
    return namespace


async def test_the_documented_example(autojump_clock: trio.testing.MockClock) -> None:
    example = load_example()
    databases: list[Any] = []

    class Recorded(example["Database"]):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            databases.append(self)

    example["Database"] = Recorded  # what the lifespan creates
    async with TestClient(example["router"]) as client:
        assert (await client.get("/items")).json() == ["apple", "pear"]
        await trio.sleep(3.5)  # the background task ticks every second (mock clock)
        async with client.stream("GET", "/ticks") as response:
            lines = response.aiter_lines()
            assert await anext(lines) == "event: tick"
            assert await anext(lines) == "data: 3"
        news = await client.get("/news")  # the long poll gives up after 30 s
        assert news.json() == {"news": [], "shutting_down": False}
        assert not databases[0].closed
    assert databases[0].closed  # the lifespan closed it on the way out
