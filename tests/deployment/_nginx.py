"""Running Debian's nginx as a real reverse proxy in a test: its whole configuration and
every file it writes live in a temporary directory (``-p`` prefix), it listens on a loopback
port only, and it is stopped when the test ends."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

CONFIG = """
daemon off;
master_process on;
worker_processes 1;
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        '' '';
    }}
    upstream fleet {{
        {servers}
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://fleet;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_next_upstream error timeout http_503;
        }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def running_nginx(upstreams: list[int], prefix: Path) -> AsyncIterator[int]:
    """nginx in front of ``upstreams`` (ports on 127.0.0.1); yields its port once it
    listens. Skips the test when nginx is not installed (``.ci/run`` installs it)."""
    if not await trio.Path(NGINX).exists():
        pytest.skip("nginx is not installed (.ci/run installs Debian's nginx-light)")
    port = free_port()
    servers = "\n        ".join(f"server 127.0.0.1:{p} max_fails=0;" for p in upstreams)
    config = prefix / "nginx.conf"
    await trio.Path(config).write_text(CONFIG.format(prefix=prefix, servers=servers, port=port))
    process = await trio.lowlevel.open_process(
        [NGINX, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log")],
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(10):
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:  # nginx says nothing when it listens: try again
                    await trio.sleep(0.05)
        yield port
    finally:
        process.send_signal(signal.SIGQUIT)  # nginx's graceful stop
        with trio.move_on_after(5):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
