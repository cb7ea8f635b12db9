"""The Router builder: registration forms, validation, duplicates, nesting, fallbacks."""

from __future__ import annotations

from typing import Any

import pytest

from trioframe._errors import ConfigurationError
from trioframe._http.method import Method
from trioframe._routing import (
    Endpoint,
    Found,
    NoRoute,
    Redirect,
    Router,
    RouteTable,
    WrongMethod,
)

from .helpers import freeze, h


def target(table: RouteTable[Endpoint], method: str, path: str) -> Endpoint:
    result = table.match(method, path)
    assert isinstance(result, Found), result
    return result.target


@pytest.mark.parametrize(
    ("verb", "method"),
    [
        ("get", "GET"),
        ("post", "POST"),
        ("put", "PUT"),
        ("delete", "DELETE"),
        ("patch", "PATCH"),
        ("head", "HEAD"),
        ("options", "OPTIONS"),
    ],
)
def test_each_verb_registers_its_method_and_chains(verb: str, method: str) -> None:
    router = Router()
    assert getattr(router, verb)("/x", h) is router
    endpoint = target(freeze(router), method, "/x")
    assert endpoint.method == method and type(endpoint.method) is Method
    assert endpoint.handler is h
    assert isinstance(freeze(router).match("TRACE", "/x"), WrongMethod)


def test_route_with_several_methods_normalises_to_method() -> None:
    router = Router()
    assert router.route("/x", h, methods=[Method.GET, "POST", "PROPFIND"]) is router
    table = freeze(router)
    for method in ("GET", "POST", "PROPFIND"):
        endpoint = target(table, method, "/x")
        assert type(endpoint.method) is Method and endpoint.method == method
    assert freeze(Router().route("/y", h, methods="PUT")).endpoints[0].method == Method.PUT


@pytest.mark.parametrize("methods", [["get"], ["Get"], [""], ["GE T"], [42], []])
def test_route_rejects_bad_methods(methods: list[Any]) -> None:
    with pytest.raises(ConfigurationError):
        Router().route("/x", h, methods=methods)


def test_lower_case_method_hint() -> None:
    with pytest.raises(ConfigurationError, match="'GET'"):
        Router().route("/x", h, methods=["get"])


def test_decorator_form_returns_the_function() -> None:
    router = Router()

    @router.get("/items/{id}")
    def get_item() -> str:
        return "item"

    @router.route("/multi", methods=["PUT", "PATCH"])
    def multi() -> str:
        return "multi"

    @router.fallback()
    def fallback() -> str:
        return "fallback"

    assert get_item() == "item" and multi() == "multi" and fallback() == "fallback"
    table = freeze(router)
    assert target(table, "GET", "/items/1").handler is get_item
    assert target(table, "PATCH", "/multi").handler is multi
    missing = table.match("GET", "/missing")
    assert isinstance(missing, NoRoute) and missing.fallback is not None
    assert missing.fallback.handler is fallback


def test_non_callable_handler_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="not callable"):
        Router().get("/x", "not a handler")  # type: ignore[call-overload]
    with pytest.raises(ConfigurationError, match="not callable"):
        Router().fallback(42)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "pattern", ["x", "/a/{}", "/{1x}", "/{*r}/x", "/{a}/{a}", "/a{b}", "/{a", "//"]
)
def test_malformed_pattern_raises_at_registration(pattern: str) -> None:
    router = Router()
    with pytest.raises(ConfigurationError, match="invalid route pattern"):
        router.get(pattern, h)
    with pytest.raises(ConfigurationError, match="invalid route pattern"):
        router.get(pattern)  # the decorator form checks before it is applied


def test_duplicate_route_raises_at_registration() -> None:
    router = Router().get("/users/{id}", h)
    with pytest.raises(ConfigurationError, match=r"GET /users/\{id\}"):
        router.get("/users/{id}", h)
    with pytest.raises(
        ConfigurationError, match=r"GET /users/\{uid\}.*same paths as /users/\{id\}"
    ):
        router.get("/users/{uid}", h)
    with pytest.raises(ConfigurationError, match=r"GET /users/\{id\}"):
        router.route("/users/{id}", h, methods=["POST", "GET"])
    # the failed call registered nothing: POST is still free
    router.post("/users/{id}", h)
    with pytest.raises(ConfigurationError, match="PUT /p"):
        Router().route("/p", h, methods=["PUT", "PUT"])


def test_different_method_or_trailing_slash_is_not_a_duplicate() -> None:
    router = Router().get("/users", h).post("/users", h).get("/users/", h).get("/users/{id}", h)
    table = freeze(router)
    assert target(table, "GET", "/users/").pattern == "/users/"
    assert target(table, "POST", "/users").pattern == "/users"


def test_duplicate_via_nest_raises_at_freeze() -> None:
    sub = Router().get("/x", h)
    root = Router().get("/api/x", h).nest("/api", sub)
    with pytest.raises(ConfigurationError, match="GET /api/x"):
        freeze(root)


def test_nested_root_collides_with_the_prefix_route() -> None:
    root = Router().get("/api", h).nest("/api", Router().get("/", h))
    with pytest.raises(ConfigurationError, match="GET /api"):
        freeze(root)


