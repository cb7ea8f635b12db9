"""``ServerConfig`` is made of groups: every setting of every group has one flat keyword, one
read-only property and one ``with_*`` method, and trioframe's own code reads the groups."""

from __future__ import annotations

import ast
import inspect
import pathlib
import pickle

import attrs
import pytest

import trioframe
from trioframe import ServerConfig
from trioframe._server.config import GROUPS, AppLimits, Limits, Timeouts
from trioframe._server.config import server_config as server_config_module

FIELDS = {
    field.name: (name, field) for name, group in GROUPS.items() for field in attrs.fields(group)
}
#: ``with_*`` methods that set a setting another way than ``with_<name>(value)``
OTHER_SETTERS = {"with_self_signed": "tls"}
#: settings whose keyword takes more than the stored type (a converter normalises it)
CONVERTED = {"tls", "trusted_proxies", "websocket_allowed_origins"}
PACKAGE = pathlib.Path(trioframe.__file__).parent
CONFIG_PACKAGE = PACKAGE / "_server" / "config"


def test_each_setting_is_in_exactly_one_group() -> None:
    names = [field.name for group in GROUPS.values() for field in attrs.fields(group)]
    assert len(names) == len(set(names)) == len(FIELDS)
    assert not set(GROUPS) & set(FIELDS)  # a group's attribute never hides a setting


def test_each_setting_has_one_keyword_with_the_groups_default_and_type() -> None:
    parameters = inspect.signature(ServerConfig.__init__).parameters
    keywords = {name: p for name, p in parameters.items() if name != "self"}
    assert set(keywords) == set(FIELDS)
    for name, parameter in keywords.items():
        _, field = FIELDS[name]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameter.default == field.default, name
        if name not in CONVERTED:
            assert parameter.annotation == field.type, name


def test_the_typing_view_lists_each_setting_with_its_stored_type() -> None:
    """The ``if TYPE_CHECKING:`` block is what mypy knows of the flat properties."""
    tree = ast.parse(inspect.getsource(server_config_module))
    (block,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        if any(isinstance(item, ast.AnnAssign) for item in node.body)
    ]
    declared = {
        ast.unparse(item.target): ast.unparse(item.annotation)
        for item in block.body
        if isinstance(item, ast.AnnAssign)
    }
    assert declared == {name: field.type for name, (_, field) in FIELDS.items()}


def test_each_setting_has_one_read_only_property_reading_its_group() -> None:
    config = ServerConfig()
    for name, (group_name, _) in FIELDS.items():
        prop = inspect.getattr_static(ServerConfig, name)
        assert isinstance(prop, property) and prop.fset is None, name
        assert getattr(config, name) is getattr(getattr(config, group_name), name)
    properties = {
        name for name, value in inspect.getmembers(ServerConfig) if isinstance(value, property)
    }
    assert properties == set(FIELDS)


def test_each_setting_has_one_documented_with_method() -> None:
    methods = {name for name in dir(ServerConfig) if name.startswith("with_")}
    assert methods == {f"with_{name}" for name in FIELDS} | set(OTHER_SETTERS)
    for name in methods:
        assert inspect.getdoc(getattr(ServerConfig, name)), name
    for name, (_, field) in FIELDS.items():
        method = getattr(ServerConfig, f"with_{name}")
        if name not in CONVERTED:
            value_type = list(inspect.signature(method).parameters.values())[1].annotation
            assert value_type == field.type, name


def test_with_methods_copy_one_setting() -> None:
    base = ServerConfig()
    assert base.with_http1_parser("h11").http1_parser == "h11"
    assert base.with_reuse_port(False).reuse_port is False
    assert base.with_max_requests_jitter(5).max_requests_jitter == 5
    assert base.with_max_requests_per_worker(100, jitter=10).max_requests_jitter == 10
    changed = base.with_send_timeout(2.0)
    assert changed.timeouts == attrs.evolve(base.timeouts, send_timeout=2.0)
    assert changed.limits == base.limits
    with pytest.raises(ValueError, match="max_requests_jitter"):
        base.with_max_requests_jitter(-1)


def test_attrs_sees_the_flat_settings() -> None:
    config = ServerConfig(max_body_size=1024, trusted_proxies=["10.0.0.0/8"])
    assert [field.name for field in attrs.fields(ServerConfig)] == list(FIELDS)
    copy = attrs.evolve(config, http2=True, header_timeout=2.0)
    assert (copy.http2, copy.header_timeout, copy.max_body_size) == (True, 2.0, 1024)
    assert copy.trusted_proxies == ("10.0.0.0/8",)
    assert attrs.asdict(config)["max_body_size"] == 1024
    assert pickle.loads(pickle.dumps(config)) == config
    assert hash(config) == hash(ServerConfig(max_body_size=1024, trusted_proxies=["10.0.0.0/8"]))
    with pytest.raises(ValueError, match=r"ServerConfig\.max_body_size must be positive"):
        attrs.evolve(config, max_body_size=0)
    with pytest.raises(TypeError):
        ServerConfig(no_such_setting=1)  # type: ignore[call-arg]


def test_the_groups_hold_what_the_keywords_said() -> None:
    config = ServerConfig(max_body_size=1024, max_header_count=10, body_timeout=3.0)
    assert config.app_limits == AppLimits(max_body_size=1024)
    assert config.limits == Limits(max_header_count=10)
    assert config.timeouts == Timeouts(body_timeout=3.0)


def _reads_a_flat_setting(node: ast.AST) -> bool:
    """``<...>config.<setting>``: a flat property read on something named like a config."""
    if not isinstance(node, ast.Attribute) or node.attr not in FIELDS:
        return False
    receiver = node.value
    name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", "")
    return name.lstrip("_") in {"config", "cfg", "server_config"}


def test_trioframe_reads_settings_through_the_groups() -> None:
    """Inside the package, ``config.limits.max_header_size``, never ``config.max_header_size``:
    the flat properties are the public face only."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if CONFIG_PACKAGE in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [
            f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}"
            for node in ast.walk(tree)
            if _reads_a_flat_setting(node)
        ]
    assert offenders == []


def test_the_flat_read_check_sees_a_flat_read() -> None:
    def reads(source: str) -> bool:
        return _reads_a_flat_setting(ast.parse(source, mode="eval").body)

    assert reads("self.config.send_timeout") and reads("config.workers")
    assert reads("state.config.max_body_size") and reads("self._config.http2")
    assert not reads("config.timeouts.send_timeout") and not reads("self.workers")
