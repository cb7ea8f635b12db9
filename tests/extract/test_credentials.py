"""Credentials: ``BearerToken``, ``BasicCredentials``, ``APIKey`` and ``Realm``, their 401s,
their use in dependencies, and what ``ParamInfo`` says of them."""

from __future__ import annotations

import base64
from typing import Annotated, Any, Self

import attrs
import pytest
from annotated_types import MinLen

from trioframe import (
    Alias,
    APIKey,
    BasicCredentials,
    BearerToken,
    ConfigurationError,
    Error,
    FromRequest,
    HeaderValue,
    Json,
    ParamInfo,
    Realm,
    Request,
    Response,
    Router,
    SecurityScheme,
    freeze,
)
from trioframe._extract.plan import build_plan
from trioframe.testing import TestClient

BASIC_CHALLENGE = 'Basic realm="api", charset="UTF-8"'


def _basic(raw: bytes) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(raw).decode("ascii")}


def _refused(response: Any, challenge: str, error: str) -> None:
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == challenge
    assert response.json() == {
        "status": 401,
        "error": "Unauthorized",
        "message": "not authenticated",
        "errors": [error],
    }


def _failure(handler: Any) -> str:
    with pytest.raises(ConfigurationError) as info:
        build_plan(handler)
    prefix = f"handler {handler.__module__}.{handler.__qualname__}, "
    message = str(info.value)
    assert message.startswith(prefix)
    return message.removeprefix(prefix)


# -- BearerToken -----------------------------------------------------------------------------
async def bearer(token: BearerToken) -> Response:
    return Response.json(token)


async def test_a_bearer_token_is_the_str_after_the_scheme() -> None:
    async with TestClient(Router().get("/", bearer)) as client:
        for sent in [
            "Bearer abc.DEF-123_~+/==",
            "bearer abc.DEF-123_~+/==",
            "BEARER   abc.DEF-123_~+/==",
        ]:
            response = await client.get("/", headers={"authorization": sent})
            assert response.json() == "abc.DEF-123_~+/==", sent


async def test_a_missing_bearer_token_is_a_401_with_a_challenge() -> None:
    async with TestClient(Router().get("/", bearer)) as client:
        _refused(await client.get("/"), "Bearer", "header.authorization: required")


@pytest.mark.parametrize(
    ("sent", "error"),
    [
        ("Bearer", "expected a Bearer token"),  # empty
        ("Bearer a b", "expected a Bearer token"),
        ("Bearer a=b", "expected a Bearer token"),
        ("Bearer ä", "expected a Bearer token"),
        ("Basic YTpi", "expected the Bearer scheme"),
        ("Token abc", "expected the Bearer scheme"),
        ("Bearerabc", "expected the Bearer scheme"),
    ],
)
async def test_a_malformed_bearer_token_is_a_401(sent: str, error: str) -> None:
    async with TestClient(Router().get("/", bearer)) as client:
        response = await client.get("/", headers={"authorization": sent.encode("latin-1")})
        _refused(response, "Bearer", f"header.authorization: {error}")


async def test_the_first_authorization_header_counts() -> None:
    async with TestClient(Router().get("/", bearer)) as client:
        sent = [("authorization", "Bearer first"), ("authorization", "Bearer second")]
        assert (await client.get("/", headers=sent)).json() == "first"


async def test_an_optional_bearer_token_is_the_default_when_absent_or_another_scheme() -> None:
    async def maybe(token: BearerToken | None = None, other: BearerToken = "anonymous") -> Response:
        return Response.json([token, other])

    async def no_default(token: BearerToken | None) -> Response:
        return Response.json(token)

    router = Router().get("/", maybe).get("/bare", no_default)
    async with TestClient(router) as client:
        assert (await client.get("/")).json() == [None, "anonymous"]
        assert (await client.get("/bare")).json() is None
        basic = _basic(b"ada:pw")
        assert (await client.get("/", headers=basic)).json() == [None, "anonymous"]
        sent = {"authorization": "Bearer t"}
        assert (await client.get("/", headers=sent)).json() == ["t", "t"]
        _refused(
            await client.get("/", headers={"authorization": "Bearer a b"}),
            "Bearer",
            "header.authorization: expected a Bearer token",
        )


