"""Extractor planning: a handler's signature becomes, once, a list of steps that fill its
arguments from a ``Request``. Sans-I/O for planning; the steps themselves may await the body.

This first cut knows the two handler shapes of the foundation: no parameters, and one
parameter annotated ``Request``. Typed extractors (``Path[T]``, ``Query[T]``, ...) plug into
``plan.build_plan``'s table.
"""

from .plan import HandlerPlan, build_plan

__all__ = ["HandlerPlan", "build_plan"]
