"""What a parameter without an extractor probably meant, for its startup error.

``item_id: int`` on a route with ``{item_id}`` was most likely ``Path[int]``; ``q: str``
elsewhere ``Query[str]``; ``item: Item`` (a record) ``Json[Item]``. A parameter without an
annotation is read as ``str``, or as the type of its default (``page=1``: ``int``).
"""

from __future__ import annotations

import inspect
from typing import Any

from .._codec.check import SCALARS, UnsupportedType, check_value, type_name, unwrap
from .._codec.pydantic_models import is_model
from .._codec.shapes import is_record, is_sequence
from .context import StepContext
from .params import MISSING

__all__ = ["suggestion"]


def suggestion(ctx: StepContext, annotation: Any) -> str:
    """``"; did you mean item_id: Path[int] (...)?"``, or ``""`` when nothing fits."""
    if annotation is inspect.Parameter.empty:
        default = type(ctx.default)
        annotation = default if ctx.default is not MISSING and default in SCALARS else str
    name, kind = ctx.parameter, type_name(annotation)
    if is_record(unwrap(annotation)) or is_model(annotation):
        return (
            f"; did you mean {name}: Json[{kind}] (a JSON body), Form[{kind}] (a form body) or "
            f"Query[{kind}] (the query string)?"
        )
    try:
        check_value(annotation, "query")
    except UnsupportedType:
        return ""
    if name in ctx.route_params and not is_sequence(unwrap(annotation)):
        return f"; did you mean {name}: Path[{kind}] (the route parameter {{{name}}})?"
    where = f"the query parameter ?{name}="
    if ctx.route_params and name not in ctx.route_params:  # a misspelt one, perhaps
        named = ", ".join(f"{{{param}}}" for param in ctx.route_params)
        where += f"; Path[...] reads the route's parameters by name: {named}"
    return f"; did you mean {name}: Query[{kind}] ({where})?"
