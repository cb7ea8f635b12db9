"""``encode_json``: the JSON every response and WebSocket message is written with."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .._errors import InternalServerError
from . import writers
from .convert import JSON_CONVERTER

__all__ = ["encode_json", "encode_record"]


def _json_default(value: Any) -> Any:
    """What ``json.dumps`` writes for a value it has no native form for: ``to_dict()``
    (``Headers``, ``CookieJar``), else the JSON converter's unstructure side, the same
    converter ``Json[T]`` reads with (attrs classes, dataclasses, pydantic models, enums,
    datetimes, UUIDs, decimals, durations, sets)."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    plain = JSON_CONVERTER.unstructure(value)
    if plain is value:  # no hook: cattrs hands the value back
        raise TypeError(f"{type(value).__name__} is not JSON-serializable")
    return plain


# One encoder for every response (``json.dumps`` with options builds a new one per call):
# CPython's C encoder, made once, or the pure-Python one where there is none. ``_MARKERS``
# is the C encoder's circular-reference bookkeeping; a failed encoding can leave entries in
# it, so a failure clears it.
_JSON_ENCODER = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_json_default
)
_MARKERS: dict[int, Any] = {}
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODER: Callable[[Any, int], Any] | None = (
    None
    if _c_make_encoder is None
    else _c_make_encoder(
        _MARKERS, _json_default, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
)


def encode_json(value: Any) -> bytes:
    """Serialize ``value`` to compact UTF-8 JSON; ``Error`` (500) when it cannot be."""
    kind = type(value)
    if kind is dict or kind is list:  # no generated writer: not a record
        return _encode(value)
    written = encode_record(value)
    return _encode(value) if written is None else written


def encode_record(value: Any) -> bytes | None:
    """``encode_json(value)`` when the generated writer of its class writes it, else
    ``None``: a value of another class, or one the writer leaves to the path it shortcuts."""
    write = writers.writer(type(value))
    if write is not None:
        try:
            return write(value)
        except Exception:  # encode_json's other path writes it, or fails, as it always did
            pass
    return None


def _encode(value: Any) -> bytes:
    """``encode_json`` by the standard library's encoder and the converter."""
    try:
        if _C_ENCODER is not None:
            return "".join(_C_ENCODER(value, 0)).encode()
        return _JSON_ENCODER.encode(value).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        _MARKERS.clear()
        raise InternalServerError(f"response value is not JSON-serializable: {exc}") from exc
    except BaseException:  # a converter hook's own failure: the next encoding starts clean
        _MARKERS.clear()
        raise