async def test_a_realm_names_the_bearer_realm() -> None:
    async def scoped(token: Annotated[BearerToken, Realm("reports")]) -> Response:
        return Response.json(token)

    async with TestClient(Router().get("/", scoped)) as client:
        _refused(await client.get("/"), 'Bearer realm="reports"', "header.authorization: required")


async def test_a_bearer_token_or_error_hands_the_401_to_the_handler() -> None:
    async def lenient(token: BearerToken | Error) -> Response:
        if isinstance(token, Error):
            return Response.json([token.status, token.headers, token.errors])
        return Response.json(token)

    async with TestClient(Router().get("/", lenient)) as client:
        assert (await client.get("/")).json() == [
            401,
            {"WWW-Authenticate": "Bearer"},
            ["header.authorization: required"],
        ]
        assert (await client.get("/", headers={"authorization": "Bearer t"})).json() == "t"


# -- BasicCredentials ------------------------------------------------------------------------
async def basic(creds: BasicCredentials) -> Response:
    return Response.json([creds.username, creds.password])


async def test_basic_credentials_are_decoded_and_split_at_the_first_colon() -> None:
    async with TestClient(Router().get("/", basic)) as client:
        for raw, expected in [
            (b"ada:lovelace", ["ada", "lovelace"]),
            (b"ada:pass:word", ["ada", "pass:word"]),
            (b":", ["", ""]),
            ("zoë:mot de passé".encode(), ["zoë", "mot de passé"]),
        ]:
            assert (await client.get("/", headers=_basic(raw))).json() == expected, raw
        sent = {"authorization": "basic  " + base64.b64encode(b"a:b").decode()}
        assert (await client.get("/", headers=sent)).json() == ["a", "b"]


async def test_missing_basic_credentials_are_a_401_with_a_realm() -> None:
    async with TestClient(Router().get("/", basic)) as client:
        _refused(await client.get("/"), BASIC_CHALLENGE, "header.authorization: required")


@pytest.mark.parametrize(
    ("sent", "error"),
    [
        ("Basic !!!", "expected base64 Basic credentials"),
        ("Basic", "expected base64 Basic credentials"),
        ("Basic YWRh", "expected Basic credentials user-id:password"),  # "ada"
        ("Basic YTpi=", "expected base64 Basic credentials"),  # excess padding
        ("Basic YR==", "expected base64 Basic credentials"),  # not canonical
        ("Bearer abc", "expected the Basic scheme"),
        (_basic(b"\xff:pw")["authorization"], "expected UTF-8 Basic credentials"),
        (_basic(b"ada")["authorization"], "expected Basic credentials user-id:password"),
        (
            _basic(b"ada\n:pw")["authorization"],
            "expected Basic credentials without control characters",
        ),
        (
            _basic(b"ada:p\x7fw")["authorization"],
            "expected Basic credentials without control characters",
        ),
    ],
)
async def test_malformed_basic_credentials_are_a_401(sent: str, error: str) -> None:
    async with TestClient(Router().get("/", basic)) as client:
        response = await client.get("/", headers={"authorization": sent})
        _refused(response, BASIC_CHALLENGE, f"header.authorization: {error}")


async def test_optional_basic_credentials_and_a_configured_realm() -> None:
    async def maybe(
        creds: Annotated[BasicCredentials, Realm("admin area")] | None = None,
    ) -> Response:
        return Response.json(None if creds is None else creds.username)

    async with TestClient(Router().get("/", maybe)) as client:
        assert (await client.get("/")).json() is None
        assert (await client.get("/", headers={"authorization": "Bearer t"})).json() is None
        assert (await client.get("/", headers=_basic(b"ada:pw"))).json() == "ada"
        _refused(
            await client.get("/", headers={"authorization": "Basic !!!"}),
            'Basic realm="admin area", charset="UTF-8"',
            "header.authorization: expected base64 Basic credentials",
        )


async def test_one_handler_takes_either_scheme() -> None:
    async def either(
        token: BearerToken | None = None, creds: BasicCredentials | None = None
    ) -> Response:
        return Response.json([token, creds and creds.username])

    async with TestClient(Router().get("/", either)) as client:
        assert (await client.get("/", headers={"authorization": "Bearer t"})).json() == ["t", None]
        assert (await client.get("/", headers=_basic(b"ada:pw"))).json() == [None, "ada"]


