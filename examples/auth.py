"""Three ways to authenticate a request: a bearer token, an API key and a session cookie.

What it shows:

* ``Authorization: Bearer <token>`` read by a custom ``FromRequest`` extractor
  (``BearerToken``); a missing or unknown token is a 401 from ``Error.unauthorized`` with a
  ``WWW-Authenticate: Bearer`` challenge passed through ``headers=``.
* An ``x-api-key`` header read from the ``Headers`` extractor and checked against keys held
  in application state (``State[ApiKeys]``).
* A session cookie: ``POST /login`` takes the credentials as JSON *or* as a form, using two
  extractors that each hand their failure to the handler (``Json[Credentials] | Error`` and
  ``Form[Credentials] | Error``). It answers with a token and sets ``session`` (HttpOnly,
  Secure, SameSite=Strict, Path=/, one hour); with ``"remember": true`` it also sets a 30-day
  ``remember_me`` cookie. ``GET /me`` reads the session cookie through the ``Cookies``
  extractor (``request.cookie(name)`` works as well), ``POST /logout`` ends the session and
  deletes both cookies with ``Cookie.removal``.

The token ``POST /login`` returns also works as the bearer token. The one account is a fixed
demo user, ``ada`` with password ``lovelace``; the API key is ``demo-api-key``. A real
application keeps password hashes and sessions in a database, not in memory.

Run it with ``python examples/auth.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port), then for example::

    curl -i -X POST localhost:3000/login -d username=ada -d password=lovelace
    curl -H 'authorization: Bearer <token from the answer>' localhost:3000/bearer/me
    curl -H 'x-api-key: demo-api-key' localhost:3000/api-key/me

(Browsers only send ``Secure`` cookies over HTTPS; curl sends them anywhere with ``-b``.)
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets

import attrs

from trioframe import (
    Cookie,
    Cookies,
    Error,
    Form,
    FromRequest,
    Headers,
    Json,
    Request,
    Response,
    Router,
    SameSite,
    Server,
    State,
    StatusCode,
)

DEMO_USER = "ada"
DEMO_PASSWORD = "lovelace"  # a real application stores a salted hash, never the password
DEMO_API_KEY = "demo-api-key"

SESSION_COOKIE = "session"
REMEMBER_COOKIE = "remember_me"
SESSION_SECONDS = 60 * 60  # one hour
REMEMBER_SECONDS = 30 * 24 * 60 * 60  # 30 days


def same(a: str, b: str) -> bool:
    """Compare secrets in constant time."""
    return hmac.compare_digest(a.encode(), b.encode())


# -- state -----------------------------------------------------------------------------------
class Sessions:
    """Tokens handed out by ``POST /login``: session tokens (also good as bearer tokens) and
    the longer-lived "remember me" tokens."""

    def __init__(self) -> None:
        self._sessions: dict[str, str] = {}
        self._remembered: dict[str, str] = {}

    def start(self, username: str) -> str:
        token = secrets.token_urlsafe(32)
        self._sessions[token] = username
        return token

    def remember(self, username: str) -> str:
        token = secrets.token_urlsafe(32)
        self._remembered[token] = username
        return token

    def user(self, token: str | None) -> str | None:
        """The user a session token belongs to, or ``None``."""
        return None if token is None else self._sessions.get(token)

    def end(self, session: str | None, remembered: str | None) -> None:
        if session is not None:
            self._sessions.pop(session, None)
        if remembered is not None:
            self._remembered.pop(remembered, None)


@attrs.frozen
class ApiKeys:
    """API keys and the client each one belongs to."""

    clients: dict[str, str]

    def client(self, key: str) -> str | None:
        for known, client in self.clients.items():
            if same(key, known):
                return client
        return None


# -- bearer token ----------------------------------------------------------------------------
def bearer_challenge(message: str, challenge: str = "Bearer") -> Error:
    return Error.unauthorized(message, headers={"WWW-Authenticate": challenge})


@attrs.frozen
class BearerToken(FromRequest):
    """The token of an ``Authorization: Bearer <token>`` header; 401 without one."""

    value: str

    @classmethod
    def from_request(cls, request: Request) -> BearerToken:
        scheme, _, token = (request.header("authorization") or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise bearer_challenge("a bearer token is required")
        return cls(token)


async def bearer_me(token: BearerToken, sessions: State[Sessions]) -> Response:
    username = sessions.user(token.value)
    if username is None:
        raise bearer_challenge("invalid bearer token", 'Bearer error="invalid_token"')
    return Response.json({"username": username, "via": "bearer token"})


# -- API key ---------------------------------------------------------------------------------
async def api_key_me(headers: Headers, keys: State[ApiKeys]) -> Response:
    key = headers.get("x-api-key")
    if key is None:
        raise Error.unauthorized("an x-api-key header is required")
    client = keys.client(key)
    if client is None:
        raise Error.unauthorized("invalid API key")
    return Response.json({"client": client, "via": "api key"})


# -- session cookie --------------------------------------------------------------------------
@attrs.frozen
class Credentials:
    username: str
    password: str
    remember: bool = False


def one_of(as_json: Credentials | Error, as_form: Credentials | Error) -> Credentials:
    """The credentials from whichever body the client sent. A body of the right type that
    does not fit (400, 422) answers with its own error; any other content type is a 415."""
    for attempt in (as_json, as_form):
        if isinstance(attempt, Credentials):
            return attempt
    for attempt in (as_json, as_form):
        if isinstance(attempt, Error) and attempt.status != StatusCode.UNSUPPORTED_MEDIA_TYPE:
            raise attempt
    raise Error.unsupported_media_type(
        "send the credentials as application/json or application/x-www-form-urlencoded"
    )


def protected_cookie(name: str, value: str, seconds: int) -> Cookie:
    return (
        Cookie(name, value)
        .http_only()
        .secure()
        .same_site(SameSite.STRICT)
        .path("/")
        .max_age(seconds)
    )


async def login(
    as_json: Json[Credentials] | Error,
    as_form: Form[Credentials] | Error,
    sessions: State[Sessions],
) -> Response:
    credentials = one_of(as_json, as_form)
    known_user = same(credentials.username, DEMO_USER)
    right_password = same(credentials.password, DEMO_PASSWORD)
    if not (known_user and right_password):
        raise Error.unauthorized("wrong username or password")
    token = sessions.start(credentials.username)
    response = Response.json(
        {"token": token, "username": credentials.username, "expires_in": SESSION_SECONDS}
    ).add_cookie(protected_cookie(SESSION_COOKIE, token, SESSION_SECONDS))
    if credentials.remember:
        remembered = sessions.remember(credentials.username)
        response.add_cookie(protected_cookie(REMEMBER_COOKIE, remembered, REMEMBER_SECONDS))
    return response


async def me(cookies: Cookies, sessions: State[Sessions]) -> Response:
    username = sessions.user(cookies.get(SESSION_COOKIE))
    if username is None:
        raise Error.unauthorized("not logged in")
    return Response.json({"username": username, "via": "session cookie"})


async def logout(cookies: Cookies, sessions: State[Sessions]) -> Response:
    sessions.end(cookies.get(SESSION_COOKIE), cookies.get(REMEMBER_COOKIE))
    return (
        Response(StatusCode.NO_CONTENT)
        .add_cookie(Cookie.removal(SESSION_COOKIE, path="/"))
        .add_cookie(Cookie.removal(REMEMBER_COOKIE, path="/"))
    )


#: What the OpenAPI document says of a route that answers 401 without valid credentials.
UNAUTHENTICATED = {401: "the credentials are missing or wrong"}

router = (
    Router()
    .state(Sessions())
    .state(ApiKeys({DEMO_API_KEY: "demo client"}))
    .get("/bearer/me", bearer_me, responses=UNAUTHENTICATED)
    .get("/api-key/me", api_key_me, responses=UNAUTHENTICATED)
    .post("/login", login, responses=UNAUTHENTICATED)
    .post("/logout", logout, status=204)
    .get("/me", me, responses=UNAUTHENTICATED)
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
