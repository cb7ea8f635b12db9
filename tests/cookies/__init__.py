"""Cookies (API.md sections 5-7): the ``Cookie`` builder and its validation, the incoming
``CookieJar``, ``Response.add_cookie`` and ``Request.cookies()``/``cookie()`` end to end."""
