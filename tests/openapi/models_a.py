"""A class named like one in ``models_b``: the two components are qualified."""

from __future__ import annotations

import attrs


@attrs.frozen
class Item:
    name: str
