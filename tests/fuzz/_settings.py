"""Hypothesis settings for the fuzz targets: a short run in the default test session, a long
one under ``nox -s fuzz`` (which sets ``TRIOFRAME_FUZZ_SCALE``).

The short run is derandomized: it draws the same examples on every run, so the test suite
gives the same answer every time and a failure in it can be run again. Only the long run
(with ``TRIOFRAME_FUZZ_SCALE`` set) explores new examples; what it finds is kept as an
``@example`` of its target."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: Multiplies every target's example count (1 in the default test run).
SCALE = float(os.environ.get("TRIOFRAME_FUZZ_SCALE", "1"))
#: Whether examples are drawn afresh (the long run) or the same each time (the default run).
EXPLORING = "TRIOFRAME_FUZZ_SCALE" in os.environ


def fuzz_settings(examples: int) -> settings:
    """Settings for a fuzz target that runs ``examples`` examples at scale 1."""
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        database=None,
        derandomize=not EXPLORING,
        suppress_health_check=list(HealthCheck),
    )
