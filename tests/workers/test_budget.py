"""The request budget each worker is given: ``max_requests_per_worker`` lowered by a random
part of ``max_requests_jitter`` (so that workers started together are not all replaced
together), read from the spec the supervisor pickles to a worker's stdin."""

from __future__ import annotations

import io
import os
import pickle
import socket
import subprocess
from typing import Any

import pytest

from trioframe import ServerConfig
from trioframe._process.workers.spec import WorkerSpec
from trioframe._process.workers.supervisor import Supervisor


class FakeProcess:
    """Stands in for a worker process: keeps what was written to its stdin."""

    pid = 4242
    returncode = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.stdin = io.BytesIO()
        self.stdin.close = lambda: None  # type: ignore[method-assign]

    def spec(self) -> WorkerSpec:
        spec: WorkerSpec = pickle.loads(self.stdin.getvalue())
        return spec


def budgets(config: ServerConfig, monkeypatch: pytest.MonkeyPatch, count: int) -> list[Any]:
    monkeypatch.setattr(subprocess, "Popen", FakeProcess)
    supervisor = Supervisor("app:router", "127.0.0.1", 0, config, reuse_port=False)
    with socket.socket() as sock:
        supervisor.sockets = {slot: [sock] for slot in range(config.workers)}
        workers = [supervisor.spawn(slot % config.workers) for slot in range(count)]
    found = [worker.process.spec().max_requests for worker in workers]  # type: ignore[attr-defined]
    supervisor.selector.close()
    for worker in workers:
        os.close(worker.channel)
    return found


def test_without_a_budget_workers_are_never_recycled(monkeypatch: pytest.MonkeyPatch) -> None:
    assert budgets(ServerConfig(workers=2), monkeypatch, 2) == [None, None]


def test_without_jitter_every_worker_has_the_same_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ServerConfig(workers=2, max_requests_per_worker=1000)
    assert budgets(config, monkeypatch, 4) == [1000] * 4


def test_jitter_lowers_each_budget_by_up_to_its_amount(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ServerConfig(workers=2).with_max_requests_per_worker(1000, jitter=50)
    found = budgets(config, monkeypatch, 200)
    assert all(950 <= budget <= 1000 for budget in found)
    assert len(set(found)) > 10  # spread out, not one value


def test_a_budget_is_at_least_one(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ServerConfig(workers=2).with_max_requests_per_worker(3, jitter=10)
    assert min(budgets(config, monkeypatch, 100)) == 1
