"""``Templates``: HTML pages from Jinja2 templates, rendered asynchronously (the ``templates``
extra: ``pip install 'trioframe[templates]'``); see ``docs/pages.md``.

Loading a template reads files, so it happens in a worker thread (``trio.to_thread``), once
per template: the environment never reloads from disk, and its cache keeps every template
loaded. Rendering runs on the event loop with ``render_async``, never with the synchronous
``render``, which would start an event loop of its own.
"""

from __future__ import annotations

import logging
import os
import pathlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import trio

from ._errors import ConfigurationError, Error, InternalServerError
from ._response import Response

if TYPE_CHECKING:
    import jinja2

    from ._request import Request

__all__ = ["Templates"]

_log = logging.getLogger("trioframe.templates")


def _jinja2() -> Any:
    try:
        import jinja2
        import jinja2.meta
    except ImportError as error:
        raise ConfigurationError(
            "Templates needs Jinja2: pip install 'trioframe[templates]'"
        ) from error
    return jinja2


class Templates:
    """Jinja2 templates from ``directory``, rendered into HTML responses::

        templates = Templates(pathlib.Path(__file__).parent / "templates")

        async def home(request: Request) -> Response:
            return await templates.response("home.html", {"user": "ada"}, request=request)

    ``autoescape`` (on by default) escapes every ``{{ value }}`` whatever the template's file
    name; mark trusted HTML with ``markupsafe.Markup`` or the ``|safe`` filter, or turn it off
    for a whole environment with ``autoescape=False``. ``globals`` are names every template
    sees. ``ConfigurationError`` when Jinja2 is not installed or ``directory`` is not a
    directory.

    Each template is read from disk once, in a worker thread, together with the templates it
    names as constants in ``{% extends %}``, ``{% include %}``, ``{% import %}`` and
    ``{% from %}``; it is then kept for the life of the object (edits need a restart, or
    ``trioframe run --reload``). A template named by a variable is loaded on first use on the
    event loop, which blocks it for that one file read.
    """

    __slots__ = ("_environment", "_loaded", "directory")

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        autoescape: bool = True,
        globals: Mapping[str, Any] | None = None,
    ) -> None:
        jinja = _jinja2()
        path = pathlib.Path(directory)
        if not path.is_dir():
            raise ConfigurationError(f"Templates: {str(path)!r} is not a directory")
        #: The directory templates are loaded from.
        self.directory = path
        self._environment: jinja2.Environment = jinja.Environment(
            loader=jinja.FileSystemLoader(path),
            autoescape=bool(autoescape),
            enable_async=True,
            auto_reload=False,  # never stat the files again on the event loop
            cache_size=-1,  # and never evict one, which would read it again
        )
        self._environment.globals.update(globals or {})
        self._loaded: set[str] = set()

    @property
    def environment(self) -> jinja2.Environment:
        """The Jinja2 ``Environment``: add filters, tests or globals here before serving."""
        return self._environment

    async def render(
        self, name: str, context: Mapping[str, Any] | None = None, *, request: Request | None = None
    ) -> str:
        """The template ``name`` (a path relative to the directory, with ``/``) rendered with
        ``context``. With ``request``, the template also sees ``request``, ``url_for`` and
        ``path_for`` (the request's methods: absolute URLs and paths of named routes); names
        in ``context`` win over these.

        A template that is missing or fails raises ``InternalServerError`` (a 500 with the
        standard error body when it reaches the response); the template's name and line go
        to the log only. An ``Error`` raised by something the template calls passes through
        unchanged, as does cancellation."""
        values: dict[str, Any] = {}
        if request is not None:
            values.update(request=request, url_for=request.url_for, path_for=request.path_for)
        values.update(context or {})
        try:
            if name not in self._loaded:
                await trio.to_thread.run_sync(self._load, name)
                self._loaded.add(name)
            template = self._environment.get_template(name)
            return await template.render_async(values)
        except Error:
            raise
        except Exception as error:
            where = _where(error, name, self.directory)
            raise InternalServerError(f"template {where}: {error!r}") from error

    async def response(
        self,
        name: str,
        context: Mapping[str, Any] | None = None,
        *,
        status: int = 200,
        request: Request | None = None,
    ) -> Response:
        """An HTML response (``text/html; charset=utf-8``) of :meth:`render`'s page, with
        ``status``. A coroutine: ``return await templates.response("home.html", {...})``."""
        return Response.html(await self.render(name, context, request=request), status)

    def _load(self, name: str) -> None:
        """Load ``name`` and, recursively, the templates it names as constants (in a worker
        thread: the loader reads files)."""
        jinja = _jinja2()
        environment = self._environment
        pending, seen = [name], set[str]()
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            environment.get_template(current)  # compiled and cached
            loader = environment.loader
            assert loader is not None
            source, _, _ = loader.get_source(environment, current)
            tree = environment.parse(source, current)
            pending.extend(
                found
                for found in jinja.meta.find_referenced_templates(tree)
                if found is not None and found not in seen
            )


def _where(error: Exception, name: str, directory: pathlib.Path) -> str:
    """``'page.html' line 3`` for ``error``: where a template failed (its syntax, or the
    innermost frame of template code under ``directory``), as precisely as known."""
    where = getattr(error, "name", None) or name
    line = getattr(error, "lineno", None)
    traceback = error.__traceback__ if line is None else None
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if code.co_filename.startswith(str(directory) + os.sep):
            where, line = code.co_filename[len(str(directory)) + 1 :], traceback.tb_lineno
        traceback = traceback.tb_next
    return f"{where!r}" + (f" line {line}" if line is not None else "")
