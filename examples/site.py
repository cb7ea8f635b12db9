"""A small site: a static directory, pages from templates, a login form protected against
cross-site posts, a session, and a download only a logged-in user may fetch.

What it shows:

* ``Templates`` (the ``templates`` extra): the pages are Jinja2 templates in
  ``examples/site/templates``, rendered asynchronously with autoescaping; they build their
  links and form actions with ``path_for``.
* ``CrossOriginProtection``: a form another site's page posts to ``/login`` or ``/logout``
  gets a 403 (the browser says where the post came from in ``Sec-Fetch-Site`` and
  ``Origin``); the site's own forms and non-browser clients such as curl pass.
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
import logging
import os
import pathlib
import secrets

import attrs

from trioframe import Error, Form, Request, Response, Router, Server, Session, Templates
from trioframe.middleware import CrossOriginProtection, SessionMiddleware

HERE = pathlib.Path(__file__).parent / "site"
DEMO_USER = "ada"
DEMO_PASSWORD = "lovelace"  # a real site keeps a salted hash, never the password
SESSION_KEY = os.environ.get("SITE_SESSION_KEY") or secrets.token_urlsafe(48)

TEMPLATES = Templates(HERE / "templates")


@attrs.frozen
class Credentials:
    username: str
    password: str


async def home(request: Request, session: Session) -> Response:
    user = session.get("user")
    if user is not None:
        return await TEMPLATES.response("welcome.html", {"user": user}, request=request)
    return await TEMPLATES.response("login.html", {}, request=request)


async def login(request: Request, session: Session, form: Form[Credentials]) -> Response:
    known = hmac.compare_digest(form.username, DEMO_USER) and hmac.compare_digest(
        form.password, DEMO_PASSWORD
    )
    if not known:
        context = {"error": "Wrong user or password.", "username": form.username}
        return await TEMPLATES.response("login.html", context, status=401, request=request)
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
    .middleware(CrossOriginProtection())  # outermost: a refused post never opens the session
    .middleware(SessionMiddleware([SESSION_KEY]))
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
