"""Cookies: the ``Cookie`` builder for ``Set-Cookie`` and the incoming ``CookieJar``.

Sans-I/O (never imports trio). The grammar follows RFC 6265 section 4.1 and its draft
successor RFC 6265bis: a name is a token, a value is made of cookie-octets (optionally
wrapped in double quotes), and attribute values may not contain ``;`` or control characters,
so nothing an application passes in can inject another attribute or header line. Every
problem is a ``ValueError``: raised by the builder call when the one value is wrong, or by
``Cookie.render`` when only the combination is (``SameSite=None`` or ``Partitioned``
without ``Secure``, the ``__Secure-``/``__Host-`` name prefixes).
"""

from __future__ import annotations

import datetime
import enum
import re
from collections.abc import Iterable, Iterator, Mapping
from email.utils import format_datetime

from .grammar import TCHAR_PUNCTUATION, TOKEN

__all__ = ["Cookie", "CookieJar", "SameSite", "header_text"]

# cookie-octet: visible ASCII except DQUOTE, comma, semicolon and backslash.
_OCTETS = r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"
_VALUE = re.compile(rf'{_OCTETS}|"{_OCTETS}"')
# av-octet: any printable ASCII but ";" (space allowed inside, as in "Path=/a b").
_ATTRIBUTE = re.compile(r"[\x20-\x3a\x3c-\x7e]*")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = re.compile(rf"\.?{_LABEL}(?:\.{_LABEL})*")
_MAX_NAME_VALUE = 4096  # RFC 6265bis: user agents drop larger name + value pairs
_MAX_ATTRIBUTE = 1024  # RFC 6265bis: user agents ignore larger attribute values
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


class SameSite(enum.Enum):
    """The ``SameSite`` attribute: ``STRICT``, ``LAX`` or ``NONE`` (the last needs
    ``Secure``)."""

    STRICT = "Strict"
    LAX = "Lax"
    NONE = "None"


def _check_attribute(kind: str, value: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"cookie {kind} must be a str, not {type(value).__name__}")
    if not _ATTRIBUTE.fullmatch(value):
        raise ValueError(
            f"cookie {kind} {value!r} may not contain ';', control characters (CR, LF, ...) "
            "or non-ASCII characters"
        )
    if len(value) > _MAX_ATTRIBUTE:
        raise ValueError(f"cookie {kind} is longer than {_MAX_ATTRIBUTE} characters")
    return value


