"""``TrustedProxies``: which configuration entries it accepts, which peers it trusts, and the
bound on its cache."""

from __future__ import annotations

import pytest

from trioframe._proxy import TrustedProxies
from trioframe._proxy import forwarded as forwarded_module

# -- entries ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "trusted", "untrusted"),
    [
        ("127.0.0.1", ["127.0.0.1"], ["127.0.0.2", "::1"]),
        ("::1", ["::1", "0:0:0:0:0:0:0:1"], ["::2", "127.0.0.1"]),
        ("10.0.0.0/8", ["10.0.0.1", "10.255.255.255"], ["11.0.0.1", "9.255.255.255"]),
        ("192.168.1.0/24", ["192.168.1.77"], ["192.168.2.1"]),
        ("fd00::/8", ["fd12:3456::1", "fdff::"], ["fe00::1", "fc00::1"]),
        ("2001:db8::/32", ["2001:db8:cafe::17"], ["2001:db9::1"]),
        (" 10.0.0.1 ", ["10.0.0.1"], ["10.0.0.2"]),  # surrounding whitespace is trimmed
    ],
)
def test_addresses_and_networks(entry: str, trusted: list[str], untrusted: list[str]) -> None:
    proxies = TrustedProxies([entry])
    for host in trusted:
        assert proxies.trusts(host), host
    for host in untrusted:
        assert not proxies.trusts(host), host


def test_several_entries_combine() -> None:
    proxies = TrustedProxies(["127.0.0.1", "::1", "10.0.0.0/8"])
    assert all(proxies.trusts(host) for host in ["127.0.0.1", "::1", "10.9.8.7"])
    assert not proxies.trusts("192.0.2.1")


def test_unix_is_trusted_only_when_listed() -> None:
    assert TrustedProxies(["unix"]).trusts(None)
    assert TrustedProxies(["UNIX"]).trusts(None)
    assert not TrustedProxies(["127.0.0.1"]).trusts(None)
    assert not TrustedProxies(["unix"]).trusts("127.0.0.1")
    assert not TrustedProxies(["unix"]).trusts("unix")  # the word is no host


def test_bool_says_whether_anything_is_trusted() -> None:
    assert not TrustedProxies([])
    assert TrustedProxies(["unix"])
    assert TrustedProxies(["::1"])


def test_ipv4_mapped_hosts_match_ipv4_entries() -> None:
    proxies = TrustedProxies(["10.0.0.0/8"])
    assert proxies.trusts("::ffff:10.0.0.1")
    assert proxies.trusts("::ffff:a00:1")
    assert not proxies.trusts("::ffff:11.0.0.1")


def test_ipv4_mapped_entries_match_ipv4_hosts() -> None:
    proxies = TrustedProxies(["::ffff:10.0.0.0/104", "::ffff:192.0.2.1"])
    assert proxies.trusts("10.1.2.3")
    assert proxies.trusts("::ffff:10.1.2.3")
    assert proxies.trusts("192.0.2.1")
    assert not proxies.trusts("192.0.2.2")


def test_an_ipv6_network_covering_the_mapped_range_covers_ipv4() -> None:
    assert TrustedProxies(["::/0"]).trusts("198.51.100.1")
    assert not TrustedProxies(["2001:db8::/32"]).trusts("198.51.100.1")


def test_zone_ids_are_ignored_when_matching() -> None:
    proxies = TrustedProxies(["fe80::/10"])
    assert proxies.trusts("fe80::1%eth0")
    assert proxies.trusts("fe80::1%1")
    assert not proxies.trusts("2001:db8::1%eth0")
    assert TrustedProxies(["fe80::1%eth0"]).trusts("fe80::1%eth1")


@pytest.mark.parametrize(
    "host", ["", "localhost", "example.com", "unknown", "_hidden", "10.0.0.1:80", "[::1]", "%"]
)
def test_hosts_that_are_no_address_are_never_trusted(host: str) -> None:
    assert not TrustedProxies(["0.0.0.0/0", "::/0", "unix"]).trusts(host)


@pytest.mark.parametrize(
    "entry",
    ["", "localhost", "10.0.0.0/33", "10.0.0.1/8", "fd00::1/8", "300.0.0.1", "10.0.0.0/-1", "any"],
)
def test_invalid_entries_name_themselves(entry: str) -> None:
    with pytest.raises(ValueError, match="trusted proxy entry") as raised:
        TrustedProxies(["127.0.0.1", entry])
    assert repr(entry) in str(raised.value)


def test_host_bits_set_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="host bits set"):
        TrustedProxies(["10.0.0.1/8"])


@pytest.mark.parametrize("entry", ["*", " * "])
def test_star_is_refused_with_an_explanation(entry: str) -> None:
    with pytest.raises(ValueError, match="any client choose its address") as raised:
        TrustedProxies([entry])
    assert "networks" in str(raised.value)


def test_entries_may_be_any_iterable() -> None:
    assert TrustedProxies(entry for entry in ["127.0.0.1"]).trusts("127.0.0.1")


# -- the cache -------------------------------------------------------------------------------


def test_answers_are_remembered() -> None:
    proxies = TrustedProxies(["10.0.0.0/8"])
    assert proxies.trusts("10.0.0.1")
    assert not proxies.trusts("11.0.0.1")
    assert proxies._cache == {"10.0.0.1": True, "11.0.0.1": False}


def test_the_cache_is_bounded() -> None:
    proxies = TrustedProxies(["10.0.0.0/8"])
    limit = forwarded_module._CACHE_SIZE
    assert limit == 1024
    hosts = [f"10.0.{n // 256}.{n % 256}" for n in range(3 * limit + 7)]
    for host in hosts:
        assert proxies.trusts(host)
        assert len(proxies._cache) <= limit
    # Still right after the cache was emptied and refilled.
    assert proxies.trusts(hosts[0])
    assert not proxies.trusts("192.0.2.1")


def test_long_hosts_are_not_remembered() -> None:
    proxies = TrustedProxies(["fe80::/10"])
    host = "fe80::1%" + "x" * 200
    assert proxies.trusts(host)
    assert host not in proxies._cache
