"""Settings written as text: a TOML file, ``TRIOFRAME_<NAME>`` environment variables and
``NAME=VALUE`` pairs (``trioframe run --set``), each turned into ``ServerConfig``'s flat keywords.

Every flat setting of ``ServerConfig`` can be written this way. A value is read according to
the setting's type (``KINDS``) and then checked by ``ServerConfig`` itself, one setting at a
time, so that a wrong value is reported with the place it came from. Every failure is a
``SettingError`` whose message is one line naming the setting and where it was written
(an unknown name also names the closest known one). docs/cli.md describes the syntax.
"""

from __future__ import annotations

import difflib
import json
import math
import tomllib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ..tls import SelfSigned, TLSFiles
from .server_config import ServerConfig

__all__ = [
    "ENV_PREFIX",
    "KINDS",
    "NOT_SETTINGS",
    "SettingError",
    "from_environ",
    "from_pairs",
    "from_toml",
    "setting_names",
]

#: Environment variables named ``TRIOFRAME_<NAME>`` set the setting ``<name>``.
ENV_PREFIX = "TRIOFRAME_"
#: ``TRIOFRAME_`` variables that trioframe uses for something else: never read as settings.
NOT_SETTINGS = frozenset({"TRIOFRAME_RELOADER_PIPE"})
#: A setting's type (as ``attrs.fields(ServerConfig)`` spells it) → how its text is read.
KINDS = {
    "int": "int",
    "int | None": "optional int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "tuple[str, ...]": "strings",
    "tuple[str, ...] | None": "optional strings",
    "TLSFiles | SelfSigned | ssl.SSLContext | None": "tls",
}
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})
_EXPECTED = {
    "int": "an integer",
    "optional int": "an integer or none",
    "float": "a number",
    "bool": "true or false (also 1/0, yes/no, on/off)",
    "str": "a string",
    "strings": "a list of strings (comma-separated, or a JSON array)",
    "optional strings": "a list of strings (comma-separated, or a JSON array) or none",
    "tls": "none, self-signed, or CERT_FILE,KEY_FILE[,CLIENT_CA]",
}


class SettingError(ValueError):
    """A setting that cannot be used: ``str(error)`` is one line naming it and its source."""


def _kinds() -> dict[str, str]:
    kinds = {}
    for field in attrs.fields(ServerConfig):
        kind = KINDS.get(str(field.type))
        if kind is None:  # a new setting of a new type: teach KINDS to read it
            raise TypeError(f"no way to read ServerConfig.{field.name} ({field.type}) from text")
        kinds[field.name] = kind
    return kinds


_SETTINGS = _kinds()


def setting_names() -> tuple[str, ...]:
    """Every flat setting of ``ServerConfig``, in its order."""
    return tuple(_SETTINGS)


def from_pairs(pairs: Iterable[str], where: str = "--set") -> dict[str, Any]:
    """``NAME=VALUE`` strings as settings (later pairs win)."""
    settings: dict[str, Any] = {}
    for pair in pairs:
        raw_name, sep, text = pair.partition("=")
        if not sep or not raw_name.strip():
            raise SettingError(f"{where} expects NAME=VALUE, got {pair!r}")
        name = raw_name.strip().lower().replace("-", "_")
        source = f"{where} {pair}"
        _known(name, f"unknown setting {name!r} in {where} {pair}", str)
        settings[name] = _checked(name, _from_text(name, text, source), source)
    return settings


