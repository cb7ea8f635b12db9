"""Type tests for ``ServerConfig``: precise keywords, flat properties and group reads.

A ``# type: ignore[...]`` here marks an error mypy must report (unused ignores are errors)."""

from __future__ import annotations

from typing import assert_type

import attrs

from trioframe import ServerConfig


def flat_keywords_and_properties() -> None:
    config = ServerConfig(max_body_size=1024, trusted_proxies=["10.0.0.0/8"], http2=True)
    assert_type(config.max_body_size, int)
    assert_type(config.header_timeout, float)
    assert_type(config.trusted_proxies, tuple[str, ...])
    assert_type(config.max_requests_per_worker, int | None)
    assert_type(config.with_http1_parser("h11").with_reuse_port(False), ServerConfig)
    assert_type(attrs.evolve(config, http2=False), ServerConfig)


def groups() -> None:
    config = ServerConfig()
    assert_type(config.limits.max_header_size, int)
    assert_type(config.timeouts.send_timeout, float)
    assert_type(config.app_limits.websocket_allowed_origins, tuple[str, ...] | None)
    assert_type(config.processes.workers, int)


def wrong_types_are_errors() -> None:
    ServerConfig(max_body_size="x")  # type: ignore[arg-type]
    ServerConfig(no_such_setting=1)  # type: ignore[call-arg]
    ServerConfig().with_header_timeout("1")  # type: ignore[arg-type]
    attrs.evolve(ServerConfig(), max_body_size="x")  # type: ignore[arg-type]
