"""What a step factory is given and what it returns: ``StepContext`` and ``Step``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import attrs

from .._errors import ConfigurationError
from .._multipart.decoder import MultipartConfig
from .._multipart.fields import FormReading
from .._request import Request
from .params import MISSING

__all__ = ["Deferred", "Step", "StepContext"]

Step = Callable[[Request], Awaitable[Any]]


class Deferred(Protocol):
    """A step whose choice waits until the lifespans have entered (``state.LateState``)."""

    def resolve(self) -> None: ...


@attrs.frozen
class StepContext:
    """What a factory may look at: the handler's name (for messages), the parameter, the
    route's parameter names, the registered state values (outermost router first), the
    largest JSON body ``Json[T]`` parses, the ``FromRequest`` dependency whose parameter this
    is (``None`` for the handler's own), the route's multipart limits, how ``Form`` reads
    a multipart body in this plan, where the ``State[T]`` steps decided once the
    lifespans have entered are collected (the app's list), and the parameter's default
    (``MISSING`` when it has none)."""

    handler: str
    parameter: str
    route_params: tuple[str, ...]
    states: tuple[Any, ...]
    max_json_size: int = 256 * 1024
    dependency: str | None = None
    multipart: MultipartConfig = attrs.Factory(MultipartConfig)
    form_reading: FormReading = attrs.Factory(FormReading)
    late_states: list[Deferred] = attrs.Factory(list)
    default: Any = MISSING

    def fail(self, reason: str) -> ConfigurationError:
        """The startup error for this parameter, naming the handler (and the dependency)."""
        owner = f"handler {self.handler}"
        if self.dependency is not None:
            owner = f"{owner}, dependency {self.dependency}"
        return ConfigurationError(f"{owner}, parameter {self.parameter!r}: {reason}")
