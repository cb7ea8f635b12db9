"""``Router.static`` against a symlink out of the directory swapped in over a file inside:
no byte of the file outside is ever served.

A server that checks a path and then opens it by name again serves the outside file whenever
the swap falls between the two. Here the swap lands once at the worst moment, just before
the open (deterministic), and then in a loop from another process while clients request the
file (each swap one atomic ``os.replace``), on the in-memory path (the file read in chunks)
and over a loopback socket (``os.sendfile``). The swapped thing is the file itself, or a
directory on its path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath

import attrs
import pytest
import trio

from trioframe import Router
from trioframe.testing import TestClient

from ..loopback._support import RawConnection, serving, simple_get
from .test_file_loopback import counting_sendfile

PUBLIC = b"public " * 200
SECRET = b"SECRET! " * 300
#: How long requests race the swaps, each way (real time).
RACE_SECONDS = 1.5
CLIENTS = 4


@attrs.frozen
class Scene:
    """The served directory, what a request names, and the two versions of ``swapped``
    renamed over it in turn: each a hard link to a regular file (``Path``) or a symlink to
    a target (``str``)."""

    site: Path
    path: str
    swapped: Path
    inside: Path | str
    outside: Path | str


@pytest.fixture(params=["a file", "a directory on the way"])
def scene(request: pytest.FixtureRequest, tmp_path: Path) -> Scene:
    site, outside = tmp_path / "site", tmp_path / "outside"
    (site / "real").mkdir(parents=True)
    outside.mkdir()
    (outside / "race.txt").write_bytes(SECRET)
    (site / "real" / "race.txt").write_bytes(PUBLIC)
    if request.param == "a file":  # a regular file, then a symlink to the secret over it
        public = tmp_path / "public.txt"
        public.write_bytes(PUBLIC)
        return Scene(site, "/static/race.txt", site / "race.txt", public, f"{outside}/race.txt")
    # a symlink to a directory inside, then one to the directory outside
    return Scene(site, "/static/dir/race.txt", site / "dir", "real", str(outside))


#: The swapping loop, in a process of its own (a thread would share the test's GIL and swap
#: far less often). Arguments: the path swapped, the two versions (a ``Path`` as ``repr`` of
#: a tuple, a hard link's source, else a symlink's target), a file whose existence stops the
#: loop. Prints how many swaps it made.
_SWAPPER = """
import ast, os, sys
swapped, versions, stop = sys.argv[1], ast.literal_eval(sys.argv[2]), sys.argv[3]
new, swaps = swapped + ".new", 0
while not os.path.exists(stop):
    for version in versions:
        if isinstance(version, tuple):
            os.link(version[0], new)
        else:
            os.symlink(version, new)
        os.replace(new, swapped)
        swaps += 1
print(swaps)
"""


def _argument(version: Path | str) -> tuple[str] | str:
    return (str(version),) if isinstance(version, Path) else version


@contextmanager
def swapping(scene: Scene) -> Iterator[list[int]]:
    """A process renaming the inside and the outside version over ``scene.swapped`` in turn
    until the block ends; yields a list that then holds the number of swaps made."""
    stop = scene.site.parent / "stop-swapping"
    versions = repr((_argument(scene.inside), _argument(scene.outside)))
    args = [sys.executable, "-c", _SWAPPER, str(scene.swapped), versions, str(stop)]
    swaps: list[int] = []
    with subprocess.Popen(args, stdout=subprocess.PIPE) as process:
        try:
            yield swaps
        finally:
            stop.touch()
            output, _ = process.communicate(timeout=30)
    swaps.append(int(output))


async def race(get: Callable[[], Awaitable[tuple[int, bytes]]]) -> Counter[tuple[int, str]]:
    """``CLIENTS`` tasks calling ``get`` for ``RACE_SECONDS``: how many times each (status,
    body) came back, the body as ``public``, ``SECRET`` (any byte of it) or ``other``."""
    seen: Counter[tuple[int, str]] = Counter()

    async def client() -> None:
        while True:
            status, body = await get()
            kind = "public" if body == PUBLIC else "SECRET" if b"SECRET" in body else "other"
            seen[status, kind] += 1

    with trio.move_on_after(RACE_SECONDS):
        async with trio.open_nursery() as nursery:
            for _ in range(CLIENTS):
                nursery.start_soon(client)
    return seen


def place(scene: Scene, version: Path | str) -> None:
    """Put ``version`` at ``scene.swapped`` (as the swapping process does)."""
    new = scene.swapped.with_name("placed")
    if isinstance(version, Path):
        new.hardlink_to(version)
    else:
        new.symlink_to(version)
    new.replace(scene.swapped)


async def assert_each_side(scene: Scene, get: Callable[[], Awaitable[tuple[int, bytes]]]) -> None:
    """The control, with nothing moving: the inside version is served, the outside one 404."""
    place(scene, scene.inside)
    assert await get() == (200, PUBLIC)
    place(scene, scene.outside)
    status, body = await get()
    assert status == 404 and b"SECRET" not in body


def swap_before_opening(monkeypatch: pytest.MonkeyPatch, scene: Scene) -> list[str]:
    """Make the first ``os.open`` of a path through ``scene.swapped`` put the outside version
    there first: the swap at the worst moment, once the path was checked. Returns the list
    of paths it happened for."""
    original = os.open
    swapped: list[str] = []

    def open_(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if not swapped and scene.swapped.name in PurePath(path).parts:
            swapped.append(path)
            place(scene, scene.outside)
        return original(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_)
    return swapped


async def test_a_symlink_swapped_in_just_before_the_open_is_404(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    place(scene, scene.inside)
    async with TestClient(Router().static("/static", scene.site)) as client:
        assert (await client.get(scene.path)).content == PUBLIC
        swapped = swap_before_opening(monkeypatch, scene)
        response = await client.get(scene.path)
    assert swapped  # the swap did land
    assert response.status_code == 404 and b"SECRET" not in response.content


def assert_never_outside(seen: Counter[tuple[int, str]], swaps: int) -> None:
    assert swaps > 10 and seen.total() > 10, ("the race hardly ran", swaps, seen)
    assert not [key for key in seen if key[1] == "SECRET"], seen
    assert set(seen) <= {(200, "public"), (404, "other")}, seen


async def test_a_swapped_symlink_never_serves_outside_in_memory(scene: Scene) -> None:
    async with TestClient(Router().static("/static", scene.site)) as client:

        async def get() -> tuple[int, bytes]:
            response = await client.get(scene.path)
            return response.status_code, response.content

        await assert_each_side(scene, get)
        with swapping(scene) as swaps:
            seen = await race(get)
    assert_never_outside(seen, swaps[0])


async def test_a_swapped_symlink_never_serves_outside_with_sendfile(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = counting_sendfile(monkeypatch)
    async with serving(Router().static("/static", scene.site)) as served:
        connections: dict[object, RawConnection] = {}

        async def get() -> tuple[int, bytes]:
            task = trio.lowlevel.current_task()  # one keep-alive connection per client task
            if task not in connections:
                connections[task] = await RawConnection.open(served.host, served.port)
            connection = connections[task]
            await connection.send(simple_get(scene.path))
            response = await connection.read_response()
            if response.closes:  # its last request (max_requests_per_connection): a new one
                await connection.aclose()
                del connections[task]
            return response.status, response.body

        await assert_each_side(scene, get)
        with swapping(scene) as swaps:
            seen = await race(get)
        for connection in connections.values():
            await connection.aclose()
    assert_never_outside(seen, swaps[0])
    assert sum(sent) >= len(PUBLIC) * seen[200, "public"]  # each file went out by sendfile
