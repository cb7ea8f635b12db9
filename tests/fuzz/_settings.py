"""Hypothesis settings for the fuzz targets: a short run in the default test session, a long
one under ``nox -s fuzz`` (which sets ``TRIOFRAME_FUZZ_SCALE``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: Multiplies every target's example count (1 in the default test run).
SCALE = float(os.environ.get("TRIOFRAME_FUZZ_SCALE", "1"))


def fuzz_settings(examples: int) -> settings:
    """Settings for a fuzz target that runs ``examples`` examples at scale 1."""
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
