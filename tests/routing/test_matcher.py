"""RouteTable.match: precedence, backtracking, decoding, 405/OPTIONS/HEAD, redirects, 404."""

from __future__ import annotations

from typing import Any

import pytest

from trioframe._http.method import Method
from trioframe._routing import (
    AutoOptions,
    BadPath,
    Endpoint,
    Found,
    NoRoute,
    Redirect,
    Router,
    RouteTable,
    WrongMethod,
)

from .helpers import freeze, h


def found(
    table: RouteTable[Endpoint], path: str, method: str = "GET"
) -> tuple[str, dict[str, str]]:
    result = table.match(method, path)
    assert isinstance(result, Found), result
    return result.target.pattern, result.params


def test_static_root_and_params() -> None:
    table = freeze(Router().get("/", h).get("/users/{user_id}/posts/{post_id}", h))
    assert found(table, "/") == ("/", {})
    assert found(table, "/users/7/posts/42") == (
        "/users/{user_id}/posts/{post_id}",
        {"user_id": "7", "post_id": "42"},
    )
    assert isinstance(table.match("GET", "/users/7/posts"), NoRoute)


@pytest.mark.parametrize("reverse", [False, True])
def test_precedence_does_not_depend_on_order(reverse: bool) -> None:
    patterns = ["/a/{*rest}", "/a/{x}", "/a/b"]
    router = Router()
    for pattern in reversed(patterns) if reverse else patterns:
        router.get(pattern, h)
    table = freeze(router)
    assert found(table, "/a/b") == ("/a/b", {})
    assert found(table, "/a/c") == ("/a/{x}", {"x": "c"})
    assert found(table, "/a/c/d") == ("/a/{*rest}", {"rest": "c/d"})


@pytest.mark.parametrize("reverse", [False, True])
def test_backtracking_from_a_literal_to_a_param(reverse: bool) -> None:
    patterns = ["/a/{x}/c", "/a/b/d"]
    router = Router()
    for pattern in reversed(patterns) if reverse else patterns:
        router.get(pattern, h)
    table = freeze(router)
    assert found(table, "/a/b/c") == ("/a/{x}/c", {"x": "b"})
    assert found(table, "/a/b/d") == ("/a/b/d", {})


def test_backtracking_to_a_wildcard_drops_partial_captures() -> None:
    table = freeze(Router().get("/a/{x}/c", h).get("/{*rest}", h))
    assert found(table, "/a/b/z") == ("/{*rest}", {"rest": "a/b/z"})


def test_wildcard_captures_one_or_more_segments() -> None:
    table = freeze(Router().get("/files/{*rest}", h))
    assert found(table, "/files/a") == ("/files/{*rest}", {"rest": "a"})
    assert found(table, "/files/a/b/c.txt") == ("/files/{*rest}", {"rest": "a/b/c.txt"})
    assert found(table, "/files/a/") == ("/files/{*rest}", {"rest": "a/"})
    assert isinstance(table.match("GET", "/files/"), NoRoute)
    assert isinstance(table.match("GET", "/files"), NoRoute)


def test_param_does_not_match_an_empty_segment() -> None:
    table = freeze(Router().get("/users/{id}/x", h))
    assert isinstance(table.match("GET", "/users//x"), NoRoute)


def test_percent_decoding_happens_after_splitting() -> None:
    table = freeze(Router().get("/users/{name}", h).get("/files/{*rest}", h))
    assert found(table, "/users/a%2Fb") == ("/users/{name}", {"name": "a/b"})
    assert found(table, "/users/caf%C3%A9") == ("/users/{name}", {"name": "caf\u00e9"})
    assert found(table, "/users/a%20b") == ("/users/{name}", {"name": "a b"})
    assert found(table, "/files/x%2Fy/z") == ("/files/{*rest}", {"rest": "x/y/z"})


def test_literals_compare_with_decoded_segments() -> None:
    table = freeze(Router().get("/users", h).get("/caf\u00e9", h).get("/a/{x}", h))
    assert found(table, "/us%65rs") == ("/users", {})
    assert found(table, "/caf%c3%a9") == ("/caf\u00e9", {})
    # an encoded slash never splits: /a%2Fb is one segment, not /a/b
    assert isinstance(table.match("GET", "/a%2Fb"), NoRoute)


def test_literal_with_percent_sign_needs_the_encoded_form() -> None:
    table = freeze(Router().get("/100%", h))
    assert found(table, "/100%25") == ("/100%", {})
    assert isinstance(table.match("GET", "/100%"), BadPath)


@pytest.mark.parametrize("path", ["/%zz", "/x/%f", "/x/%", "/users/%g1", "/a%2"])
def test_bad_percent_encoding(path: str) -> None:
    table = freeze(Router().get("/{*rest}", h))
    result = table.match("GET", path)
    assert isinstance(result, BadPath)
    assert "percent-encoding" in result.message


