"""The registration keywords (checked at once, carried into ``RouteInfo``), route names with
nest names, and the names' conflicts at freeze."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from trioframe import ConfigurationError, Path, Response, Router, WebSocketConnection, freeze


async def list_users() -> Response:
    return Response.text("users")


async def get_user(user_id: Path[int]) -> Response:
    return Response.text(str(user_id))


async def login_form() -> Response:
    return Response.text("form")


async def get_item(item_id: Path[int]) -> Response:
    return Response.text(str(item_id))


@attrs.frozen
class User:
    name: str


VERBS = ["get", "post", "put", "patch", "delete", "head", "options"]


# -- the keywords -----------------------------------------------------------------------------
@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_carries_its_keywords_into_route_info(verb: str) -> None:
    router = getattr(Router(), verb)(
        "/users",
        list_users,
        name="users",
        status=201,
        tags=["users", "admin"],
        summary="The users",
        description="Every user, newest first.",
        deprecated=True,
        include_in_schema=False,
        responses={404: "no users", 200: list[User]},
    )
    [info] = freeze(router).routes
    assert (info.name, info.status, info.tags) == ("users", 201, ("users", "admin"))
    assert (info.summary, info.description) == ("The users", "Every user, newest first.")
    assert (info.deprecated, info.include_in_schema) == (True, False)
    assert info.responses == {404: "no users", 200: list[User]}


def test_the_keywords_default_to_nothing_said() -> None:
    [info] = freeze(Router().get("/users", list_users)).routes
    assert info.name == "list_users"
    assert (info.status, info.tags, info.summary, info.description) == (None, (), None, None)
    assert (info.deprecated, info.include_in_schema, info.responses) == (False, True, None)


def test_the_decorators_route_and_websocket_take_the_keywords() -> None:
    router = Router()

    @router.post("/users", name="create", status=201, tags=("users",))
    async def create_user() -> Response:
        return Response.text("made", status=201)

    @router.websocket("/feed", subprotocols=["v1"], name="feed", summary="Live users")
    async def feed(ws: WebSocketConnection) -> None:
        await ws.close()

    router.route("/both", list_users, ["GET", "POST"], name="both", deprecated=True)
    infos = freeze(router).routes
    assert [(i.name, i.methods) for i in infos] == [
        ("create", ("POST",)),
        ("feed", ("GET",)),
        ("both", ("GET",)),
        ("both", ("POST",)),
    ]
    assert infos[0].status == 201 and infos[0].tags == ("users",)
    assert infos[1].summary == "Live users" and infos[1].websocket
    assert infos[3].deprecated


def test_the_responses_are_a_read_only_copy() -> None:
    responses = {404: "no such user"}
    [info] = freeze(Router().get("/u/{user_id}", get_user, responses=responses)).routes
    responses[500] = "later"
    assert info.responses == {404: "no such user"}
    with pytest.raises(TypeError):
        info.responses[500] = "no"  # type: ignore[index]


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        (
            {"status": 1000},
            "GET /users: status=1000 is not an HTTP status; pass an int from 100 to 599 "
            "(such as status=201)",
        ),
        (
            {"status": "201"},
            "GET /users: status='201' is not an HTTP status; pass an int from 100 to 599 "
            "(such as status=201)",
        ),
        (
            {"status": True},
            "GET /users: status=True is not an HTTP status; pass an int from 100 to 599 "
            "(such as status=201)",
        ),
        (
            {"responses": [404]},
            "GET /users: responses must map statuses to a description or a type, "
            "such as responses={404: 'no such user'}, not [404]",
        ),
        (
            {"responses": {"404": "missing"}},
            "GET /users: responses key '404' is not a status; use an int from 100 to 599",
        ),
        (
            {"responses": {99: "too low"}},
            "GET /users: responses key 99 is not a status; use an int from 100 to 599",
        ),
        (
            {"responses": {404: 3}},
            "GET /users: responses[404] must be a description (a str) or the type of the "
            "body, not 3",
        ),
        ({"name": ""}, "GET /users: name must be a non-empty str, not ''"),
        ({"name": 3}, "GET /users: name must be a non-empty str, not 3"),
        (
            {"tags": "users"},
            "GET /users: tags must be a list of str, such as tags=['users'], not 'users'",
        ),
        ({"tags": ["users", 1]}, "GET /users: each tag must be a non-empty str, not 1"),
        ({"summary": 1}, "GET /users: summary must be a str or None, not 1"),
        ({"description": b"x"}, "GET /users: description must be a str or None, not b'x'"),
        ({"deprecated": "yes"}, "GET /users: deprecated must be True or False, not 'yes'"),
        (
            {"include_in_schema": 0},
            "GET /users: include_in_schema must be True or False, not 0",
        ),
    ],
)
def test_a_bad_keyword_is_refused_at_registration(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as direct:
        Router().get("/users", list_users, **keywords)
    with pytest.raises(ConfigurationError) as decorator:
        Router().get("/users", **keywords)  # before there is a handler to decorate
    assert str(direct.value) == str(decorator.value) == message


def test_the_route_being_registered_is_named_in_the_message() -> None:
    with pytest.raises(ConfigurationError, match=r"^WebSocket /ws: status=7 "):
        Router().websocket("/ws", status=7)
    with pytest.raises(ConfigurationError, match=r"^GET/POST /x: name must be"):
        Router().route("/x", list_users, ["GET", "POST"], name="")


def test_an_unknown_keyword_is_a_type_error_like_any_call() -> None:
    with pytest.raises(TypeError, match=r"^get\(\) got an unexpected keyword argument 'nmae'$"):
        Router().get("/users", list_users, nmae="users")  # type: ignore[call-overload]


# -- names ------------------------------------------------------------------------------------
def test_a_callable_object_is_named_after_its_class() -> None:
    class Lister:
        async def __call__(self) -> Response:
            return Response.text("users")

    [info] = freeze(Router().get("/users", Lister())).routes
    assert info.name == "Lister"


def test_nest_names_prefix_the_route_names_and_compose() -> None:
    v1 = Router().get("/users/{user_id}", get_user).get("/users", list_users, name="users")
    api = Router().nest("/v1", v1, name="v1").get("/", list_users, name="index")
    router = Router().nest("/api", api, name="api").nest("/plain", Router().get("/", list_users))
    app = freeze(router)
    assert [(info.name, info.path) for info in app.routes] == [
        ("api.index", "/api"),
        ("api.v1.get_user", "/api/v1/users/{user_id}"),
        ("api.v1.users", "/api/v1/users"),
        ("list_users", "/plain"),
    ]
    assert app.path_for("api.v1.get_user", user_id=7) == "/api/v1/users/7"
    assert app.path_for("api.v1.users") == "/api/v1/users"
    assert app.path_for("api.index") == "/api"


def test_one_router_nested_twice_under_different_names() -> None:
    users = Router().get("/{user_id}", get_user, name="user")
    app = freeze(Router().nest("/a", users, name="a").nest("/b", users, name="b"))
    assert app.path_for("a.user", user_id=1) == "/a/1"
    assert app.path_for("b.user", user_id=1) == "/b/1"


@pytest.mark.parametrize("name", ["", ".api", "api.", 3])
def test_a_bad_nest_name_is_refused(name: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Router().nest("/api", Router(), name=name)
    assert str(caught.value) == (
        "nest('/api', ...): name must be a non-empty str such as 'api' "
        f"(without a leading or trailing dot), not {name!r}"
    )


def test_two_routes_given_one_name_fail_at_freeze_naming_both_paths() -> None:
    router = (
        Router().get("/users", list_users, name="users").get("/people", list_users, name="users")
    )
    with pytest.raises(ConfigurationError) as caught:
        freeze(router)
    assert str(caught.value) == (
        "two routes are named 'users': GET /users and GET /people; "
        "give each its own name (a route name stands for one path)"
    )


def test_a_nest_name_can_make_two_given_names_collide() -> None:
    inner = Router().get("/x", list_users, name="x")
    router = Router().get("/y", list_users, name="api.x").nest("/api", inner, name="api")
    with pytest.raises(ConfigurationError) as caught:
        freeze(router)
    assert str(caught.value) == (
        "two routes are named 'api.x': GET /y and GET /api/x; "
        "give each its own name (a route name stands for one path)"
    )


def test_routes_of_one_path_share_a_name_without_conflict() -> None:
    router = (
        Router()
        .get("/login", list_users, name="login")
        .post("/login", login_form, name="login")
        .route("/items/{item_id}", get_item, ["GET", "PUT"])
    )
    app = freeze(router)
    assert app.path_for("login") == "/login"
    assert app.path_for("get_item", item_id=3) == "/items/3"


def test_a_default_name_shared_by_two_paths_is_refused_only_by_path_for() -> None:
    router = Router().get("/users", list_users).nest("/admin", Router().get("/users", list_users))
    app = freeze(router)  # no conflict at freeze: nobody chose these names
    with pytest.raises(ValueError) as caught:
        app.path_for("list_users")
    assert str(caught.value) == (
        "path_for('list_users'): 2 routes have the default name 'list_users' "
        "(GET /users, GET /admin/users); register the one you mean with name=... "
        "to tell them apart"
    )


def test_a_given_name_wins_over_the_same_default_name() -> None:
    async def home() -> Response:
        return Response.text("home")

    router = Router().get("/old-home", home).get("/", list_users, name="home")
    assert freeze(router).path_for("home") == "/"
