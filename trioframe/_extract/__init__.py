"""Extractors: the annotations handlers use (``markers``), the cattrs converters built once
(``convert``), one step factory per kind (``sources``; ``State[T]`` in ``state``; one query
key, header or cookie in ``single``; credentials in ``credentials`` and
``credential_steps``), and ``plan.build_plan``, which turns a handler's
signature into the steps that fill its arguments per request. Planning is sans-I/O; the steps may await the request body.
"""

from .._markers import (
    Alias,
    Body,
    CookieValue,
    Extension,
    Form,
    FromRequest,
    HeaderValue,
    Json,
    Path,
    Query,
    State,
)
from .credentials import APIKey, BasicCredentials, BearerToken, Realm, SecurityScheme
from .plan import HandlerPlan, build_plan

__all__ = [
    "APIKey",
    "Alias",
    "BasicCredentials",
    "BearerToken",
    "Body",
    "CookieValue",
    "Extension",
    "Form",
    "FromRequest",
    "HandlerPlan",
    "HeaderValue",
    "Json",
    "Path",
    "Query",
    "Realm",
    "SecurityScheme",
    "State",
    "build_plan",
]