def test_nested_param_shape_collision() -> None:
    root = Router().get("/u/{id}", h).nest("/u", Router().get("/{name}", h))
    with pytest.raises(ConfigurationError, match=r"GET /u/\{name\}"):
        freeze(root)


def test_two_routers_at_the_same_prefix() -> None:
    api = Router().nest("/v1", Router().get("/a", h))
    root = Router().nest("/api", api).nest("/api/v1", Router().get("/b", h))
    with pytest.raises(ConfigurationError, match="same prefix"):
        freeze(root)


@pytest.mark.parametrize("prefix", ["/", "", "api", "/api/", "/{*rest}"])
def test_bad_nest_prefix(prefix: str) -> None:
    with pytest.raises(ConfigurationError, match="nest prefix"):
        Router().nest(prefix, Router())


def test_nest_needs_another_router() -> None:
    router = Router()
    with pytest.raises(ConfigurationError):
        router.nest("/a", router)
    with pytest.raises(ConfigurationError):
        router.nest("/a", h)  # type: ignore[arg-type]


def test_nesting_cycle_is_reported_at_freeze() -> None:
    a, b = Router(), Router()
    a.nest("/b", b)
    b.nest("/a", a)
    with pytest.raises(ConfigurationError, match="cycle"):
        freeze(a)


def test_nest_root_and_trailing_slash_redirect() -> None:
    sub = Router().get("/", h).get("/items", h)
    root = Router()
    assert root.nest("/api", sub) is root
    table = freeze(root)
    endpoint = target(table, "GET", "/api")
    assert endpoint.pattern == "/api" and endpoint.routers == (root, sub)
    assert table.match("GET", "/api/") == Redirect("/api")
    assert target(table, "GET", "/api/items").pattern == "/api/items"


def test_multi_level_nest_with_params_in_prefixes() -> None:
    repos = Router().get("/", h).get("/issues/{number}", h)
    org = Router().nest("/repos/{repo}", repos)
    root = Router().nest("/orgs/{org}", org)
    table = freeze(root)
    result = table.match("GET", "/orgs/trio/repos/trioframe/issues/7")
    assert isinstance(result, Found)
    assert result.params == {"org": "trio", "repo": "trioframe", "number": "7"}
    assert result.target.pattern == "/orgs/{org}/repos/{repo}/issues/{number}"
    assert result.target.param_names == ("org", "repo", "number")
    assert result.target.routers == (root, org, repos)
    root_of_repos = table.match("GET", "/orgs/trio/repos/trioframe")
    assert isinstance(root_of_repos, Found)
    assert root_of_repos.params == {"org": "trio", "repo": "trioframe"}
    assert table.match("GET", "/orgs/trio/repos/trioframe/") == Redirect(
        "/orgs/trio/repos/trioframe"
    )


def test_param_name_repeated_between_prefix_and_route() -> None:
    root = Router().nest("/orgs/{id}", Router().get("/items/{id}", h))
    with pytest.raises(ConfigurationError, match="used twice"):
        freeze(root)


def test_routes_added_after_nest_are_included() -> None:
    sub = Router()
    root = Router().nest("/api", sub)
    sub.get("/late", h)
    assert target(freeze(root), "GET", "/api/late").routers == (root, sub)


def test_same_router_nested_twice() -> None:
    shared = Router().get("/x", h)
    table = freeze(Router().nest("/a", shared).nest("/b", shared))
    assert target(table, "GET", "/a/x").pattern == "/a/x"
    assert target(table, "GET", "/b/x").pattern == "/b/x"


def test_405_routers_are_the_chain_the_routes_share() -> None:
    sub = Router().post("/x", h)
    root = Router().get("/api/x", h).nest("/api", sub)
    result = freeze(root).match("DELETE", "/api/x")
    assert isinstance(result, WrongMethod)
    assert result.scope == (root,)
    only_sub = freeze(Router().nest("/api", sub)).match("GET", "/api/x")
    assert isinstance(only_sub, WrongMethod) and only_sub.scope[-1] is sub


def test_fallback_twice_is_refused() -> None:
    router = Router().fallback(h)
    with pytest.raises(ConfigurationError, match="already has a fallback"):
        router.fallback(h)


def test_middleware_and_state_are_kept_in_order() -> None:
    def mw1() -> None: ...
    def mw2() -> None: ...

    router = Router()
    assert router.middleware(mw1).middleware(mw2) is router
    assert router.state(1).state("two") is router
    assert router.middlewares == [mw1, mw2]
    assert router.states == [1, "two"]


def test_freeze_does_not_follow_later_changes() -> None:
    router = Router().get("/a", h)
    table = freeze(router)
    router.get("/b", h)
    assert isinstance(table.match("GET", "/b"), NoRoute)
    assert target(freeze(router), "GET", "/b").pattern == "/b"


def test_connect_routes_are_refused_at_registration() -> None:
    async def tunnel() -> None: ...

    with pytest.raises(ConfigurationError, match="CONNECT"):
        Router().route("/", tunnel, methods=["CONNECT"])
