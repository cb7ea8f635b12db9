"""Handler shapes at this stage (docs/routing.md, Handlers and the request): no parameters, or one ``Request``.

Handlers are analysed once, when the ``TestClient`` is entered (the router is frozen then):
a non-async handler, an unknown or missing annotation, or ``*args``/``**kwargs`` fail there
with ``ConfigurationError`` naming the handler and the parameter, before any request. This
module uses ``from __future__ import annotations``, so every annotation here is a string
that must be resolved.
"""

from __future__ import annotations

from typing import Any

import pytest

from trioframe import ConfigurationError, Request, Response, Router
from trioframe.testing import TestClient


async def no_params() -> Response:
    return Response.text("no params")


async def with_request(request: Request) -> Response:
    return Response.text(f"{request.method} {request.uri.path}")


async def quoted_annotation(req: Request) -> str:
    return req.uri.path


class NotAnExtractor:
    pass


async def unknown_annotation(thing: NotAnExtractor) -> str:
    return "never"


async def int_annotation(request: Request, count: int) -> str:
    return "never"


async def unannotated(value) -> str:  # type: ignore[no-untyped-def]
    return "never"


async def var_args(*args: Any) -> str:
    return "never"


async def var_kwargs(**kwargs: Any) -> str:
    return "never"


async def unresolvable(request: DoesNotExist) -> str:  # type: ignore[name-defined]  # noqa: F821
    return "never"


def sync_handler() -> str:
    return "sync"


def sync_with_request(request: Request) -> str:
    return "sync"


async def test_handler_without_parameters() -> None:
    async with TestClient(Router().get("/", no_params)) as client:
        response = await client.get("/")
    assert response.status_code == 200
    assert response.text == "no params"


async def test_handler_taking_request() -> None:
    async with TestClient(Router().post("/items/{id}", with_request)) as client:
        response = await client.post("/items/1")
    assert response.text == "POST /items/1"


async def test_request_parameter_name_does_not_matter() -> None:
    async with TestClient(Router().get("/any/{x}", quoted_annotation)) as client:
        assert (await client.get("/any/thing")).text == "/any/thing"


async def test_string_annotations_resolve() -> None:
    # Under ``from __future__ import annotations`` the annotation is the string "Request".
    assert with_request.__annotations__["request"] == "Request"
    async with TestClient(Router().get("/", with_request)) as client:
        assert (await client.get("/")).text == "GET /"


async def test_locally_defined_handlers_with_string_annotations_resolve() -> None:
    async def local(request: Request) -> dict[str, str]:
        return {"path": request.uri.path}

    assert local.__annotations__["request"] == "Request"
    async with TestClient(Router().get("/local", local)) as client:
        assert (await client.get("/local")).json() == {"path": "/local"}


@pytest.mark.parametrize("handler", [sync_handler, sync_with_request, lambda: "lambda"])
async def test_non_async_handler_fails_when_the_client_is_entered(handler: Any) -> None:
    router = Router().get("/", handler)  # registration itself accepts any callable
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(router):
            pytest.fail("the client must not start with a non-async handler")
    assert "async" in str(info.value)


@pytest.mark.parametrize(
    ("handler", "parameter"),
    [
        (unknown_annotation, "thing"),
        (int_annotation, "count"),
        (unannotated, "value"),
    ],
)
async def test_parameter_without_extractor_names_handler_and_parameter(
    handler: Any, parameter: str
) -> None:
    router = Router().get("/", handler)
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(router):
            pytest.fail("the client must not start with a broken handler")
    message = str(info.value)
    assert handler.__name__ in message
    assert parameter in message


@pytest.mark.parametrize("handler", [var_args, var_kwargs])
async def test_star_parameters_are_refused(handler: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(Router().get("/", handler)):
            pytest.fail("the client must not start")
    assert handler.__name__ in str(info.value)


async def test_unresolvable_string_annotation_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(Router().get("/", unresolvable)):
            pytest.fail("the client must not start")
    assert "unresolvable" in str(info.value)


async def test_broken_handler_in_a_nested_router_fails_on_entry() -> None:
    router = Router().get("/", no_params).nest("/api", Router().get("/x", unknown_annotation))
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(router):
            pytest.fail("the client must not start")
    assert "unknown_annotation" in str(info.value)
    assert "thing" in str(info.value)


async def test_broken_fallback_fails_on_entry() -> None:
    router = Router().get("/", no_params).fallback(unknown_annotation)
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(router):
            pytest.fail("the client must not start")
    assert "unknown_annotation" in str(info.value)


async def test_handler_is_analysed_once_not_per_request() -> None:
    """The plan is built at entry: changing the function's annotations afterwards does not
    matter, because nothing inspects them per request."""

    async def handler(request: Request) -> str:
        return request.uri.path

    async with TestClient(Router().get("/a", handler)) as client:
        handler.__annotations__["request"] = "NotAnExtractor"
        assert (await client.get("/a")).text == "/a"
        assert (await client.get("/a")).text == "/a"


class Greeter:
    """A handler object: ``async def __call__`` with extractor annotations."""

    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    async def __call__(self, request: Request) -> Response:
        return Response.text(f"{self.greeting} {request.param('name')}")


async def test_an_object_with_async_call_is_a_handler() -> None:
    router = Router().get("/hi/{name}", Greeter("hello"))
    async with TestClient(router) as client:
        response = await client.get("/hi/ada")
    assert response.text == "hello ada"