def from_environ(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings that ``TRIOFRAME_<NAME>`` variables of ``environ`` set."""
    settings: dict[str, Any] = {}
    for key in sorted(environ):
        if not key.startswith(ENV_PREFIX) or key in NOT_SETTINGS:
            continue
        name = key[len(ENV_PREFIX) :].lower()
        _known(name, f"unknown setting in the environment: {key}", _variable)
        settings[name] = _checked(name, _from_text(name, environ[key], key), key)
    return settings


def from_toml(path: str) -> dict[str, Any]:
    """The settings of the TOML file ``path``: its ``[trioframe]`` table when it has one,
    else its top level."""
    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        raise SettingError(f"--config {path}: cannot read it: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingError(f"--config {path}: not valid TOML: {error}") from None
    table = document.get("trioframe", document)
    if not isinstance(table, dict):
        raise SettingError(f"--config {path}: 'trioframe' must be a table of settings")
    settings: dict[str, Any] = {}
    for name, value in table.items():
        source = f"{path}: {name}"
        _known(name, f"unknown setting {name!r} in {path}", str)
        settings[name] = _checked(name, _from_toml(name, value, source), source)
    return settings


def _known(name: str, message: str, spell: Callable[[str], str]) -> None:
    """Refuse a name that is no setting, suggesting the closest one (as ``spell`` writes it)."""
    if name in _SETTINGS:
        return
    close = difflib.get_close_matches(name, _SETTINGS, n=1)
    hint = f" (did you mean {spell(close[0])}?)" if close else ""
    raise SettingError(f"{message}{hint}")


def _variable(name: str) -> str:
    return ENV_PREFIX + name.upper()


def _checked(name: str, value: Any, source: str) -> Any:
    """``value`` once ``ServerConfig`` has accepted it for ``name``."""
    try:
        ServerConfig(**{name: value})
    except (TypeError, ValueError) as error:  # attrs' in_ puts its message first in args
        message = error.args[0] if error.args and isinstance(error.args[0], str) else error
        raise SettingError(f"{source}: {message}") from None
    return value


def _wrong(name: str, value: Any, source: str) -> SettingError:
    return SettingError(f"{source}: expected {_EXPECTED[_SETTINGS[name]]}, got {value!r}")


def _from_text(name: str, text: str, source: str) -> Any:
    """A value written as text (an environment variable, ``--set``), read per its kind."""
    kind = _SETTINGS[name]
    word = text.strip()
    if kind.startswith("optional ") or kind == "tls":
        if word.lower() == "none":
            return None
        kind = kind.removeprefix("optional ")
    try:
        if kind == "int":
            return int(word)
        if kind == "float":
            number = float(word)
            if not math.isfinite(number):
                raise ValueError(word)
            return number
        if kind == "bool":
            if word.lower() in _TRUE:
                return True
            if word.lower() in _FALSE:
                return False
            raise ValueError(word)
        if kind == "str":
            return word
        if kind == "tls" and word.lower() == "self-signed":
            return SelfSigned()
        items = _strings(word)
        return _tls_files(items) if kind == "tls" else items
    except ValueError:
        raise _wrong(name, text, source) from None


def _strings(word: str) -> tuple[str, ...]:
    if word.startswith("["):
        items = json.loads(word)  # a JSONDecodeError is a ValueError
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise ValueError(word)
        return tuple(items)
    return tuple(item.strip() for item in word.split(",") if item.strip())


def _tls_files(items: tuple[str, ...]) -> TLSFiles:
    if len(items) not in (2, 3):
        raise ValueError(items)
    return TLSFiles(*items)


def _from_toml(name: str, value: Any, source: str) -> Any:
    """A TOML value, checked against its kind (``"none"`` stands for ``None``)."""
    kind = _SETTINGS[name]
    if kind.startswith("optional ") or kind == "tls":
        if isinstance(value, str) and value.strip().lower() == "none":
            return None
        kind = kind.removeprefix("optional ")
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "float" and number and math.isfinite(value):
        return float(value)
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "str" and isinstance(value, str):
        return value
    strings = isinstance(value, list) and all(isinstance(item, str) for item in value)
    if kind == "strings" and strings:
        return tuple(value)
    if kind == "tls":
        if isinstance(value, str) and value.strip().lower() == "self-signed":
            return SelfSigned()
        if strings and len(value) in (2, 3):
            return TLSFiles(*value)
    raise _wrong(name, value, source)