@pytest.mark.parametrize("path", ["/users/a%00b", "/users/%00", "/files/x/%00/y"])
def test_percent_encoded_nul_is_a_bad_path(path: str) -> None:
    table = freeze(Router().get("/users/{name}", h).get("/files/{*rest}", h))
    result = table.match("GET", path)
    assert isinstance(result, BadPath)
    assert "percent-encoding" in result.message
    assert found(table, "/users/a%01b") == ("/users/{name}", {"name": "a\x01b"})


@pytest.mark.parametrize("path", ["/%ff", "/x/%C3", "/%C3%28", "/%ed%a0%80"])
def test_bad_utf8_after_decoding(path: str) -> None:
    table = freeze(Router().get("/{*rest}", h))
    result = table.match("GET", path)
    assert isinstance(result, BadPath)
    assert "UTF-8" in result.message


def test_path_without_leading_slash_is_bad() -> None:
    table = freeze(Router().get("/", h))
    assert isinstance(table.match("GET", "users"), BadPath)
    assert isinstance(table.match("GET", ""), BadPath)


def test_method_not_allowed_lists_methods_in_a_stable_order() -> None:
    router = Router().delete("/items/{id}", h).post("/items/{id}", h).get("/items/{id}", h)
    router.route("/items/{id}", h, methods=["PROPFIND"]).put("/items/{id}", h)
    table = freeze(router)
    result = table.match("PATCH", "/items/1")
    assert isinstance(result, WrongMethod)
    assert result.allow == ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PROPFIND")
    assert result.scope == (router,)


def test_method_not_allowed_without_get_has_no_head() -> None:
    table = freeze(Router().post("/submit", h))
    result = table.match("GET", "/submit")
    assert isinstance(result, WrongMethod)
    assert result.allow == ("POST", "OPTIONS")
    assert isinstance(table.match("HEAD", "/submit"), WrongMethod)


def test_methods_are_case_sensitive_when_matching() -> None:
    table = freeze(Router().get("/x", h))
    assert isinstance(table.match("get", "/x"), WrongMethod)


def test_path_decides_before_method() -> None:
    table = freeze(Router().get("/users/{id}", h).post("/users/new", h))
    result = table.match("GET", "/users/new")
    assert isinstance(result, WrongMethod)
    assert result.allow == ("POST", "OPTIONS")


def test_auto_options() -> None:
    router = Router().get("/x/{id}", h).post("/x/{id}", h)
    table = freeze(router)
    result = table.match("OPTIONS", "/x/1")
    assert isinstance(result, AutoOptions)
    assert result.allow == ("GET", "HEAD", "POST", "OPTIONS")
    assert result.scope == (router,)
    assert isinstance(table.match("OPTIONS", "/nothing"), NoRoute)


def test_auto_options_on_a_static_path() -> None:
    table = freeze(Router().put("/static", h))
    result = table.match("OPTIONS", "/static")
    assert isinstance(result, AutoOptions)
    assert result.allow == ("PUT", "OPTIONS")


def test_explicit_options_route_wins() -> None:
    table = freeze(Router().get("/x", h).options("/x", h))
    result = table.match("OPTIONS", "/x")
    assert isinstance(result, Found) and result.target.method == Method.OPTIONS


def test_head_uses_get() -> None:
    table = freeze(Router().get("/x/{id}", h).get("/static", h))
    for path in ("/x/1", "/static"):
        result = table.match("HEAD", path)
        assert isinstance(result, Found)
        assert result.target.method == Method.GET


def test_explicit_head_wins_in_either_order() -> None:
    def get_handler() -> None: ...
    def head_handler() -> None: ...

    for router in (
        Router().get("/x", get_handler).head("/x", head_handler),
        Router().head("/x", head_handler).get("/x", get_handler),
    ):
        table = freeze(router)
        head = table.match("HEAD", "/x")
        assert isinstance(head, Found) and head.target.handler is head_handler
        get = table.match("GET", "/x")
        assert isinstance(get, Found) and get.target.handler is get_handler


def test_redirect_adds_a_trailing_slash() -> None:
    table = freeze(Router().get("/users/", h).get("/a/{x}/", h))
    assert table.match("GET", "/users") == Redirect("/users/")
    assert table.match("GET", "/a/b%2Fc") == Redirect("/a/b%2Fc/")


def test_redirect_removes_a_trailing_slash() -> None:
    table = freeze(Router().get("/users", h).get("/a/{x}", h))
    assert table.match("GET", "/users/") == Redirect("/users")
    assert table.match("GET", "/a/caf%C3%A9/") == Redirect("/a/caf%C3%A9")


def test_redirect_happens_whatever_the_method() -> None:
    table = freeze(Router().get("/users", h))
    assert table.match("POST", "/users/") == Redirect("/users")


def test_no_redirect_when_both_forms_are_registered() -> None:
    table = freeze(Router().get("/users", h).get("/users/", h))
    assert found(table, "/users") == ("/users", {})
    assert found(table, "/users/") == ("/users/", {})


def test_no_redirect_when_neither_form_matches() -> None:
    table = freeze(Router().get("/users", h))
    assert isinstance(table.match("GET", "/other/"), NoRoute)
    assert isinstance(table.match("GET", "/"), NoRoute)