async def test_basic_credentials_in_another_extractor_are_a_plain_record() -> None:
    async def login(creds: Json[BasicCredentials]) -> Response:
        return Response.json(creds.username)

    async with TestClient(Router().post("/", login)) as client:
        sent = {"username": "ada", "password": "pw"}
        assert (await client.post("/", json=sent)).json() == "ada"
    assert freeze(Router().post("/", login)).routes[0].params[0].source == "body"


def test_basic_credentials_keep_the_password_out_of_repr() -> None:
    creds = BasicCredentials("ada", "secret")
    assert repr(creds) == "BasicCredentials(username='ada')"
    assert creds.password == "secret"


# -- APIKey ----------------------------------------------------------------------------------
HeaderKey = Annotated[str, APIKey(header="X-API-Key")]
CookieKey = Annotated[str, APIKey(cookie="session_id")]
QueryKey = Annotated[str, APIKey(query="key")]


async def keys(
    header: HeaderKey | None = None, cookie: CookieKey | None = None, query: QueryKey | None = None
) -> Response:
    return Response.json([header, cookie, query])


async def test_an_api_key_is_read_from_its_header_cookie_or_query_key() -> None:
    async with TestClient(Router().get("/", keys)) as client:
        assert (await client.get("/")).json() == [None, None, None]
        sent = {"x-api-key": "h1", "cookie": "session_id=c1"}
        assert (await client.get("/?key=q0&key=q1", headers=sent)).json() == ["h1", "c1", "q1"]


@pytest.mark.parametrize(
    ("handler_key", "error"),
    [(HeaderKey, "header.x-api-key"), (CookieKey, "cookie.session_id"), (QueryKey, "query.key")],
)
async def test_a_missing_or_empty_api_key_is_a_401(handler_key: Any, error: str) -> None:
    async def need(key: str) -> Response:
        return Response.json(key)

    need.__annotations__["key"] = handler_key

    async with TestClient(Router().get("/", need)) as client:
        _refused(await client.get("/"), "APIKey", f"{error}: required")
        empty = await client.get("/?key=", headers={"x-api-key": "", "cookie": "session_id="})
        _refused(empty, "APIKey", f"{error}: expected a non-empty key")
        good = await client.get("/?key=k", headers={"x-api-key": "k", "cookie": "session_id=k"})
        assert good.json() == "k"


async def test_an_empty_optional_api_key_is_still_a_401() -> None:
    async with TestClient(Router().get("/", keys)) as client:
        _refused(await client.get("/?key="), "APIKey", "query.key: expected a non-empty key")


def test_an_api_key_names_exactly_one_place() -> None:
    with pytest.raises(ValueError, match="exactly one of header=, cookie=, query="):
        APIKey()
    with pytest.raises(ValueError, match="exactly one of header=, cookie=, query="):
        APIKey(header="a", query="a")
    with pytest.raises(ValueError, match="a non-empty str"):
        APIKey(cookie="")
    with pytest.raises(ValueError, match="'x key' is not a header name"):
        APIKey(header="x key")


def test_a_realm_is_quotable_ascii() -> None:
    for bad in ["", 'a"b', "a\\b", "caf\xe9", "a\nb"]:
        with pytest.raises(ValueError, match="a Realm is printable ASCII"):
            Realm(bad)


# -- dependencies ----------------------------------------------------------------------------
@attrs.frozen
class CurrentUser(FromRequest):
    name: str

    @classmethod
    def from_request(
        cls, request: Request, token: BearerToken, key: HeaderKey | None = None
    ) -> Self:
        return cls(f"user-of-{token}" if key is None else f"{token}+{key}")


async def me(user: CurrentUser) -> Response:
    return Response.json(user.name)


async def test_credentials_work_inside_a_dependency() -> None:
    async with TestClient(Router().get("/", me)) as client:
        assert (await client.get("/", headers={"authorization": "Bearer t"})).json() == "user-of-t"
        sent = {"authorization": "Bearer t", "x-api-key": "k"}
        assert (await client.get("/", headers=sent)).json() == "t+k"
        _refused(await client.get("/"), "Bearer", "header.authorization: required")


