"""A small site: a static directory, a login form, a session, and a download only a logged-in
user may fetch.

What it shows:

* ``Router.static("/static", ...)`` serving ``examples/site/static`` (a stylesheet, with a
  precompressed ``.gz`` sibling the server picks for clients that accept gzip).
* ``POST /login``: the form read with ``Form[Credentials]``; on success the session gets a new
  id (``session.regenerate()``) and the user's name, then a 303 back to the home page.
* ``SessionMiddleware``: the session lives in an encrypted cookie (the ``sessions`` extra).
  The key comes from ``SITE_SESSION_KEY``; without it a random key is made at startup (every
  restart then logs everybody out).
* ``GET /report``: the file ``examples/site/files/report.txt`` as a download
  (``Response.file(..., download=True)``), 401 without a session. Ranges and conditional
  requests work as for any file response: ``curl -r 0-9`` fetches the first ten bytes.
* ``POST /logout``: ``session.clear()`` removes the cookie.

The one account is a fixed demo user, ``ada`` with password ``lovelace``.

Run it with ``python examples/site.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port) and open
http://127.0.0.1:3000/ in a browser.
"""

from __future__ import annotations

import hmac
import html
import logging
import os
import pathlib
import secrets

import attrs

from trioframe import Error, Form, Response, Router, Server, Session
from trioframe.middleware import SessionMiddleware

HERE = pathlib.Path(__file__).parent / "site"
DEMO_USER = "ada"
DEMO_PASSWORD = "lovelace"  # a real site keeps a salted hash, never the password
SESSION_KEY = os.environ.get("SITE_SESSION_KEY") or secrets.token_urlsafe(48)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>trioframe site</title>
<link rel="stylesheet" href="/static/style.css"></head>
<body><h1>trioframe site</h1>{content}</body></html>"""

LOGIN_FORM = """<form method="post" action="/login">
<label>User <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button>Log in</button></form>"""

WELCOME = """<p id="welcome">Hello, {user}.</p>
<p><a id="report" href="/report">Download the report</a></p>
<form method="post" action="/logout"><button>Log out</button></form>"""


@attrs.frozen
class Credentials:
    username: str
    password: str


async def home(session: Session) -> Response:
    user = session.get("user")
    if user is not None:
        return Response.html(PAGE.format(content=WELCOME.format(user=html.escape(user))))
    return Response.html(PAGE.format(content=LOGIN_FORM))


async def login(session: Session, form: Form[Credentials]) -> Response:
    known = hmac.compare_digest(form.username, DEMO_USER) and hmac.compare_digest(
        form.password, DEMO_PASSWORD
    )
    if not known:
        return Response.html(
            PAGE.format(content='<p class="error">Wrong user or password.</p>' + LOGIN_FORM), 401
        )
    session.regenerate()  # a new session id at login
    session["user"] = form.username
    return Response.redirect("/", 303)


async def logout(session: Session) -> Response:
    session.clear()
    return Response.redirect("/", 303)


async def report(session: Session) -> Response:
    if "user" not in session:
        raise Error.unauthorized("log in first")
    return Response.file(HERE / "files" / "report.txt", download=True)


router = (
    Router()
    .get("/", home)
    .post("/login", login)
    .post("/logout", logout)
    .get("/report", report)
    .static("/static", HERE / "static", cache_control="public, max-age=3600")
    .middleware(SessionMiddleware([SESSION_KEY]))
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
