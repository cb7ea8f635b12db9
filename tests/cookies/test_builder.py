"""``Cookie``: rendering of every attribute, their fixed order, removal, ``Expires``
formatting, and every validation failure (at the builder call or at ``render``)."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import pytest

from trioframe import Cookie, SameSite

UTC = datetime.UTC


# -- rendering -----------------------------------------------------------------------------------


def test_bare_cookie_is_name_equals_value() -> None:
    assert Cookie("theme", "dark").render() == "theme=dark"


def test_empty_value_is_allowed() -> None:
    assert Cookie("flag", "").render() == "flag="


def test_quoted_value_is_kept_as_is() -> None:
    assert Cookie("q", '"abc"').render() == 'q="abc"'
    assert Cookie("q", '""').render() == 'q=""'


def test_every_method_returns_the_cookie() -> None:
    cookie = Cookie("a", "b")
    calls = [
        cookie.http_only(),
        cookie.secure(),
        cookie.same_site(SameSite.LAX),
        cookie.path("/"),
        cookie.domain("example.com"),
        cookie.max_age(1),
        cookie.expires(datetime.datetime(2030, 1, 1, tzinfo=UTC)),
        cookie.partitioned(),
    ]
    assert all(result is cookie for result in calls)


@pytest.mark.parametrize(
    ("build", "attribute"),
    [
        (lambda c: c.path("/app"), "Path=/app"),
        (lambda c: c.domain("example.com"), "Domain=example.com"),
        (lambda c: c.domain(".example.com"), "Domain=.example.com"),
        (lambda c: c.max_age(3600), "Max-Age=3600"),
        (lambda c: c.max_age(0), "Max-Age=0"),
        (lambda c: c.max_age(datetime.timedelta(hours=1, microseconds=5)), "Max-Age=3600"),
        (
            lambda c: c.expires(datetime.datetime(2015, 10, 21, 7, 28, tzinfo=UTC)),
            "Expires=Wed, 21 Oct 2015 07:28:00 GMT",
        ),
        (lambda c: c.secure(), "Secure"),
        (lambda c: c.http_only(), "HttpOnly"),
        (lambda c: c.same_site(SameSite.STRICT), "SameSite=Strict"),
        (lambda c: c.same_site(SameSite.LAX), "SameSite=Lax"),
        (lambda c: c.secure().same_site(SameSite.NONE), "SameSite=None"),
        (lambda c: c.secure().partitioned(), "Partitioned"),
    ],
)
def test_each_attribute(build: Callable[[Cookie], Cookie], attribute: str) -> None:
    cookie = build(Cookie("id", "42"))
    parts = cookie.render().split("; ")
    assert parts[0] == "id=42"
    assert attribute in parts


def test_attribute_order_is_fixed_whatever_the_call_order() -> None:
    expected = (
        "sid=abc; Path=/; Domain=example.com; Max-Age=60; "
        "Expires=Tue, 01 Jan 2030 00:00:00 GMT; Secure; HttpOnly; SameSite=None; Partitioned"
    )
    when = datetime.datetime(2030, 1, 1, tzinfo=UTC)
    forwards = (
        Cookie("sid", "abc")
        .path("/")
        .domain("example.com")
        .max_age(60)
        .expires(when)
        .secure()
        .http_only()
        .same_site(SameSite.NONE)
        .partitioned()
    )
    backwards = (
        Cookie("sid", "abc")
        .partitioned()
        .same_site(SameSite.NONE)
        .http_only()
        .secure()
        .expires(when)
        .max_age(60)
        .domain("example.com")
        .path("/")
    )
    assert forwards.render() == expected
    assert backwards.render() == expected
    assert str(forwards) == expected


def test_session_cookie_example() -> None:
    cookie = (
        Cookie("session", "s3cr3t")
        .http_only()
        .secure()
        .path("/")
        .same_site(SameSite.STRICT)
        .max_age(3600)
    )
    assert (
        cookie.render() == "session=s3cr3t; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Strict"
    )


def test_later_calls_replace_earlier_ones_and_flags_can_be_turned_off() -> None:
    cookie = Cookie("a", "b").path("/x").path("/y").max_age(5).max_age(7).secure().http_only()
    cookie.same_site(SameSite.STRICT).same_site(SameSite.LAX).http_only(False).secure(False)
    assert cookie.render() == "a=b; Path=/y; Max-Age=7; SameSite=Lax"


def test_name_and_value_properties_and_repr() -> None:
    cookie = Cookie("a", "b")
    assert (cookie.name, cookie.value) == ("a", "b")
    assert repr(cookie) == "Cookie('a', 'b')"


def test_same_site_members_render_their_names() -> None:
    assert [m.value for m in SameSite] == ["Strict", "Lax", "None"]


# -- Expires --------------------------------------------------------------------------------------


def test_expires_converts_aware_datetimes_to_gmt() -> None:
    paris_summer = datetime.timezone(datetime.timedelta(hours=2))
    when = datetime.datetime(2031, 6, 30, 23, 30, 15, 999_999, tzinfo=paris_summer)
    assert Cookie("a", "b").expires(when).render() == "a=b; Expires=Mon, 30 Jun 2031 21:30:15 GMT"


def test_expires_crosses_the_date_line_when_converting() -> None:
    tokyo = datetime.timezone(datetime.timedelta(hours=9))
    when = datetime.datetime(2030, 1, 1, 3, 0, tzinfo=tokyo)
    assert Cookie("a", "b").expires(when).render() == "a=b; Expires=Mon, 31 Dec 2029 18:00:00 GMT"


def test_expires_takes_naive_datetimes_as_utc() -> None:
    when = datetime.datetime(2030, 2, 3, 4, 5, 6)
    assert Cookie("a", "b").expires(when).render() == "a=b; Expires=Sun, 03 Feb 2030 04:05:06 GMT"


@pytest.mark.parametrize("bad", [datetime.date(2030, 1, 1), "2030-01-01", 1_900_000_000])
def test_expires_needs_a_datetime(bad: object) -> None:
    with pytest.raises(ValueError, match="datetime"):
        Cookie("a", "b").expires(bad)  # type: ignore[arg-type]


# -- removal -------------------------------------------------------------------------------------


def test_removal() -> None:
    assert (
        Cookie.removal("session").render()
        == "session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT"
    )


def test_removal_with_path_and_domain() -> None:
    cookie = Cookie.removal("pref", path="/app").domain("example.com")
    assert cookie.value == ""
    assert cookie.render() == (
        "pref=; Path=/app; Domain=example.com; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT"
    )


EPOCH = "Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT"


@pytest.mark.parametrize("name", ["__Host-sid", "__host-sid", "__HOST-sid"])
def test_removal_of_a_host_cookie_meets_the_prefix_rules(name: str) -> None:
    assert Cookie.removal(name).render() == f"{name}=; Path=/; {EPOCH}; Secure"


@pytest.mark.parametrize("name", ["__Secure-sid", "__secure-sid"])
def test_removal_of_a_secure_cookie_is_secure_on_any_path(name: str) -> None:
    assert Cookie.removal(name).render() == f"{name}=; Path=/; {EPOCH}; Secure"
    cookie = Cookie.removal(name, path="/app").domain("example.com")
    assert cookie.render() == f"{name}=; Path=/app; Domain=example.com; {EPOCH}; Secure"


def test_removal_of_a_host_cookie_on_another_path_is_an_error() -> None:
    with pytest.raises(ValueError, match="__Host- cookie is removed on path '/' only"):
        Cookie.removal("__Host-sid", path="/app")


def test_removal_of_a_host_cookie_still_refuses_a_domain() -> None:
    cookie = Cookie.removal("__Host-sid").domain("example.com")
    with pytest.raises(ValueError, match="needs path"):
        cookie.render()


@pytest.mark.parametrize("name", ["_Host-sid", "__Hostsid", "x__Host-sid", "__Securesid"])
def test_removal_without_a_prefix_is_not_made_secure(name: str) -> None:
    assert Cookie.removal(name).render() == f"{name}=; Path=/; {EPOCH}"


def test_removal_validates_like_the_builder() -> None:
    with pytest.raises(ValueError):
        Cookie.removal("bad name")
    with pytest.raises(ValueError):
        Cookie.removal("ok", path="/; Domain=evil.example")


# -- validation: names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a b",
        "a\tb",
        " a",
        "a;b",
        "a,b",
        "a=b",
        "a\rb",
        "a\nb",
        "a\x00b",
        "a\x7fb",
        *[f"a{sep}b" for sep in '()<>@:\\"/[]?{}'],
        "caf\u00e9",
    ],
)
def test_invalid_names_are_rejected_by_the_constructor(name: str) -> None:
    with pytest.raises(ValueError, match="cookie name"):
        Cookie(name, "v")


def test_names_may_use_every_token_character() -> None:
    name = "!#$%&'*+-.^_`|~09AZaz"
    assert Cookie(name, "v").render() == f"{name}=v"


# -- validation: values --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "a;b",
        "a; Domain=evil.example",
        "a,b",
        "a b",
        " a",
        "a\tb",
        "a\rb",
        "a\nb",
        "a\r\nSet-Cookie: x=y",
        "a\x00b",
        "a\x7f",
        "a\\b",
        'a"b',
        '"ab',
        'ab"',
        '"a"b"',
        '"a b"',
        "caf\u00e9",
        "\u2603",
    ],
)
def test_invalid_values_are_rejected_by_the_constructor(value: str) -> None:
    with pytest.raises(ValueError, match="invalid value"):
        Cookie("name", value)


def test_values_may_use_every_cookie_octet() -> None:
    value = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '",;\\')
    assert Cookie("n", value).render() == f"n={value}"


def test_name_and_value_must_be_strings() -> None:
    with pytest.raises(ValueError):
        Cookie(b"a", "b")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Cookie("a", 1)  # type: ignore[arg-type]


def test_oversized_cookie_is_rejected() -> None:
    Cookie("n", "x" * 4095)
    with pytest.raises(ValueError, match="longer than 4096"):
        Cookie("n", "x" * 4096)


# -- validation: path and domain -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/; HttpOnly",
        "/;",
        "/a\r\nSet-Cookie: x=y",
        "/a\rb",
        "/a\nb",
        "/a\x00",
        "/a\tb",
        "/caf\u00e9",
        "/" + "a" * 1024,
    ],
)
def test_path_injection_and_bad_characters_are_rejected(path: str) -> None:
    with pytest.raises(ValueError, match="path"):
        Cookie("a", "b").path(path)


@pytest.mark.parametrize("path", ["", "app", "*"])
def test_path_must_start_with_a_slash(path: str) -> None:
    with pytest.raises(ValueError, match="must start with '/'"):
        Cookie("a", "b").path(path)


@pytest.mark.parametrize(
    "domain",
    [
        "example.com; Secure",
        "evil.example; Path=/",
        "example.com\r\nX: y",
        "example.com\n",
        "exa mple.com",
        "example.com:8080",
        "ex_ample.com",
        "example..com",
        "..example.com",
        "example.com.",
        "-example.com",
        "example-.com",
        "",
        ".",
        "b\u00fccher.example",
        "example.com/path",
        "a" * 64 + ".com",
    ],
)
def test_domain_injection_and_non_host_names_are_rejected(domain: str) -> None:
    with pytest.raises(ValueError, match="domain"):
        Cookie("a", "b").domain(domain)


@pytest.mark.parametrize(
    "domain", ["localhost", "example.com", ".sub.example-1.co.uk", "127.0.0.1"]
)
def test_host_names_are_accepted(domain: str) -> None:
    assert Cookie("a", "b").domain(domain).render() == f"a=b; Domain={domain}"


# -- validation: max_age and same_site -----------------------------------------------------------


@pytest.mark.parametrize("bad", ["3600", 3600.0, 1.5, None, True])
def test_max_age_needs_an_int(bad: object) -> None:
    with pytest.raises(ValueError, match="max_age"):
        Cookie("a", "b").max_age(bad)  # type: ignore[arg-type]


def test_max_age_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="negative"):
        Cookie("a", "b").max_age(-1)
    with pytest.raises(ValueError, match="negative"):
        Cookie("a", "b").max_age(datetime.timedelta(seconds=-5))


def test_same_site_needs_a_member() -> None:
    with pytest.raises(ValueError, match="SameSite"):
        Cookie("a", "b").same_site("Strict")  # type: ignore[arg-type]


# -- validation at render: combinations ----------------------------------------------------------


def test_same_site_none_without_secure_fails_when_rendered() -> None:
    cookie = Cookie("a", "b").same_site(SameSite.NONE)  # the builder call itself is fine
    with pytest.raises(ValueError, match="SameSite=None requires secure"):
        cookie.render()
    assert cookie.secure().render() == "a=b; Secure; SameSite=None"


def test_partitioned_without_secure_fails_when_rendered() -> None:
    cookie = Cookie("a", "b").partitioned()
    with pytest.raises(ValueError, match="partitioned\\(\\) requires secure"):
        cookie.render()
    assert cookie.secure().render() == "a=b; Secure; Partitioned"


def test_secure_prefix_requires_secure() -> None:
    with pytest.raises(ValueError, match="prefix requires secure"):
        Cookie("__Secure-id", "1").render()
    assert Cookie("__Secure-id", "1").secure().render() == "__Secure-id=1; Secure"


@pytest.mark.parametrize(
    "cookie",
    [
        Cookie("__Host-id", "1").path("/"),
        Cookie("__Host-id", "1").secure(),
        Cookie("__Host-id", "1").secure().path("/app"),
        Cookie("__host-id", "1").secure().path("/").domain("example.com"),
    ],
)
def test_host_prefix_rules(cookie: Cookie) -> None:
    with pytest.raises(ValueError, match=r"prefix requires secure|__Host-"):
        cookie.render()


def test_host_prefix_accepted_when_the_rules_hold() -> None:
    assert Cookie("__Host-id", "1").secure().path("/").render() == "__Host-id=1; Path=/; Secure"
