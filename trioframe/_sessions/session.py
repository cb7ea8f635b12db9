"""``Session``: the current request's session, a mutable mapping of JSON values."""

from __future__ import annotations

import secrets
from collections.abc import Iterator, MutableMapping
from typing import Any

from .._errors import InternalServerError
from .._markers import FromRequest
from .._request import Request

__all__ = ["Session", "new_session_id"]


def new_session_id() -> str:
    """A fresh random session id (128 bits, URL-safe text)."""
    return secrets.token_urlsafe(16)


class Session(MutableMapping[str, Any], FromRequest):
    """The session of the current request: ``session["user"] = "ada"``, ``session.get``,
    ``del``, ``clear()``. Values are anything JSON carries. Take it as a handler parameter
    (``session: Session``) under ``SessionMiddleware``; without it the request is a 500 (a
    setup mistake, logged).

    Changes are saved to the response's cookie only when there are any; an emptied session
    removes the cookie. ``regenerate()`` gives the session a new :attr:`id` and a new
    cookie (do it at login, so a session id an attacker planted before is worthless)."""

    def __init__(self, data: dict[str, Any] | None = None, session_id: str | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})
        #: the session's id: random, kept across requests, new after :meth:`regenerate`
        self.id = session_id or new_session_id()
        #: whether the data changed (or the session was regenerated) in this request
        self.modified = False

    @classmethod
    def from_request(cls, request: Request) -> Session:
        session = request.extensions.get(Session)
        if session is None:
            raise InternalServerError("a handler takes Session, but SessionMiddleware is not set")
        return session

    def regenerate(self) -> None:
        """A new id and a new cookie for the same contents (``clear()`` first to drop them).
        With server-side sessions (``SessionMiddleware(store=...)``) the contents move to the
        new id and the old id is deleted from the store."""
        self.id = new_session_id()
        self.modified = True

    def to_dict(self) -> dict[str, Any]:
        """A copy of the data."""
        return dict(self._data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._data[key] = value
        self.modified = True

    def __delitem__(self, key: str) -> None:
        del self._data[key]
        self.modified = True

    def clear(self) -> None:
        if self._data:
            self._data.clear()
            self.modified = True

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Session({self._data!r})"
