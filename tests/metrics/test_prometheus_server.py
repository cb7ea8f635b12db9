"""A real Prometheus (Debian's package) scraping a two-worker fleet on 127.0.0.1 every second:
its query API shows the fleet's request count, whichever worker answered each scrape.
Prometheus listens on 127.0.0.1 only, keeps its data in the test's temporary directory, and
is stopped when the test ends; every wait is bounded. Skipped only where Prometheus is not
installed (``.ci/run`` installs it)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import trio

from ..cli._cli import free_port
from .test_fleet_metrics import fleet, spread_requests

pytestmark = pytest.mark.loopback

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"

CONFIG = """
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: fleet
    static_configs:
      - targets: ["127.0.0.1:{target}"]
"""


@asynccontextmanager
async def running_prometheus(target: int, directory: Path) -> AsyncIterator[str]:
    """Prometheus scraping ``127.0.0.1:target``; yields its base URL once it is ready."""
    if not await trio.Path(PROMETHEUS).exists():
        pytest.skip("prometheus is not installed (.ci/run installs Debian's prometheus)")
    port = free_port()
    config = directory / "prometheus.yml"
    await trio.Path(config).write_text(CONFIG.format(target=target))
    process = await trio.lowlevel.open_process(
        [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:
            with trio.fail_after(30):
                while True:
                    try:
                        if (await client.get(f"{url}/-/ready")).status_code == 200:
                            break
                    except httpx.TransportError:  # not listening yet
                        pass
                    await trio.sleep(0.1)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        with trio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


async def query(client: httpx.AsyncClient, url: str, expression: str) -> float | None:
    """The value of an instant query that gives one sample, ``None`` when it gives none."""
    response = await client.get(f"{url}/api/v1/query", params={"query": expression})
    answer = json.loads(response.text)
    assert answer["status"] == "success", answer
    result = answer["data"]["result"]
    return float(result[0]["value"][1]) if result else None


async def test_prometheus_sees_the_whole_fleet(tmp_path: Path) -> None:
    async with fleet() as running:
        answered = await spread_requests(running, 30)
        total = sum(answered.values())
        async with (
            running_prometheus(running.port, tmp_path) as url,
            httpx.AsyncClient() as client,
        ):
            requests = 'sum(http_server_request_duration_seconds_count{http_route="/"})'
            with trio.fail_after(60):
                while True:  # until a scrape made after the requests is stored
                    if await query(client, url, requests) == total:
                        break
                    await trio.sleep(0.2)
            assert await query(client, url, 'up{job="fleet"}') == 1
            ok = 'sum(http_server_request_duration_seconds_count{http_response_status_code="200"})'
            assert (await query(client, url, ok) or 0) >= total  # (and the scrapes since)
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            assert await running.finish() == 0
