"""Type tests, checked by ``mypy --strict`` in the ``typing`` nox session (not run by pytest):
a ``FromRequest`` subclass may declare dependencies after the request, sync or async, without
an override error, and ``request.state(T)`` is a ``T``."""

from __future__ import annotations

from typing import Self, assert_type

from trioframe import FromRequest, Headers, Request, State


class Db:
    pass


class Session(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, db: State[Db], headers: Headers) -> Self:
        assert_type(request.state(Db), Db)
        return cls()


class Current(FromRequest):
    @classmethod
    def from_request(cls, request: Request, session: Session) -> Current:
        return cls()
