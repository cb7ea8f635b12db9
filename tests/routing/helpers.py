"""Shared by the routing tests: a do-nothing handler and a router frozen with identity (each
endpoint prepared as itself, each scope as its router chain)."""

from __future__ import annotations

from typing import Any

from trioframe._routing import Endpoint, Owner, Router, RouteTable


def h(*args: Any) -> None:
    """A handler; the tests only look at which endpoint was chosen."""


def freeze(router: Router) -> RouteTable[Endpoint, tuple[Owner, ...]]:
    return router.freeze(lambda endpoint: endpoint, lambda chain: chain)
