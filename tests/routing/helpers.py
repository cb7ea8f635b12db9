"""Shared by the routing tests: a do-nothing handler and a router frozen with identity."""

from __future__ import annotations

from typing import Any

from trioframe._routing import Endpoint, Router, RouteTable


def h(*args: Any) -> None:
    """A handler; the tests only look at which endpoint was chosen."""


def freeze(router: Router) -> RouteTable[Endpoint]:
    return router.freeze(lambda endpoint: endpoint)
