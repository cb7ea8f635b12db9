"""The steps of the extractors that read the request as it is, chosen by the parameter's
class (``BY_CLASS``): ``Request``, ``Headers``, ``Method``, ``Uri``, ``Body``, ``Cookies``,
``Shutdown``, ``Accept`` and ``BackgroundTasks``. No conversion, nothing to check at startup.
"""

from __future__ import annotations

from .._background import BackgroundTasks
from .._errors import Error
from .._http.accept import Accept
from .._http.cookies import CookieJar
from .._http.headers import Headers
from .._http.method import Method
from .._http.url import Uri
from .._markers import Body
from .._request import Request
from .._shutdown import Shutdown
from .sources import Step, body_step

__all__ = ["BY_CLASS", "whole_request"]


async def whole_request(request: Request) -> Request:
    if not request.body_consumed:  # (a body-less request starts consumed: no call then)
        await request.read_body()
    return request


async def _headers(request: Request) -> Headers:
    return request.headers


async def _method(request: Request) -> Method:
    return request.method


async def _uri(request: Request) -> Uri:
    return request.uri


async def _cookies(request: Request) -> CookieJar:
    return request.cookies()


async def _shutdown(request: Request) -> Shutdown:
    shutdown = request.shutdown_signal
    if shutdown is None:
        raise Error.internal("Shutdown is only available while a server serves the request")
    return shutdown


async def _accept(request: Request) -> Accept:
    values = request.headers.get_all("accept")
    return Accept(", ".join(values) if values else None)


async def _background_tasks(request: Request) -> BackgroundTasks:
    """The request's one ``BackgroundTasks`` (a dependency that asks gets the same)."""
    tasks = request.background_tasks
    if tasks is None:
        tasks = request.background_tasks = BackgroundTasks()
    return tasks


BY_CLASS: dict[type, Step] = {
    Request: whole_request,
    Headers: _headers,
    Method: _method,
    Uri: _uri,
    Body: body_step,
    CookieJar: _cookies,
    Shutdown: _shutdown,
    Accept: _accept,
    BackgroundTasks: _background_tasks,
}