class Cookie:
    """A cookie to send with ``Response.add_cookie``. Every builder method returns the
    cookie, so calls chain::

        Cookie("session", token).http_only().secure().same_site(SameSite.STRICT).max_age(3600)

    ``render()`` gives the ``Set-Cookie`` value; attributes always come in this order:
    ``name=value; Path; Domain; Max-Age; Expires; Secure; HttpOnly; SameSite; Partitioned``.
    """

    __slots__ = (
        "_domain",
        "_expires",
        "_http_only",
        "_max_age",
        "_name",
        "_partitioned",
        "_path",
        "_same_site",
        "_secure",
        "_value",
    )

    def __init__(self, name: str, value: str) -> None:
        if not isinstance(name, str) or not TOKEN.fullmatch(name):
            raise ValueError(
                f"invalid cookie name {name!r}: it must be a non-empty token (letters, digits "
                f"and {TCHAR_PUNCTUATION}; no whitespace, control characters or "
                '()<>@,;:\\"/[]?={})'
            )
        if not isinstance(value, str) or not _VALUE.fullmatch(value):
            raise ValueError(
                f"invalid value for cookie {name!r}: {value!r}; allowed are visible ASCII "
                "characters except '\"', ',', ';' and '\\' (a value may be wrapped in double "
                "quotes as a whole); encode other data first, for example with base64url"
            )
        if len(name) + len(value) > _MAX_NAME_VALUE:
            raise ValueError(f"cookie {name!r} is longer than {_MAX_NAME_VALUE} characters")
        self._name = name
        self._value = value
        self._path: str | None = None
        self._domain: str | None = None
        self._max_age: int | None = None
        self._expires: datetime.datetime | None = None
        self._secure = False
        self._http_only = False
        self._same_site: SameSite | None = None
        self._partitioned = False

    @classmethod
    def removal(cls, name: str, path: str = "/") -> Cookie:
        """A cookie that makes the client delete ``name``: empty value, ``Max-Age=0`` and an
        ``Expires`` in the past. ``path`` (and ``.domain()``, if the cookie was set with
        one) must match those the cookie was set with.

        A client accepts a removal only under the rules of the name's prefix, so a
        ``__Secure-`` or ``__Host-`` name (any case) gets ``Secure``; a ``__Host-`` cookie
        lives on ``/`` only, so another ``path`` is a ``ValueError``."""
        cookie = cls(name, "").path(path).max_age(0).expires(_EPOCH)
        prefix = _name_prefix(name)
        if prefix == "__host-" and path != "/":
            raise ValueError(f"cookie {name!r}: a __Host- cookie is removed on path '/' only")
        return cookie.secure(prefix is not None)

    @property
    def name(self) -> str:
        """The cookie's name."""
        return self._name

    @property
    def value(self) -> str:
        """The cookie's value."""
        return self._value

    def http_only(self, enabled: bool = True) -> Cookie:
        """``HttpOnly``: scripts in the page cannot read the cookie."""
        self._http_only = bool(enabled)
        return self

    def secure(self, enabled: bool = True) -> Cookie:
        """``Secure``: the client sends the cookie over HTTPS only."""
        self._secure = bool(enabled)
        return self

    def same_site(self, policy: SameSite) -> Cookie:
        """``SameSite=Strict|Lax|None``; ``SameSite.NONE`` requires ``secure()``."""
        if not isinstance(policy, SameSite):
            raise ValueError(f"same_site takes a SameSite member, not {policy!r}")
        self._same_site = policy
        return self

    def path(self, path: str) -> Cookie:
        """``Path``: the URL path prefix the cookie is sent for; must start with ``/``."""
        _check_attribute("path", path)
        if not path.startswith("/"):
            raise ValueError(f"cookie path {path!r} must start with '/'")
        self._path = path
        return self

    def domain(self, domain: str) -> Cookie:
        """``Domain``: also send the cookie to subdomains of this host name."""
        _check_attribute("domain", domain)
        if not _DOMAIN.fullmatch(domain) or len(domain.lstrip(".")) > 253:
            raise ValueError(
                f"cookie domain {domain!r} is not a host name (letters, digits, hyphens and "
                "dots, optionally one leading dot)"
            )
        self._domain = domain
        return self

    def max_age(self, seconds: int | datetime.timedelta) -> Cookie:
        """``Max-Age``: lifetime in whole seconds (an ``int`` or a ``timedelta``, whose
        fraction of a second is dropped); ``0`` expires the cookie at once."""
        if isinstance(seconds, datetime.timedelta):
            seconds = int(seconds.total_seconds())
        if isinstance(seconds, bool) or not isinstance(seconds, int):
            raise ValueError(f"max_age takes an int or a timedelta, not {seconds!r}")
        if seconds < 0:
            raise ValueError(f"max_age must not be negative, got {seconds}")
        self._max_age = seconds
        return self

    def expires(self, when: datetime.datetime) -> Cookie:
        """``Expires``: an absolute expiry time. Aware datetimes are converted to GMT, naive
        ones are taken as UTC; rendered as an IMF-fixdate (``Wed, 21 Oct 2015 07:28:00
        GMT``)."""
        if not isinstance(when, datetime.datetime):
            raise ValueError(f"expires takes a datetime, not {when!r}")
        if when.tzinfo is None or when.utcoffset() is None:
            when = when.replace(tzinfo=datetime.UTC)
        self._expires = when.astimezone(datetime.UTC).replace(microsecond=0)
        return self

    def partitioned(self, enabled: bool = True) -> Cookie:
        """``Partitioned`` (CHIPS): a separate jar per top-level site; requires
        ``secure()``."""
        self._partitioned = bool(enabled)
        return self

    def render(self) -> str:
        """The ``Set-Cookie`` header value. Raises ``ValueError`` when the attributes do not
        go together: ``SameSite=None`` or ``Partitioned`` without ``Secure``, a
        ``__Secure-`` name without ``Secure``, or a ``__Host-`` name without ``Secure``, with
        a ``Domain`` or with a ``Path`` other than ``/``."""
        self._check_combination()
        parts = [f"{self._name}={self._value}"]
        if self._path is not None:
            parts.append(f"Path={self._path}")
        if self._domain is not None:
            parts.append(f"Domain={self._domain}")
        if self._max_age is not None:
            parts.append(f"Max-Age={self._max_age}")
        if self._expires is not None:
            parts.append(f"Expires={format_datetime(self._expires, usegmt=True)}")
        if self._secure:
            parts.append("Secure")
        if self._http_only:
            parts.append("HttpOnly")
        if self._same_site is not None:
            parts.append(f"SameSite={self._same_site.value}")
        if self._partitioned:
            parts.append("Partitioned")
        return "; ".join(parts)

    def _check_combination(self) -> None:
        name = self._name
        if self._same_site is SameSite.NONE and not self._secure:
            raise ValueError(f"cookie {name!r}: SameSite=None requires secure()")
        if self._partitioned and not self._secure:
            raise ValueError(f"cookie {name!r}: partitioned() requires secure()")
        prefix = _name_prefix(name)
        if prefix is not None and not self._secure:
            raise ValueError(f"cookie {name!r}: its name prefix requires secure()")
        if prefix == "__host-" and (self._domain is not None or self._path != "/"):
            raise ValueError(f"cookie {name!r}: a __Host- cookie needs path('/') and no domain")

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Cookie({self._name!r}, {self._value!r})"