# -- ParamInfo -------------------------------------------------------------------------------
def test_param_info_records_the_security_scheme() -> None:
    async def described(
        user: CurrentUser,
        token: BearerToken,
        creds: BasicCredentials | None,
        query: QueryKey = "default",
        odd: Annotated[str, APIKey(cookie="odd name+1")] | Error | None = None,
    ) -> Response:
        return Response.text("")

    bearer_scheme = SecurityScheme("bearerAuth", "http", scheme="bearer")
    header_scheme = SecurityScheme(
        "apiKey_header_x-api-key", "apiKey", location="header", name="x-api-key"
    )
    params = freeze(Router().get("/", described)).routes[0].params
    dependency = "CurrentUser.from_request"
    assert params == (
        ParamInfo("dependency", "user", CurrentUser),
        ParamInfo(
            "security",
            "authorization",
            str,
            dependency=dependency,
            security=bearer_scheme,
            parameter="token",
        ),
        ParamInfo(
            "security",
            "x-api-key",
            str | None,
            required=False,
            default=None,
            dependency=dependency,
            security=header_scheme,
            parameter="key",
        ),
        ParamInfo("security", "authorization", str, security=bearer_scheme, parameter="token"),
        ParamInfo(
            "security",
            "authorization",
            BasicCredentials | None,
            required=False,
            security=SecurityScheme("basicAuth", "http", scheme="basic"),
            parameter="creds",
        ),
        ParamInfo(
            "security",
            "key",
            str,
            required=False,
            default="default",
            security=SecurityScheme("apiKey_query_key", "apiKey", location="query", name="key"),
            parameter="query",
        ),
        ParamInfo(
            "security",
            "odd name+1",
            str | None,
            required=False,
            default=None,
            security=SecurityScheme(
                "apiKey_cookie_odd_name_1", "apiKey", location="cookie", name="odd name+1"
            ),
            parameter="odd",
        ),
    )


def test_a_security_scheme_as_openapi() -> None:
    assert SecurityScheme("bearerAuth", "http", scheme="bearer").as_openapi() == {
        "type": "http",
        "scheme": "bearer",
    }
    assert APIKey(header="X-Key").security().as_openapi() == {
        "type": "apiKey",
        "in": "header",
        "name": "x-key",
    }


# -- startup checks --------------------------------------------------------------------------
def test_a_credential_of_another_type_is_refused() -> None:
    async def number(key: Annotated[int, APIKey(header="x")]) -> Response:
        return Response.text("")

    async def text(creds: Annotated[str, Realm("r")] | BasicCredentials) -> Response:
        return Response.text("")

    assert _failure(number) == "parameter 'key': APIKey(header='x') gives a str, not int"
    assert "no extractor for annotation" in _failure(text)  # a union of two: no credential


def test_a_credential_beside_another_extractor_alias_or_constraint_is_refused() -> None:
    async def header(key: Annotated[HeaderValue[str], APIKey(header="x")]) -> Response:
        return Response.text("")

    async def alias(token: Annotated[BearerToken, Alias("x")]) -> Response:
        return Response.text("")

    async def constrained(key: Annotated[str, APIKey(query="k"), MinLen(3)]) -> Response:
        return Response.text("")

    reason = "reads the credential itself: no other extractor, Alias or constraint"
    assert _failure(header) == f"parameter 'key': APIKey(header='x') {reason}"
    assert _failure(alias) == f"parameter 'token': BearerToken {reason}"
    assert _failure(constrained) == f"parameter 'key': APIKey(query='k') {reason}"


def test_two_credentials_or_misplaced_realms_are_refused() -> None:
    async def two(key: Annotated[str, APIKey(header="a"), APIKey(query="b")]) -> Response:
        return Response.text("")

    async def realm_on_key(key: Annotated[str, APIKey(query="k"), Realm("r")]) -> Response:
        return Response.text("")

    async def two_realms(creds: Annotated[BasicCredentials, Realm("a"), Realm("b")]) -> Response:
        return Response.text("")

    assert _failure(two) == "parameter 'key': APIKey(header='a'): a parameter takes one credential"
    assert _failure(realm_on_key) == (
        "parameter 'key': APIKey(query='k'): a Realm applies to BearerToken and BasicCredentials"
    )
    assert _failure(two_realms) == "parameter 'creds': BasicCredentials: one Realm at most"
