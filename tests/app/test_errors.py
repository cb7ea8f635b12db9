"""``Error``, its constructors and subclasses, and the one standard error body (docs/responses.md).

Covers every constructor/subclass pair with its status and message, extra ``headers=``,
``Retry-After`` and ``WWW-Authenticate``, withheld 5xx details, ``Error(status, message)``
for any error status, the ``{"status", "error", "message"[, "errors"]}`` body for every error
the framework or a handler produces, ``json.JSONDecodeError`` → 400, unexpected exceptions
(500, logged once, details withheld, the client keeps working) and reason phrases that never
carry user text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from http import HTTPStatus

import httpx
import pytest

from trioframe import (
    BadRequest,
    Conflict,
    Error,
    Forbidden,
    InternalServerError,
    MethodNotAllowed,
    NotAcceptable,
    NotFound,
    PayloadTooLarge,
    Request,
    Response,
    Router,
    ServerConfig,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
    ValidationError,
)
from trioframe._errors import reason_phrase
from trioframe.testing import TestClient

from .helpers import assert_error_body

# (constructor call, expected subclass, status, expected message)
CONSTRUCTORS: list[tuple[Callable[[], Error], type[Error], int, str | None]] = [
    (lambda: Error.bad_request("bad input"), BadRequest, 400, "bad input"),
    (lambda: Error.unauthorized("log in first"), Unauthorized, 401, "log in first"),
    (lambda: Error.forbidden("not yours"), Forbidden, 403, "not yours"),
    (lambda: Error.not_found("user 42"), NotFound, 404, "user 42 not found"),
    (lambda: Error.method_not_allowed("no PUT"), MethodNotAllowed, 405, "no PUT"),
    (lambda: Error.not_acceptable("no XML"), NotAcceptable, 406, "no XML"),
    (lambda: Error.conflict("exists"), Conflict, 409, "exists"),
    (lambda: Error.payload_too_large("too big"), PayloadTooLarge, 413, "too big"),
    (lambda: Error.unsupported_media_type("xml?"), UnsupportedMediaType, 415, "xml?"),
    (lambda: Error.validation(["a is wrong"]), ValidationError, 422, None),
    (lambda: Error.too_many_requests("slow down"), TooManyRequests, 429, "slow down"),
    (lambda: Error.internal("db password leaked"), InternalServerError, 500, None),
]
CONSTRUCTOR_IDS = [cls.__name__ for _, cls, _, _ in CONSTRUCTORS]

# every subclass with its status, raised bare (no arguments)
SUBCLASSES: list[tuple[type[Error], int]] = [
    (BadRequest, 400),
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (MethodNotAllowed, 405),
    (NotAcceptable, 406),
    (Conflict, 409),
    (PayloadTooLarge, 413),
    (UnsupportedMediaType, 415),
    (ValidationError, 422),
    (TooManyRequests, 429),
    (InternalServerError, 500),
]


async def raise_and_fetch(error: BaseException) -> httpx.Response:
    """Serve a handler that raises ``error`` and return the response to one GET."""

    async def handler() -> Response:
        raise error

    async with TestClient(Router().get("/", handler)) as client:
        return await client.get("/")


# -- constructors and subclasses --------------------------------------------------------------


@pytest.mark.parametrize(("make", "cls", "status", "message"), CONSTRUCTORS, ids=CONSTRUCTOR_IDS)
def test_constructor_builds_the_matching_subclass(
    make: Callable[[], Error], cls: type[Error], status: int, message: str | None
) -> None:
    error = make()
    assert type(error) is cls
    assert isinstance(error, Error)
    assert isinstance(error, Exception)
    assert error.status == status
    if message is not None:
        assert error.message == message
    assert error.headers == {}


@pytest.mark.parametrize(("make", "cls", "status", "message"), CONSTRUCTORS, ids=CONSTRUCTOR_IDS)
async def test_raised_constructor_renders_the_standard_body(
    make: Callable[[], Error], cls: type[Error], status: int, message: str | None
) -> None:
    response = await raise_and_fetch(make())
    body = assert_error_body(response, status)
    if message is not None:
        assert body["message"] == message


@pytest.mark.parametrize(("cls", "status"), SUBCLASSES, ids=[c.__name__ for c, _ in SUBCLASSES])
async def test_subclass_raised_without_arguments(cls: type[Error], status: int) -> None:
    error = cls()
    assert error.status == status
    assert error.message  # a default message, never empty
    response = await raise_and_fetch(cls())
    assert_error_body(response, status)


@pytest.mark.parametrize(("cls", "status"), SUBCLASSES, ids=[c.__name__ for c, _ in SUBCLASSES])
def test_subclass_catchable_as_error(cls: type[Error], status: int) -> None:
    with pytest.raises(Error) as info:
        raise cls()
    assert info.value.status == status


async def test_raise_unauthorized_class_and_constructor_without_message() -> None:
    for error in (Unauthorized(), Error.unauthorized()):
        response = await raise_and_fetch(error)
        assert_error_body(response, 401)


def test_not_found_message_format() -> None:
    assert Error.not_found("user 42").message == "user 42 not found"
    assert NotFound("user 42 not found").message == "user 42 not found"


# (constructor name, argument, expected subclass, status)
NAMED_CONSTRUCTORS: list[tuple[str, object, type[Error], int]] = [
    ("bad_request", "x", BadRequest, 400),
    ("unauthorized", "x", Unauthorized, 401),
    ("forbidden", "x", Forbidden, 403),
    ("not_found", "x", NotFound, 404),
    ("method_not_allowed", "x", MethodNotAllowed, 405),
    ("not_acceptable", "x", NotAcceptable, 406),
    ("conflict", "x", Conflict, 409),
    ("payload_too_large", "x", PayloadTooLarge, 413),
    ("unsupported_media_type", "x", UnsupportedMediaType, 415),
    ("validation", ["x"], ValidationError, 422),
    ("too_many_requests", "x", TooManyRequests, 429),
    ("internal", "x", InternalServerError, 500),
]


@pytest.mark.parametrize(
    ("name", "arg", "cls", "status"), NAMED_CONSTRUCTORS, ids=[n for n, *_ in NAMED_CONSTRUCTORS]
)
async def test_every_constructor_accepts_headers(
    name: str, arg: object, cls: type[Error], status: int
) -> None:
    error = getattr(Error, name)(arg, headers={"X-Extra": "yes", "X-Other": "2"})
    assert type(error) is cls
    assert error.headers == {"X-Extra": "yes", "X-Other": "2"}
    response = await raise_and_fetch(error)
    assert_error_body(response, status)
    assert response.headers["x-extra"] == "yes"
    assert response.headers["x-other"] == "2"


async def test_unauthorized_with_www_authenticate() -> None:
    error = Error.unauthorized(headers={"WWW-Authenticate": 'Bearer realm="api"'})
    response = await raise_and_fetch(error)
    assert_error_body(response, 401)
    assert response.headers["www-authenticate"] == 'Bearer realm="api"'


async def test_too_many_requests_retry_after() -> None:
    response = await raise_and_fetch(Error.too_many_requests("slow down", retry_after=30))
    assert_error_body(response, 429, "slow down")
    assert response.headers["retry-after"] == "30"


def test_too_many_requests_fractional_retry_after_is_whole_seconds() -> None:
    error = Error.too_many_requests(retry_after=2.5)
    value = error.headers["Retry-After"]
    assert value.isdigit()
    assert int(value) in (2, 3)


async def test_too_many_requests_without_retry_after_has_no_header() -> None:
    response = await raise_and_fetch(Error.too_many_requests("slow down"))
    assert "retry-after" not in response.headers


async def test_validation_error_lists_the_messages() -> None:
    error = Error.validation(["name is required", "age must be >= 0"])
    assert error.errors == ["name is required", "age must be >= 0"]
    response = await raise_and_fetch(error)
    body = assert_error_body(response, 422)
    assert body["errors"] == ["name is required", "age must be >= 0"]


@pytest.mark.parametrize(
    "error",
    [Error.internal("secret"), InternalServerError("secret")],
    ids=["constructor", "subclass"],
)
async def test_internal_message_is_not_sent_to_the_client(error: Error) -> None:
    response = await raise_and_fetch(error)
    body = assert_error_body(response, 500)
    assert "secret" not in response.text
    assert body["message"] == "Internal Server Error"
    assert error.message == "secret"  # kept for the log


async def test_internal_message_goes_to_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """``Error.internal`` documents that its message is logged by the server (it is withheld
    from the client, so the log is the only place a developer can find it)."""
    with caplog.at_level(logging.DEBUG, logger="trioframe"):
        response = await raise_and_fetch(Error.internal("database password rejected"))
    assert_error_body(response, 500, "Internal Server Error")
    logged = [r for r in caplog.records if r.name.startswith("trioframe")]
    assert any("database password rejected" in r.getMessage() for r in logged) or any(
        r.exc_info is not None and "database password rejected" in str(r.exc_info[1])
        for r in logged
    ), [r.getMessage() for r in logged]


# -- Error(status, message) -------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 402, 404, 410, 418, 451, 500, 502, 503, 511])
async def test_error_with_any_error_status(status: int) -> None:
    error = Error(status, "custom message")
    assert error.status == status
    assert error.message == "custom message"
    response = await raise_and_fetch(error)
    assert_error_body(response, status, "custom message")


@pytest.mark.parametrize("status", [100, 101, 200, 201, 204, 301, 304, 399, 600, 0, -1])
def test_error_with_a_non_error_status_raises_value_error(status: int) -> None:
    with pytest.raises(ValueError):
        Error(status, "nope")


def test_error_headers_attribute() -> None:
    error = Error(409, "taken", headers={"X-Hint": "pick another"})
    assert error.headers == {"X-Hint": "pick another"}
    assert error.status == 409
    assert error.message == "taken"


async def test_error_with_an_invalid_header_value_still_answers_500() -> None:
    """A handler's ``Error`` whose extra header cannot be sent must not take the server down:
    the request gets a 500 with the standard body, and the next request works."""

    async def bad() -> Response:
        raise Error(400, "oops", headers={"X-Bad": "a\r\nInjected: 1"})

    async def ok() -> str:
        return "ok"

    async with TestClient(Router().get("/bad", bad).get("/ok", ok)) as client:
        response = await client.get("/bad")
        assert_error_body(response, 500)
        assert "injected" not in response.headers
        assert (await client.get("/ok")).text == "ok"


# -- one body shape everywhere ----------------------------------------------------------------


Send = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


async def _post_big(client: httpx.AsyncClient) -> httpx.Response:
    return await client.post("/upload", content=b"x" * 100)


async def _post_big_chunked(client: httpx.AsyncClient) -> httpx.Response:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"y" * 10

    return await client.post("/upload", content=body())


SCENARIOS: list[tuple[str, Send, int, bool]] = [
    ("no route", lambda c: c.get("/nowhere"), 404, False),
    ("wrong method", lambda c: c.delete("/ok"), 405, False),
    ("bad path encoding", lambda c: c.get("/p/%zz"), 400, False),
    ("body too large", _post_big, 413, False),
    ("chunked body too large", _post_big_chunked, 413, False),
    ("Error.validation", lambda c: c.get("/invalid"), 422, True),
    ("Response.validation_error", lambda c: c.get("/invalid-response"), 422, True),
    ("handler Error", lambda c: c.get("/conflict"), 409, False),
    ("unexpected exception", lambda c: c.get("/crash"), 500, False),
    ("malformed JSON", lambda c: c.post("/json", content=b"{nope"), 400, False),
    ("fallback raising", lambda c: c.get("/api/anything"), 403, False),
]


def _shape_router() -> Router:
    async def ok() -> str:
        return "ok"

    async def param(request: Request) -> str:
        return request.params["x"]

    async def upload(request: Request) -> str:
        return str(len(request.body))

    async def invalid() -> None:
        raise Error.validation(["field a", "field b"])

    async def invalid_response() -> Response:
        return Response.validation_error(["field a", "field b"])

    async def conflict() -> None:
        raise Error.conflict("already there")

    async def crash() -> None:
        raise RuntimeError("kaboom")

    async def parse(request: Request) -> object:
        return json.loads(request.body)

    async def forbidden_fallback() -> None:
        raise Error.forbidden("nothing here for you")

    return (
        Router()
        .get("/ok", ok)
        .get("/p/{x}", param)
        .post("/upload", upload)
        .get("/invalid", invalid)
        .get("/invalid-response", invalid_response)
        .get("/conflict", conflict)
        .get("/crash", crash)
        .post("/json", parse)
        .nest("/api", Router().fallback(forbidden_fallback))
    )


@pytest.mark.parametrize(
    ("request_", "status", "has_errors"),
    [(call, status, has_errors) for _, call, status, has_errors in SCENARIOS],
    ids=[name for name, *_ in SCENARIOS],
)
async def test_one_error_body_shape_everywhere(
    request_: Send, status: int, has_errors: bool
) -> None:
    config = ServerConfig(max_body_size=50)
    async with TestClient(_shape_router(), config) as client:
        response = await request_(client)
    body = assert_error_body(response, status)
    assert {"status", "error", "message"} <= body.keys()
    if has_errors:
        assert body["errors"] == ["field a", "field b"]
    else:
        assert "errors" not in body


# -- JSONDecodeError and unexpected exceptions ------------------------------------------------


async def test_json_decode_error_from_a_handler_is_400() -> None:
    async def handler(request: Request) -> object:
        return json.loads(request.body)

    async with TestClient(Router().post("/", handler)) as client:
        bad = await client.post("/", content=b'{"a": ')
        good = await client.post("/", content=b'{"a": 1}')
    assert_error_body(bad, 400)
    assert good.json() == {"a": 1}


async def test_unexpected_exception_is_500_logged_once_and_hidden(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def crash() -> None:
        raise RuntimeError("secret-token-123 exploded")

    async def ok() -> str:
        return "still fine"

    router = Router().get("/crash", crash).get("/ok", ok)
    with caplog.at_level(logging.ERROR, logger="trioframe"):
        async with TestClient(router) as client:
            response = await client.get("/crash")
            after = await client.get("/ok")

    body = assert_error_body(response, 500)
    assert "secret-token-123" not in response.text
    assert "RuntimeError" not in response.text
    assert body["message"] == "Internal Server Error"

    records = [r for r in caplog.records if r.name == "trioframe"]
    assert len(records) == 1, [r.getMessage() for r in records]
    record = records[0]
    assert record.levelno >= logging.ERROR
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)
    assert "secret-token-123" in str(record.exc_info[1])

    assert after.status_code == 200
    assert after.text == "still fine"


async def test_several_failures_in_a_row_each_answer_500() -> None:
    async def crash() -> None:
        raise KeyError("missing")

    async with TestClient(Router().get("/crash", crash)) as client:
        for _ in range(3):
            assert_error_body(await client.get("/crash"), 500)


# -- reason phrases ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 404, 418, 422, 429, 500, 503])
async def test_reason_phrase_never_carries_user_text(status: int) -> None:
    response = await raise_and_fetch(Error(status, "User Supplied Reason"))
    assert response.reason_phrase == HTTPStatus(status).phrase
    assert "User Supplied" not in response.reason_phrase


async def test_reason_phrase_of_a_handler_built_response() -> None:
    async def handler() -> Response:
        return Response.text("x", status=404)

    async with TestClient(Router().get("/", handler)) as client:
        response = await client.get("/")
    assert response.reason_phrase == "Not Found"


def test_reason_phrase_table() -> None:
    assert reason_phrase(404) == "Not Found"
    assert reason_phrase(500) == "Internal Server Error"
    assert reason_phrase(599) == "Unknown"
