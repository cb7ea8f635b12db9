"""Cookies (docs/cookies.md): the ``Cookie`` builder and its validation, the incoming
``CookieJar``, ``Response.add_cookie`` and ``Request.cookies()``/``cookie()`` end to end."""
