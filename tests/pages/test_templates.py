"""Templates: async rendering, autoescape, request/url_for in templates, loading off the event
loop, and missing or failing templates as a logged 500 that tells the client nothing."""

from __future__ import annotations

import logging
import pathlib
import sys
import threading
from typing import Any

import pytest

from trioframe import (
    ConfigurationError,
    Error,
    InternalServerError,
    Path,
    Request,
    Response,
    Router,
    Templates,
)
from trioframe.testing import TestClient

PAGES = {
    "base.html": "<title>{% block title %}{% endblock %}</title>\n<main>{% block main %}{% endblock %}</main>",
    "hello.html": '{% extends "base.html" %}{% block title %}Hi{% endblock %}'
    "{% block main %}Hello, {{ name }}.{% endblock %}",
    "note.txt": "note: {{ text }}",
    "links.html": '<a href="{{ path_for("user", user_id=7) }}">{{ url_for("user", user_id=7) }}</a>'
    " {{ request.method }} {{ site }}",
    "shell.html": 'top\n{% include "broken.html" %}',
    "broken.html": "one\ntwo\n{{ 1 // zero }}",
    "syntax.html": "fine\n{% if %}\n",
    "asks.html": "{{ fetch() }}",
    "includes_missing.html": '{% include "nowhere.html" %}',
}


@pytest.fixture
def directory(tmp_path: pathlib.Path) -> pathlib.Path:
    for name, text in PAGES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


async def render(templates: Templates, name: str, context: dict[str, Any] | None = None) -> Any:
    async def page(request: Request) -> Response:
        return await templates.response(name, context, request=request)

    async def user(user_id: Path[int]) -> str:
        return f"user {user_id}"

    router = Router().get("/page", page).get("/users/{user_id}", user, name="user")
    async with TestClient(router) as client:
        return await client.get("/page")


async def test_a_page_with_inheritance_is_html(directory: pathlib.Path) -> None:
    response = await render(Templates(directory), "hello.html", {"name": "Ada"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.text == "<title>Hi</title>\n<main>Hello, Ada.</main>"


async def test_the_status_and_render_to_a_string(directory: pathlib.Path) -> None:
    templates = Templates(directory)
    response = await templates.response("hello.html", {"name": "x"}, status=404)
    assert response.status == 404
    assert await templates.render("hello.html", {"name": "Bo"}) == (
        "<title>Hi</title>\n<main>Hello, Bo.</main>"
    )


async def test_autoescape_is_on_for_every_template(directory: pathlib.Path) -> None:
    templates = Templates(directory)
    assert await templates.render("note.txt", {"text": "<b>&"}) == "note: &lt;b&gt;&amp;"
    hello = await templates.render("hello.html", {"name": "<script>"})
    assert "&lt;script&gt;" in hello and "<script>" not in hello


async def test_autoescape_off(directory: pathlib.Path) -> None:
    templates = Templates(directory, autoescape=False)
    assert await templates.render("note.txt", {"text": "<b>"}) == "note: <b>"


async def test_the_request_url_for_path_for_and_globals(directory: pathlib.Path) -> None:
    response = await render(Templates(directory, globals={"site": "Shop"}), "links.html")
    assert response.text == '<a href="/users/7">http://testserver/users/7</a> GET Shop'


async def test_without_a_request_the_template_has_no_url_for(directory: pathlib.Path) -> None:
    with pytest.raises(InternalServerError, match="'path_for' is undefined"):
        await Templates(directory).render("links.html")


async def test_async_values_are_awaited(directory: pathlib.Path) -> None:
    async def fetch() -> str:
        return "<fetched>"

    assert await Templates(directory).render("asks.html", {"fetch": fetch}) == "&lt;fetched&gt;"


async def test_an_error_raised_inside_a_template_passes_through(directory: pathlib.Path) -> None:
    async def fetch() -> str:
        raise Error.not_found("thing")

    response = await render(Templates(directory), "asks.html", {"fetch": fetch})
    assert response.status_code == 404
    assert response.json()["message"] == "thing not found"


def _records(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    ("name", "logged"),
    [
        ("missing.html", "template 'missing.html'"),
        ("includes_missing.html", "template 'nowhere.html'"),
        ("syntax.html", "template 'syntax.html' line 2"),
        ("shell.html", "template 'broken.html' line 3"),
    ],
)
async def test_a_missing_or_failing_template_is_a_500_logged_only(
    directory: pathlib.Path, caplog: pytest.LogCaptureFixture, name: str, logged: str
) -> None:
    caplog.set_level(logging.ERROR)
    response = await render(Templates(directory), name, {"zero": 0})
    assert response.status_code == 500
    assert response.json() == {
        "status": 500,
        "error": "Internal Server Error",
        "message": "Internal Server Error",
    }
    assert ".html" not in response.text and "line" not in response.text
    assert logged in _records(caplog)


async def test_templates_load_in_a_worker_thread_once(directory: pathlib.Path) -> None:
    templates = Templates(directory)
    loader = templates.environment.loader
    assert loader is not None
    reads: list[tuple[str, bool]] = []
    original = loader.get_source

    def get_source(environment: Any, name: str) -> Any:
        reads.append((name, threading.current_thread() is threading.main_thread()))
        return original(environment, name)

    loader.get_source = get_source  # type: ignore[method-assign, assignment]
    await templates.render("hello.html", {"name": "a"})
    assert {name for name, _ in reads} == {"hello.html", "base.html"}  # the parent too
    assert not any(on_loop for _, on_loop in reads)
    reads.clear()
    await templates.render("hello.html", {"name": "b"})
    assert reads == []  # cached: no more disk reads


def test_a_directory_that_is_not_one(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigurationError, match="not a directory"):
        Templates(tmp_path / "absent")


def test_without_jinja2_the_error_names_the_extra(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'trioframe\[templates\]'"):
        Templates(tmp_path)