def test_double_slash_redirects_only_to_a_single_slash() -> None:
    table = freeze(Router().get("/", h))
    assert table.match("GET", "//") == Redirect("/")


def test_params_are_a_fresh_dict_per_match() -> None:
    table = freeze(Router().get("/x/{id}", h).get("/s", h))
    first = table.match("GET", "/x/1")
    assert isinstance(first, Found)
    first.params["id"] = "changed"
    assert found(table, "/x/1") == ("/x/{id}", {"id": "1"})
    static = table.match("GET", "/s")
    assert isinstance(static, Found)
    static.params["x"] = "y"
    assert found(table, "/s") == ("/s", {})


def test_not_found_without_fallback() -> None:
    router = Router().get("/x", h)
    result = freeze(router).match("GET", "/y")
    assert result == NoRoute(None, (router,))


def test_nested_fallbacks_most_specific_wins() -> None:
    def root_fb() -> None: ...
    def api_fb() -> None: ...

    v1 = Router().get("/items", h)
    api = Router().get("/users", h).fallback(api_fb).nest("/v1", v1)
    other = Router().get("/", h)
    root = Router().get("/", h).fallback(root_fb).nest("/api", api).nest("/other", other)
    table = freeze(root)

    def fallback_of(path: str) -> tuple[Any, tuple[Router, ...]]:
        result = table.match("GET", path)
        assert isinstance(result, NoRoute), result
        assert result.fallback is not None
        assert result.fallback.method is None
        assert result.fallback.routers == result.scope
        return result.fallback.handler, result.scope

    assert fallback_of("/nope") == (root_fb, (root,))
    assert fallback_of("/apix") == (root_fb, (root,))
    assert fallback_of("/api") == (api_fb, (root, api))
    assert fallback_of("/api/nope/deeper") == (api_fb, (root, api))
    # v1 has no fallback of its own: api's applies, with v1's chain
    assert fallback_of("/api/v1/nope") == (api_fb, (root, api, v1))
    # other has none either: the root's applies, under other's chain
    assert fallback_of("/other/nope") == (root_fb, (root, other))


def test_fallback_scopes_with_params_prefer_literals() -> None:
    def lit_fb() -> None: ...
    def param_fb() -> None: ...

    root = Router()
    root.nest("/a/{x}", Router().get("/p", h).fallback(param_fb))
    root.nest("/a/b", Router().get("/q", h).fallback(lit_fb))
    table = freeze(root)
    for path, expected in (("/a/b/zz", lit_fb), ("/a/c/zz", param_fb)):
        result = table.match("GET", path)
        assert isinstance(result, NoRoute) and result.fallback is not None
        assert result.fallback.handler is expected
    assert table.match("GET", "/a/") == NoRoute(None, (root,))


def test_redirect_beats_fallback() -> None:
    table = freeze(Router().get("/users", h).fallback(h))
    assert table.match("GET", "/users/") == Redirect("/users")


def test_prepare_is_called_once_per_endpoint_and_its_value_is_returned() -> None:
    calls: list[Endpoint] = []
    prepared: dict[tuple[str | None, str], object] = {}

    def prepare(endpoint: Endpoint) -> object:
        calls.append(endpoint)
        prepared[(endpoint.method, endpoint.pattern)] = target = object()
        return target

    sub = Router().get("/", h).post("/", h).fallback(h)
    router = Router().route("/x/{id}", h, methods=["GET", "PUT"]).get("/s", h).nest("/api", sub)
    table = router.freeze(prepare, lambda chain: chain)
    assert [(e.method, e.pattern) for e in calls] == [
        (Method.GET, "/x/{id}"),
        (Method.PUT, "/x/{id}"),
        (Method.GET, "/s"),
        (Method.GET, "/api"),
        (Method.POST, "/api"),
        (None, "/api"),
    ]
    assert tuple(calls) == table.endpoints
    for method, path, key in [
        ("GET", "/x/1", ("GET", "/x/{id}")),
        ("GET", "/x/2", ("GET", "/x/{id}")),
        ("PUT", "/x/1", ("PUT", "/x/{id}")),
        ("GET", "/s", ("GET", "/s")),
        ("HEAD", "/s", ("GET", "/s")),
        ("POST", "/api", ("POST", "/api")),
    ]:
        result = table.match(method, path)
        assert isinstance(result, Found)
        assert result.target is prepared[key]
    missing = table.match("GET", "/api/missing")
    assert isinstance(missing, NoRoute) and missing.fallback is prepared[(None, "/api")]
    assert len(calls) == 6


@pytest.mark.parametrize("path", ["/\\evil.example/", "/\\evil.example", "//evil.example/"])
def test_trailing_slash_redirect_never_leaves_the_site(path: str) -> None:
    # "/\evil.example" as a Location is "//evil.example" to a browser: another host.
    table = freeze(Router().get("/{name}", h))
    result = table.match("GET", path)
    assert not isinstance(result, Redirect), result
