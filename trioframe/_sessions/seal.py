"""Sealing session data into a cookie value, and opening it: AES-256-GCM from the
``cryptography`` package (the ``sessions`` extra); no cryptography of our own.

Each secret key (at least 32 random bytes, or a ``str`` of at least 32 characters) is
stretched into an AES-256 key with HKDF-SHA256, and named by a 4-byte key id (the first bytes
of a SHA-256 of the derived key, so the id says nothing about the key). A cookie value is
URL-safe base64, without padding, of::

    version (1 byte, 1) | key id (4) | nonce (12, random) | AES-GCM ciphertext and tag

The plaintext is compact JSON ``{"i": session id, "e": expiry (Unix seconds), "d": data}``;
the associated data binds the version, the key id and the cookie's name, so a value cannot
be moved to another cookie. The first key seals; every key opens (rotation: put the new key
first and keep the old ones until their cookies have expired).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from collections.abc import Sequence
from typing import Any

from .._errors import ConfigurationError

__all__ = ["MIN_KEY_SIZE", "Opened", "Sealer"]

MIN_KEY_SIZE = 32
_VERSION = b"\x01"
_NONCE_SIZE = 12
_HEADER_SIZE = 1 + 4 + _NONCE_SIZE
_TAG_SIZE = 16
# A value longer than this cannot be one we sealed within the cookie size limit: refused
# before any decoding (a hostile Cookie header costs nothing).
_MAX_VALUE_SIZE = 8192


def _aead() -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise ConfigurationError(
            "sessions need the cryptography package: pip install 'trioframe[sessions]'"
        ) from None
    return AESGCM


def _derive(secret: bytes | str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    if isinstance(secret, str):
        if len(secret) < MIN_KEY_SIZE:
            raise ConfigurationError(
                f"a session key must be at least {MIN_KEY_SIZE} characters (got {len(secret)})"
            )
        material = secret.encode()
    elif isinstance(secret, bytes):
        if len(secret) < MIN_KEY_SIZE:
            raise ConfigurationError(
                f"a session key must be at least {MIN_KEY_SIZE} bytes (got {len(secret)})"
            )
        material = secret
    else:
        raise ConfigurationError(f"a session key is bytes or str, not {type(secret).__name__}")
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"trioframe session v1")
    return hkdf.derive(material)


class Opened:
    """A cookie that opened: its session id, data, and whether it was sealed with an older
    key (then it is sealed again with the first)."""

    __slots__ = ("data", "old_key", "session_id")

    def __init__(self, session_id: str, data: dict[str, Any], old_key: bool) -> None:
        self.session_id = session_id
        self.data = data
        self.old_key = old_key


class Sealer:
    """Seals and opens session cookie values with ``keys`` (the first seals). Raises
    ``ConfigurationError`` for no key, a short key, or a missing ``cryptography``."""

    def __init__(self, keys: Sequence[bytes | str], cookie_name: str) -> None:
        aead = _aead()
        if isinstance(keys, str | bytes) or not keys:
            raise ConfigurationError("secret_keys is a non-empty list of keys, newest first")
        self._ciphers: dict[bytes, Any] = {}
        self._first_id = b""
        for secret in keys:
            derived = _derive(secret)
            key_id = hashlib.sha256(derived).digest()[:4]
            self._ciphers.setdefault(key_id, aead(derived))
            self._first_id = self._first_id or key_id
        self._name = cookie_name.encode()

    def seal(self, session_id: str, data: dict[str, Any], max_age: int) -> str:
        """The cookie value for ``data`` (JSON values), valid for ``max_age`` seconds.
        ``TypeError``/``ValueError`` for data JSON cannot carry."""
        plain = json.dumps(
            {"i": session_id, "e": int(time.time()) + max_age, "d": data},
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        ).encode()
        nonce = os.urandom(_NONCE_SIZE)
        header = _VERSION + self._first_id + nonce
        sealed = self._ciphers[self._first_id].encrypt(nonce, plain, self._aad(self._first_id))
        return base64.urlsafe_b64encode(header + sealed).rstrip(b"=").decode("ascii")

    def open(self, value: str | None) -> Opened | None:
        """The session in ``value``, or ``None`` for anything else: absent, malformed,
        tampered, sealed with an unknown key, or expired. Never raises."""
        if not value or len(value) > _MAX_VALUE_SIZE:
            return None
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except ValueError:
            return None
        if len(raw) < _HEADER_SIZE + _TAG_SIZE or raw[:1] != _VERSION:
            return None
        key_id, nonce = raw[1:5], raw[5:_HEADER_SIZE]
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            return None
        try:
            plain = cipher.decrypt(nonce, raw[_HEADER_SIZE:], self._aad(key_id))
            payload = json.loads(plain)
        except Exception:  # InvalidTag, or (never for our own) bad JSON
            return None
        if not isinstance(payload, dict):
            return None
        session_id, expiry, data = payload.get("i"), payload.get("e"), payload.get("d")
        if not isinstance(session_id, str) or type(expiry) is not int or not isinstance(data, dict):
            return None
        if expiry <= time.time():
            return None
        return Opened(session_id, data, key_id != self._first_id)

    def _aad(self, key_id: bytes) -> bytes:
        return _VERSION + key_id + self._name
