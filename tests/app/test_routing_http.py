"""Every routing rule of docs/routing.md, observed through HTTP with the ``TestClient``.

Literal, ``{param}`` and ``{*wildcard}`` routes and their precedence (independent of
registration order), percent-decoding after the split, the built-in 400/404/405 answers,
automatic HEAD and OPTIONS, the 308 trailing-slash redirects, nesting, fallbacks, the
``route``/decorator registration forms, and the registration-time ``ConfigurationError``s.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from trioframe import ConfigurationError, Method, Request, Response, Router
from trioframe.testing import TestClient

from .helpers import assert_error_body

Handler = Callable[[Request], Awaitable[dict[str, Any]]]


def tagged(name: str) -> Handler:
    """A handler answering which route ran, with the method and path parameters it saw."""

    async def handler(request: Request) -> dict[str, Any]:
        return {"route": name, "method": str(request.method), "params": request.params}

    handler.__qualname__ = f"tagged_{name}"
    return handler


async def get_json(router: Router, url: str, method: str = "GET") -> dict[str, Any]:
    async with TestClient(router) as client:
        response = await client.request(method, url)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


# -- literal, param and wildcard routes ---------------------------------------------------------


async def test_literal_route_matches_only_its_path() -> None:
    router = Router().get("/health", tagged("health"))
    async with TestClient(router) as client:
        ok = await client.get("/health")
        assert ok.status_code == 200
        assert ok.json() == {"route": "health", "method": "GET", "params": {}}
        assert (await client.get("/healthz")).status_code == 404
        assert (await client.get("/health/more")).status_code == 404


async def test_root_route() -> None:
    router = Router().get("/", tagged("root"))
    assert (await get_json(router, "/"))["route"] == "root"


async def test_several_params_in_one_pattern() -> None:
    router = Router().get("/users/{user_id}/posts/{post_id}", tagged("post"))
    body = await get_json(router, "/users/7/posts/abc")
    assert body["params"] == {"user_id": "7", "post_id": "abc"}


async def test_param_does_not_match_an_empty_segment_or_several_segments() -> None:
    router = Router().get("/users/{user_id}", tagged("user"))
    async with TestClient(router) as client:
        assert (await client.get("/users/1/extra")).status_code == 404
        # ``/users/`` is not ``/users/{user_id}`` with an empty id.
        assert (await client.get("/users//")).status_code == 404


async def test_wildcard_captures_the_rest_of_the_path() -> None:
    router = Router().get("/static/{*path}", tagged("static"))
    async with TestClient(router) as client:
        one = await client.get("/static/app.js")
        assert one.json()["params"] == {"path": "app.js"}
        many = await client.get("/static/css/site/main.css")
        assert many.json()["params"] == {"path": "css/site/main.css"}
        # one or more segments: the bare prefix is not a match
        assert (await client.get("/static")).status_code == 404


ROUTES = [
    ("/files/readme", "literal"),
    ("/files/{name}", "param"),
    ("/files/{*rest}", "wildcard"),
]


@pytest.mark.parametrize("order", list(itertools.permutations(ROUTES)))
async def test_precedence_is_literal_then_param_then_wildcard_in_any_order(
    order: tuple[tuple[str, str], ...],
) -> None:
    router = Router()
    for pattern, name in order:
        router.get(pattern, tagged(name))
    async with TestClient(router) as client:
        literal = (await client.get("/files/readme")).json()
        param = (await client.get("/files/other")).json()
        wildcard = (await client.get("/files/a/b")).json()
    assert literal == {"route": "literal", "method": "GET", "params": {}}
    assert param == {"route": "param", "method": "GET", "params": {"name": "other"}}
    assert wildcard == {"route": "wildcard", "method": "GET", "params": {"rest": "a/b"}}


@pytest.mark.parametrize("literal_first", [True, False])
async def test_precedence_backtracks_from_a_literal_dead_end(literal_first: bool) -> None:
    router = Router()
    routes = [("/a/b/d", tagged("literal")), ("/a/{x}/c", tagged("param"))]
    for pattern, handler in routes if literal_first else reversed(routes):
        router.get(pattern, handler)
    async with TestClient(router) as client:
        assert (await client.get("/a/b/d")).json()["route"] == "literal"
        backtracked = (await client.get("/a/b/c")).json()
        assert backtracked["route"] == "param"
        assert backtracked["params"] == {"x": "b"}


# -- percent-decoding -------------------------------------------------------------------------


async def test_encoded_slash_stays_inside_one_param() -> None:
    router = Router().get("/files/{name}", tagged("file"))
    body = await get_json(router, "/files/a%2Fb")
    assert body["params"] == {"name": "a/b"}


async def test_params_and_wildcards_are_percent_decoded_after_the_split() -> None:
    router = Router().get("/p/{name}", tagged("p")).get("/w/{*rest}", tagged("w"))
    async with TestClient(router) as client:
        param = (await client.get("/p/caf%C3%A9%20au%20lait")).json()
        wildcard = (await client.get("/w/x%2Fy/z%20z")).json()
    assert param["params"] == {"name": "café au lait"}
    assert wildcard["params"] == {"rest": "x/y/z z"}


async def test_literal_segments_match_the_decoded_request_path() -> None:
    router = Router().get("/café", tagged("cafe"))
    assert (await get_json(router, "/caf%C3%A9"))["route"] == "cafe"


@pytest.mark.parametrize("path", ["/files/%zz", "/files/%ff", "/files/%e9t%e9", "/files/%4"])
async def test_invalid_percent_encoding_in_the_path_is_400(path: str) -> None:
    router = Router().get("/files/{name}", tagged("file"))
    async with TestClient(router) as client:
        response = await client.get(path)
    assert_error_body(response, 400)


# -- 404 and 405 ------------------------------------------------------------------------------


async def test_no_route_is_404_with_the_standard_body() -> None:
    router = Router().get("/here", tagged("here"))
    async with TestClient(router) as client:
        response = await client.get("/not/here")
    assert_error_body(response, 404)


async def test_empty_router_answers_404() -> None:
    async with TestClient(Router()) as client:
        assert_error_body(await client.get("/"), 404)


async def test_wrong_method_is_405_with_allow_and_standard_body() -> None:
    router = Router().get("/items", tagged("list")).post("/items", tagged("create"))
    async with TestClient(router) as client:
        response = await client.delete("/items")
    assert_error_body(response, 405)
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert allowed == {"GET", "HEAD", "POST", "OPTIONS"}


async def test_405_allow_lists_only_the_methods_of_the_matched_path() -> None:
    router = Router().put("/things/{id}", tagged("put")).get("/things", tagged("list"))
    async with TestClient(router) as client:
        response = await client.get("/things/1")
    assert_error_body(response, 405)
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert allowed == {"PUT", "OPTIONS"}


# -- HEAD and OPTIONS -------------------------------------------------------------------------


async def test_head_on_a_get_route_runs_get_and_sends_headers_only() -> None:
    calls: list[str] = []

    async def page(request: Request) -> Response:
        calls.append(str(request.method))
        return Response.text("hello, head").with_header("x-page", "1")

    router = Router().get("/page", page)
    async with TestClient(router) as client:
        get = await client.get("/page")
        head = await client.head("/page")
    assert calls == ["GET", "HEAD"]
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == "text/plain; charset=utf-8"
    assert head.headers["x-page"] == "1"
    assert head.headers["content-length"] == str(len(b"hello, head"))
    assert head.headers["content-length"] == get.headers["content-length"]


async def test_explicit_head_route_wins_over_the_automatic_one() -> None:
    async def get_page() -> Response:
        return Response.text("from get")

    async def head_page() -> Response:
        return Response(200).with_header("x-from", "head")

    # the HEAD route registered before and after the GET route
    for router in (
        Router().get("/page", get_page).head("/page", head_page),
        Router().head("/page", head_page).get("/page", get_page),
    ):
        async with TestClient(router) as client:
            head = await client.head("/page")
            get = await client.get("/page")
        assert head.status_code == 200
        assert head.headers["x-from"] == "head"
        assert head.content == b""
        assert get.text == "from get"


async def test_head_without_a_get_route_is_405() -> None:
    router = Router().post("/submit", tagged("submit"))
    async with TestClient(router) as client:
        response = await client.head("/submit")
    assert response.status_code == 405
    assert "HEAD" not in response.headers["allow"]


async def test_automatic_options_is_204_with_allow() -> None:
    router = Router().get("/items", tagged("list")).post("/items", tagged("create"))
    async with TestClient(router) as client:
        response = await client.options("/items")
    assert response.status_code == 204
    assert response.content == b""
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert allowed == {"GET", "HEAD", "POST", "OPTIONS"}


async def test_explicit_options_route_replaces_the_automatic_answer() -> None:
    async def options() -> Response:
        return Response.text("custom options")

    router = Router().get("/items", tagged("list")).options("/items", options)
    async with TestClient(router) as client:
        response = await client.options("/items")
    assert response.status_code == 200
    assert response.text == "custom options"


async def test_options_on_an_unknown_path_is_404() -> None:
    router = Router().get("/items", tagged("list"))
    async with TestClient(router) as client:
        assert_error_body(await client.options("/nothing"), 404)


# -- trailing-slash redirects -----------------------------------------------------------------


async def test_extra_trailing_slash_redirects_308_keeping_the_query() -> None:
    router = Router().get("/users", tagged("users"))
    async with TestClient(router) as client:
        response = await client.get("/users/?page=2&sort=name")
    assert response.status_code == 308
    assert response.headers["location"] == "/users?page=2&sort=name"


async def test_missing_trailing_slash_redirects_308_keeping_the_query() -> None:
    router = Router().get("/docs/", tagged("docs"))
    async with TestClient(router) as client:
        response = await client.get("/docs?q=x%20y")
        assert response.status_code == 308
        assert response.headers["location"] == "/docs/?q=x%20y"
        assert (await client.get("/docs/")).json()["route"] == "docs"


async def test_redirect_without_query_and_relative_location() -> None:
    router = Router().get("/users/{user_id}", tagged("user"))
    async with TestClient(router) as client:
        response = await client.get("/users/42/")
    assert response.status_code == 308
    location = response.headers["location"]
    assert location == "/users/42"
    assert "://" not in location
    assert "testserver" not in location


async def test_redirect_keeps_the_method_and_is_followed_to_the_route() -> None:
    router = Router().post("/forms", tagged("forms"))
    async with TestClient(router) as client:
        redirect = await client.post("/forms/", content=b"x=1")
        assert redirect.status_code == 308
        followed = await client.post("/forms/", content=b"x=1", follow_redirects=True)
    assert followed.status_code == 200
    assert followed.json()["route"] == "forms"
    assert followed.json()["method"] == "POST"


async def test_no_redirect_when_neither_form_matches() -> None:
    router = Router().get("/users", tagged("users"))
    async with TestClient(router) as client:
        assert_error_body(await client.get("/groups/"), 404)


# -- nesting ----------------------------------------------------------------------------------


async def test_nest_mounts_the_sub_router_under_the_prefix() -> None:
    api = Router().get("/", tagged("api-root")).get("/users", tagged("api-users"))
    router = Router().get("/", tagged("root")).nest("/api", api)
    async with TestClient(router) as client:
        assert (await client.get("/")).json()["route"] == "root"
        assert (await client.get("/api")).json()["route"] == "api-root"
        assert (await client.get("/api/users")).json()["route"] == "api-users"
        assert (await client.get("/users")).status_code == 404
        redirect = await client.get("/api/?v=1")
    assert redirect.status_code == 308
    assert redirect.headers["location"] == "/api?v=1"


async def test_nested_params_from_the_prefix_and_the_sub_route() -> None:
    posts = Router().get("/posts/{post_id}", tagged("post"))
    router = Router().nest("/users/{user_id}", posts)
    body = await get_json(router, "/users/u%201/posts/p2")
    assert body["params"] == {"user_id": "u 1", "post_id": "p2"}


async def test_nesting_several_levels_deep() -> None:
    inner = Router().get("/leaf/{id}", tagged("leaf"))
    middle = Router().nest("/inner", inner)
    router = Router().nest("/outer", middle)
    body = await get_json(router, "/outer/inner/leaf/9")
    assert body == {"route": "leaf", "method": "GET", "params": {"id": "9"}}


async def test_routes_added_to_a_sub_router_after_nesting_count() -> None:
    api = Router()
    router = Router().nest("/api", api)
    api.get("/late", tagged("late"))
    assert (await get_json(router, "/api/late"))["route"] == "late"


# -- fallback ---------------------------------------------------------------------------------


async def test_fallback_replaces_the_built_in_404() -> None:
    async def fallback(request: Request) -> Response:
        return Response.text(f"no page at {request.uri.path}", status=404)

    router = Router().get("/", tagged("root")).fallback(fallback)
    async with TestClient(router) as client:
        response = await client.get("/missing/page")
        assert (await client.get("/")).json()["route"] == "root"
    assert response.status_code == 404
    assert response.text == "no page at /missing/page"
    assert response.headers["content-type"] == "text/plain; charset=utf-8"


async def test_fallback_does_not_replace_405() -> None:
    async def fallback() -> str:
        return "fallback"

    router = Router().get("/items", tagged("list")).fallback(fallback)
    async with TestClient(router) as client:
        response = await client.post("/items")
    assert_error_body(response, 405)


async def test_nested_fallback_covers_only_its_prefix() -> None:
    async def api_fallback() -> Response:
        return Response.json({"where": "api"}, status=404)

    async def root_fallback() -> Response:
        return Response.json({"where": "root"}, status=404)

    api = Router().get("/users", tagged("users")).fallback(api_fallback)
    router = Router().nest("/api", api).fallback(root_fallback)
    async with TestClient(router) as client:
        assert (await client.get("/api/nope")).json() == {"where": "api"}
        assert (await client.get("/api/users/1/x")).json() == {"where": "api"}
        assert (await client.get("/elsewhere")).json() == {"where": "root"}
        assert (await client.get("/apix")).json() == {"where": "root"}
        assert (await client.get("/api/users")).json()["route"] == "users"


async def test_nested_fallback_without_an_outer_one_leaves_the_built_in_404_outside() -> None:
    async def api_fallback() -> str:
        return "api fallback"

    router = Router().nest("/api", Router().fallback(api_fallback))
    async with TestClient(router) as client:
        inside = await client.get("/api/anything")
        outside = await client.get("/other")
    assert inside.status_code == 200
    assert inside.text == "api fallback"
    assert_error_body(outside, 404)


async def test_nested_router_without_fallback_uses_the_outer_one() -> None:
    async def root_fallback() -> str:
        return "outer fallback"

    router = Router().nest("/api", Router().get("/x", tagged("x"))).fallback(root_fallback)
    async with TestClient(router) as client:
        response = await client.get("/api/missing")
    assert response.text == "outer fallback"


# -- registration forms -----------------------------------------------------------------------


async def test_route_with_several_methods_mixing_constants_and_strings() -> None:
    router = Router().route("/both", tagged("both"), methods=[Method.GET, "POST"])
    async with TestClient(router) as client:
        get = await client.get("/both")
        post = await client.post("/both")
        put = await client.put("/both")
    assert get.json()["method"] == "GET"
    assert post.json()["method"] == "POST"
    assert get.json()["route"] == post.json()["route"] == "both"
    assert put.status_code == 405
    assert {m.strip() for m in put.headers["allow"].split(",")} == {
        "GET",
        "HEAD",
        "POST",
        "OPTIONS",
    }


@pytest.mark.parametrize("verb", ["get", "post", "put", "delete", "patch"])
async def test_each_verb_method_registers_its_http_method(verb: str) -> None:
    router = getattr(Router(), verb)("/v", tagged(verb))
    async with TestClient(router) as client:
        response = await client.request(verb.upper(), "/v")
    assert response.status_code == 200
    assert response.json()["method"] == verb.upper()


async def test_decorator_form_registers_and_returns_the_function() -> None:
    router = Router()

    @router.get("/items/{item_id}")
    async def get_item(request: Request) -> dict[str, str]:
        return {"item": request.params["item_id"]}

    @router.route("/multi", methods=["PUT", Method.PATCH])
    async def multi(request: Request) -> str:
        return str(request.method)

    assert callable(get_item)
    assert get_item.__name__ == "get_item"
    async with TestClient(router) as client:
        assert (await client.get("/items/5")).json() == {"item": "5"}
        assert (await client.put("/multi")).text == "PUT"
        assert (await client.patch("/multi")).text == "PATCH"


def test_registration_calls_chain() -> None:
    router = Router()
    handler = tagged("x")
    assert router.get("/a", handler) is router
    assert router.route("/b", handler, methods=["GET"]) is router
    assert router.nest("/c", Router()) is router
    assert router.fallback(handler) is router


# -- registration errors ----------------------------------------------------------------------


def test_duplicate_route_raises_at_registration() -> None:
    router = Router().get("/users/{user_id}", tagged("a"))
    with pytest.raises(ConfigurationError):
        router.get("/users/{user_id}", tagged("b"))
    # the same shape with another parameter name matches the same paths
    with pytest.raises(ConfigurationError):
        router.get("/users/{other}", tagged("c"))
    # another method on the same pattern is fine
    assert router.post("/users/{user_id}", tagged("d")) is router


def test_duplicate_method_in_one_route_call_raises() -> None:
    with pytest.raises(ConfigurationError):
        Router().route("/x", tagged("x"), methods=["GET", Method.GET])


async def test_duplicate_route_across_a_nest_raises_on_entry() -> None:
    router = (
        Router().get("/api/users", tagged("a")).nest("/api", Router().get("/users", tagged("b")))
    )
    with pytest.raises(ConfigurationError):
        async with TestClient(router):
            pass


@pytest.mark.parametrize(
    "pattern",
    [
        "users",  # no leading slash
        "",
        "/a//b",  # empty segment
        "/{}",  # empty name
        "/{*}",  # empty wildcard name
        "/a{b}",  # literal mixed with a parameter
        "/{a}{b}",
        "/{a",  # unbalanced
        "/a}",
        "/{1x}",  # not an identifier
        "/{*rest}/more",  # wildcard not last
        "/{a}/{a}",  # repeated name
    ],
)
def test_malformed_pattern_raises_at_registration(pattern: str) -> None:
    with pytest.raises(ConfigurationError):
        Router().get(pattern, tagged("bad"))


@pytest.mark.parametrize("method", ["get", "", "GE T", "G\nET"])
def test_invalid_method_name_raises_at_registration(method: str) -> None:
    with pytest.raises(ConfigurationError):
        Router().route("/x", tagged("x"), methods=[method])
