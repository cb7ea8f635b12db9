"""A class named like one in ``models_a``: the two components are qualified."""

from __future__ import annotations

import attrs


@attrs.frozen
class Item:
    price: int
