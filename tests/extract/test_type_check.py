"""The startup check: an annotation the converters cannot produce is a ConfigurationError
naming the handler, the parameter and the type, before any request."""

from __future__ import annotations

import dataclasses
import enum
import subprocess
import sys
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

import attrs
import pytest

from trioframe import ConfigurationError, Form, Json, Path, Query, Response, Router
from trioframe._extract.plan import build_plan
from trioframe.testing import TestClient


class Plain:
    """A class no converter knows."""


@attrs.frozen
class Inner:
    n: int


@attrs.frozen
class WithPlain:
    ok: int
    extra: Plain


@dataclasses.dataclass
class Nested:
    inner: Inner


class Bad(TypedDict):
    when: complex


class LateOptional(TypedDict):  # NotRequired as a string: Python 3.11 does not see it
    a: int
    b: NotRequired[int]


class Pairs(enum.Enum):
    ONE = (1, 2)


@attrs.frozen
class Tree:  # recursive: walked once
    children: list[Tree] = attrs.Factory(list)
    label: str = ""


def _plan(annotation: Any, pattern_params: tuple[str, ...] = ("v",)) -> None:
    async def handler(v: Any) -> Response:
        return Response.text("ok")

    handler.__annotations__ = {"v": annotation, "return": Response}
    build_plan(handler, pattern_params)


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (Json[Plain], r"Json\[Plain\]: no converter for Plain$"),
        (Json[complex], r"no converter for complex$"),
        (Json[Callable[[int], int]], r"no converter for .*Callable"),
        (Json[WithPlain], r"Json\[WithPlain\]: no converter for Plain \(at WithPlain.extra\)"),
        (Json[list[WithPlain]], r"no converter for Plain \(at \[\].extra\)"),
        (Json[dict[int, str]], r"dict keys must be str .*not int"),
        (Json[Bad], r"no converter for complex \(at Bad.when\)"),
        (Json[LateOptional], r"LateOptional.b: .*NotRequired.*total=False"),
        (Json[int | str], r"the union int \| str is ambiguous"),
        (Json[Pairs], r"Pairs has values that are not strings, numbers, booleans or None"),
        (
            Query[Nested],
            r"Query\[Nested\]: a query value is one piece of text; it cannot hold Inner \(at Nested.inner\)",
        ),
        (
            Form[dict[str, list[int]]],
            r"a form value is one piece of text; it cannot hold list\[int\]",
        ),
        (Query[WithPlain], r"no converter for Plain \(at WithPlain.extra\)"),
        (Path[list[Inner]], r"a path value is one piece of text; it cannot hold Inner"),
        (Path[Plain], r"Path\[Plain\]: no converter for Plain"),
    ],
)
def test_an_unsupported_type_fails_when_the_plan_is_built(annotation: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=r"handler .*handler, parameter 'v': .*" + message):
        _plan(annotation)


@pytest.mark.parametrize(
    "annotation",
    [
        Json[Tree],
        Json[dict[str, Any]],
        Json[list],
        Json[Inner | Nested | None],
        Query[dict[str, str]],
    ],
)
def test_supported_shapes_pass_the_check(annotation: Any) -> None:
    _plan(annotation)


async def test_the_check_runs_when_the_router_is_frozen() -> None:
    async def create(body: Json[WithPlain]) -> Response:
        return Response.json(body)

    with pytest.raises(ConfigurationError, match=r"create, parameter 'body': Json\[WithPlain\]"):
        async with TestClient(Router().post("/", create)):
            pass


def test_an_unannotated_parameter_says_the_annotation_is_missing() -> None:
    async def handler(value):  # type: ignore[no-untyped-def]
        return Response.text("x")

    with pytest.raises(
        ConfigurationError, match=r"parameter 'value': the parameter has no annotation"
    ) as info:
        build_plan(handler)
    assert "inspect" not in str(info.value)


def test_the_converters_never_import_pydantic() -> None:
    program = (
        "import sys, attrs\n"
        "from trioframe import Json, Query, Response\n"
        "from trioframe._extract.plan import build_plan\n"
        "@attrs.frozen\n"
        "class A:\n"
        "    n: int\n"
        "async def h(a: Json[A], q: Query[A]) -> Response:\n"
        "    return Response.json(a)\n"
        "build_plan(h)\n"
        "Response.json(A(1))\n"
        "assert 'pydantic' not in sys.modules, 'pydantic was imported'\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True, timeout=60)
