"""pydantic is an optional integration: its tests are collected only where it is installed
(the ``tests`` nox session installs it)."""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("pydantic") else ["test_pydantic.py"]
