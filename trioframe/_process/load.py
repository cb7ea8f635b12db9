"""Loading ``MODULE:ATTR``: import the module (the current directory is on the import path),
take the attribute, call it when it is a factory, and insist on a ``Router``.

Each way this can fail is a ``StartupFailure`` with one line saying what went wrong: status 2
when the command names something that is not there or not a router (the module, the
attribute, what the attribute is), status 3 when the user's code raised (at import time or in
the factory).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import sys
from types import ModuleType
from typing import Any

from .._routing import Router
from .._server.config import ServerConfig
from .._server.serve import Server
from .errors import USAGE, StartupFailure, describe

__all__ = ["load_router", "load_served", "router_of"]

log = logging.getLogger("trioframe.cli")


def load_router(target: str) -> Router:
    """The ``Router`` that ``target`` (``MODULE:ATTR``) names; ``ATTR`` may also be a
    function with no arguments returning one, or a ``Server`` (its router)."""
    return load_served(target)[0]


def load_served(target: str) -> tuple[Router, ServerConfig | None]:
    """``load_router``, with the ``ServerConfig`` of the ``Server`` that ``target`` names (or
    that its factory returns), else ``None``."""
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise StartupFailure(f"expected MODULE:ATTR, got {target!r}", USAGE)
    module = _import(module_name)
    if not hasattr(module, attr):
        raise StartupFailure(
            f"module {module_name!r} has no attribute {attr!r}{_hint(module)}", USAGE
        )
    value = getattr(module, attr)
    if not isinstance(value, Router | Server) and callable(value):
        value = _call_factory(target, value)
    if isinstance(value, Server):
        return value.router, value.config
    return router_of(target, value), None


def router_of(target: str, value: Any) -> Router:
    """``value`` (what ``target`` names) as a ``Router``: itself, the router of a ``Server``,
    or what it returns when it is a factory; ``StartupFailure`` otherwise."""
    if isinstance(value, Server):
        return value.router
    if isinstance(value, Router):
        return value
    if not callable(value):
        raise StartupFailure(
            f"{target} is {_a(type(value).__name__)}, not a Router (nor a function returning one)",
            USAGE,
        )
    made = _call_factory(target, value)
    return made.router if isinstance(made, Server) else made


def _import(module_name: str) -> ModuleType:
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # MODULE resolves from the current directory, as with python -m
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name in _packages_of(module_name):  # the module itself is missing
            raise StartupFailure(f"cannot import module {module_name!r}: {error}", USAGE) from None
        raise _raised_by_user_code(f"importing {module_name}", error) from None
    except Exception as error:  # the module's own code failed (its imports included)
        raise _raised_by_user_code(f"importing {module_name}", error) from None


def _packages_of(module_name: str) -> set[str]:
    """``a.b.c`` → ``{"a", "a.b", "a.b.c"}``: the names whose absence means the target's
    module itself cannot be found."""
    parts = module_name.split(".")
    return {".".join(parts[: index + 1]) for index in range(len(parts))}


def _hint(module: ModuleType) -> str:
    routers = [name for name, value in vars(module).items() if isinstance(value, Router)]
    return f" (its Routers: {', '.join(sorted(routers))})" if routers else ""


def _call_factory(target: str, factory: Any) -> Router | Server:
    if inspect.iscoroutinefunction(factory):
        raise StartupFailure(
            f"{target} is an async function, not a Router (a factory must be a plain function "
            "returning one; startup work that awaits belongs in a Router.lifespan)",
            USAGE,
        )
    try:
        inspect.signature(factory).bind()
    except TypeError:
        raise StartupFailure(
            f"{target} takes arguments: it must be a Router or a function of none returning one",
            USAGE,
        ) from None
    except ValueError:  # no signature to inspect (some builtins): just call it
        pass
    try:
        value = factory()
    except Exception as error:
        raise _raised_by_user_code(f"the factory {target}", error) from None
    if not isinstance(value, Router | Server):
        raise StartupFailure(
            f"the factory {target} returned {_a(type(value).__name__)}, not a Router", USAGE
        )
    return value


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _raised_by_user_code(what: str, error: Exception) -> StartupFailure:
    log.debug("%s raised", what, exc_info=error)
    return StartupFailure(f"{what} raised {describe(error)}")