def _name_prefix(name: str) -> str | None:
    """``"__secure-"`` or ``"__host-"`` when ``name`` starts with that prefix in any case
    (RFC 6265bis matches them case-insensitively), else ``None``."""
    lowered = name.lower()
    return next((p for p in ("__secure-", "__host-") if lowered.startswith(p)), None)


class CookieJar(Mapping[str, str]):
    """The cookies a request carried: a read-only mapping of names to values.

    ``.get(name)`` (``None`` when absent), ``.contains(name)``, ``name in jar``,
    ``len(jar)``, iteration over names, ``.items()``, ``.to_dict()``.
    ``Response.json(jar)`` renders an object of names to values.
    """

    __slots__ = ("_cookies",)

    def __init__(self, cookies: Mapping[str, str] | None = None) -> None:
        self._cookies: dict[str, str] = dict(cookies) if cookies is not None else {}

    @classmethod
    def parse(cls, header_values: Iterable[str]) -> CookieJar:
        """Parse the values of one or more ``Cookie`` headers.

        Each is split on ``;`` into ``name=value`` pairs; spaces and tabs around names and
        values are trimmed and a value wrapped in double quotes is unwrapped. Pieces without
        ``=`` or with an empty name are skipped. When a name repeats, the first value wins
        (clients send the cookie with the most specific path first)."""
        cookies: dict[str, str] = {}
        for header in header_values:
            for piece in header.split(";"):
                name, sep, value = piece.partition("=")
                name = name.strip(" \t")
                if not sep or not name or name in cookies:
                    continue
                value = value.strip(" \t")
                if len(value) >= 2 and value[0] == value[-1] == '"':
                    value = value[1:-1]
                cookies[name] = value
        return cls(cookies)

    def contains(self, name: str) -> bool:
        """Whether the request carried a cookie called ``name``."""
        return name in self._cookies

    def to_dict(self) -> dict[str, str]:
        """A new ``dict`` of names to values (what ``Response.json`` renders)."""
        return dict(self._cookies)

    def __getitem__(self, name: str) -> str:
        return self._cookies[name]

    def __contains__(self, name: object) -> bool:
        return name in self._cookies

    def __iter__(self) -> Iterator[str]:
        return iter(self._cookies)

    def __len__(self) -> int:
        return len(self._cookies)

    def __repr__(self) -> str:
        return f"CookieJar({self._cookies!r})"


def header_text(raw: bytes) -> str:
    """Decode a raw ``Cookie`` header value: UTF-8 when it is valid UTF-8 (browsers send
    cookies that scripts set with non-ASCII text that way), else ISO-8859-1."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")
