"""``SessionMiddleware``: a ``Session`` per request, kept in an encrypted cookie, or in a
store with only its sealed id in the cookie (the ``sessions`` extra: ``pip install
'trioframe[sessions]'``); see ``docs/sessions.md``."""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._errors import ConfigurationError, InternalServerError
from .._http.cookies import Cookie, SameSite
from .._response import Response
from .._sessions.seal import Sealer
from .._sessions.session import Session

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request
    from .._stores.base import Store

__all__ = ["MAX_COOKIE_SIZE", "MAX_STORED_SIZE", "SessionMiddleware"]

#: The largest ``name=value`` a session cookie may be (browsers keep about 4096 bytes).
MAX_COOKIE_SIZE = 4096
#: The default ``max_size`` of a session kept in a store: its data as JSON, in bytes.
MAX_STORED_SIZE = 64 * 1024
_log = logging.getLogger("trioframe.sessions")


class SessionMiddleware:
    """Opens the request's session cookie into a ``Session`` (an empty one when there is
    none, or it is tampered with, expired or sealed with a key no longer listed) and, after
    the handler, seals it back into the response when it changed.

    ``secret_keys``: the first seals, all open (a cookie opened with an older key is sealed
    again with the first). ``max_age``: seconds or a ``timedelta``, both the cookie's
    ``Max-Age`` and the expiry sealed inside it. The cookie is ``HttpOnly``, with ``path``
    and ``same_site``; ``Secure`` when ``secure`` is true, or with ``secure=None`` when the
    request came over https. A session that would make a cookie over 4096 bytes is a 500,
    logged: it is never dropped silently. Raises ``ConfigurationError`` for missing or short
    keys, or without the ``cryptography`` package.

    With ``store`` (a ``MemoryStore`` or ``RedisStore``) the sessions are server-side: the
    cookie holds only the session's random id, sealed the same way, and the data lives in the
    store under ``session:<id>`` for ``max_age`` seconds from its last change. ``clear()``
    deletes it there, ``regenerate()`` moves it to a new id and deletes the old one: a copied
    cookie stops working at once. A store that cannot answer makes the request a 503
    (``StoreUnavailable``). Data over ``max_size`` bytes of JSON (default 64 KiB) is a 500,
    logged, as a cookie over its size is; the store never holds more than that per session.
    ``ConfigurationError`` for a ``max_size`` that is not a positive integer."""

    def __init__(
        self,
        secret_keys: Sequence[bytes | str],
        *,
        cookie_name: str = "session",
        max_age: int | datetime.timedelta = datetime.timedelta(days=14),
        same_site: SameSite = SameSite.LAX,
        path: str = "/",
        secure: bool | None = None,
        store: Store | None = None,
        max_size: int = MAX_STORED_SIZE,
    ) -> None:
        if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
            raise ConfigurationError(
                f"SessionMiddleware max_size must be a positive number of bytes, not {max_size!r}"
            )
        self._sealer = Sealer(secret_keys, cookie_name)
        self.store = store
        self.max_size = max_size
        self.cookie_name = cookie_name
        seconds = max_age.total_seconds() if isinstance(max_age, datetime.timedelta) else max_age
        self.max_age = int(seconds)
        self.same_site = same_site
        self.path = path
        self.secure = secure
        Cookie(cookie_name, "x").path(path).same_site(same_site)  # validates them now

    async def __call__(self, request: Request, next: Next) -> Response:
        if self.store is not None:
            return await self._server_side(request, next, self.store)
        sent = request.cookie(self.cookie_name)
        opened = self._sealer.open(sent)
        had_cookie = sent is not None
        if opened is None:
            session = Session()
        else:
            session = Session(opened.data, opened.session_id)
            session.modified = opened.old_key  # sealed with an older key: seal it again
        request.extensions.insert(session)
        response = await next(request)
        if not session.modified and not (had_cookie and opened is None):
            return response
        if not session:  # emptied, or a cookie that did not open: remove it
            if had_cookie:
                response.add_cookie(Cookie.removal(self.cookie_name, self.path))
            return response
        value = self._sealer.seal(session.id, session.to_dict(), self.max_age)
        size = len(self.cookie_name) + 1 + len(value)
        if size > MAX_COOKIE_SIZE:
            _log.error(
                "session cookie %r would be %d bytes, over %d: the session holds too much",
                self.cookie_name,
                size,
                MAX_COOKIE_SIZE,
            )
            return Response.from_error(InternalServerError("the session is too large"))
        return self._set_cookie(request, response, value)

    async def _server_side(self, request: Request, next: Next, store: Store) -> Response:
        sent = request.cookie(self.cookie_name)
        opened = self._sealer.open(sent)
        loaded: str | None = None  # the id whose data the store had
        session = Session()
        if opened is not None:
            stored = await store.get(_key(opened.session_id))
            if stored is not None:
                loaded = opened.session_id
                session = Session(json.loads(stored), loaded)
                session.modified = opened.old_key  # sealed with an older key: seal it again
        request.extensions.insert(session)
        response = await next(request)
        if loaded is not None and (session.id != loaded or not session):
            await store.delete(_key(loaded))  # regenerated or emptied: the old id is dead
        if not session:  # emptied, or nothing in the store for this cookie: remove it
            if sent is not None:
                response.add_cookie(Cookie.removal(self.cookie_name, self.path))
            return response
        if not session.modified:
            return response
        data = json.dumps(
            session.to_dict(), separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode()
        if len(data) > self.max_size:
            _log.error(
                "session data would be %d bytes, over max_size %d: the session holds too much",
                len(data),
                self.max_size,
            )
            return Response.from_error(InternalServerError("the session is too large"))
        await store.set(_key(session.id), data, self.max_age)
        value = self._sealer.seal(session.id, {}, self.max_age)
        return self._set_cookie(request, response, value)

    def _set_cookie(self, request: Request, response: Response, value: str) -> Response:
        cookie = Cookie(self.cookie_name, value).http_only().path(self.path)
        cookie.same_site(self.same_site).max_age(self.max_age)
        secure = request.scheme == "https" if self.secure is None else self.secure
        if secure:
            cookie.secure()
        response.add_cookie(cookie)
        return response


def _key(session_id: str) -> str:
    return f"session:{session_id}"
