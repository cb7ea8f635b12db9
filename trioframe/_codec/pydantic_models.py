"""Pydantic v2 models as extractor types, when the application uses pydantic.

pydantic is not a dependency: nothing here imports it. A class can only be a pydantic model
if pydantic is already imported, so ``sys.modules`` is asked first and every other type costs
one dictionary lookup. A model is validated by pydantic itself (its own rules and
configuration: lax or strict, aliases, validators) and its errors are reported in the same
``errors`` list as every other failure.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from .values import ExtractionValueError, NestedErrors

__all__ = ["is_model", "structure_hook", "unstructure_hook"]

OBJECT_EXPECTED = "expected a JSON object"


def is_model(kind: Any) -> bool:
    """Whether ``kind`` is a pydantic v2 model class (without importing pydantic)."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(kind, type):
        return False
    base = getattr(pydantic, "BaseModel", None)
    return base is not None and hasattr(base, "model_validate") and issubclass(kind, base)


def _location(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _reason(error: dict[str, Any]) -> str:
    if error["type"] == "missing":
        return "required"
    message: str = error["msg"]
    return message[:1].lower() + message[1:]


def structure_hook(kind: type) -> Callable[[Any, Any], Any]:
    """The structure hook for the model class ``kind``: a JSON object (or the dictionary a
    query or form is collected into) validated by ``kind.model_validate``."""
    validate = getattr(kind, "model_validate")  # noqa: B009 (pydantic is not typed here)
    validation_error = sys.modules["pydantic"].ValidationError

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise ExtractionValueError(OBJECT_EXPECTED)
        try:
            return validate(value)
        except validation_error as exc:
            failures: list[tuple[str, BaseException]] = [
                (_location(error["loc"]), ExtractionValueError(_reason(error)))
                for error in exc.errors(include_url=False)
            ]
            raise NestedErrors(failures) from None

    return structure


def unstructure_hook(_: type) -> Callable[[Any], Any]:
    """The unstructure hook for a model class: its JSON-mode dump (what it reads back)."""

    def unstructure(model: Any) -> Any:
        return model.model_dump(mode="json")

    return unstructure
