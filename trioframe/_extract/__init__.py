"""Extractors: the annotations handlers use (``markers``), the cattrs converters built once
(``convert``), one step factory per kind (``sources``; ``State[T]`` in ``state``), and
``plan.build_plan``, which turns a handler's signature into the steps that fill its arguments
per request. Planning is sans-I/O; the steps may await the request body.
"""

from .._markers import Body, Extension, Form, FromRequest, Json, Path, Query, State
from .plan import HandlerPlan, build_plan

__all__ = [
    "Body",
    "Extension",
    "Form",
    "FromRequest",
    "HandlerPlan",
    "Json",
    "Path",
    "Query",
    "State",
    "build_plan",
]
