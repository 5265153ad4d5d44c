"""Keeping API keys out of everything we write or show.

Every secret a provider is built with is registered here; `redact()` replaces any registered value in a
string. ProviderError runs its message through it, so a key echoed back by a server's 401 body, or a key
in a custom model's URL, never reaches a results file, a cache entry, a log line or a traceback.
"""

from __future__ import annotations

import threading
from typing import Any

MASK = "***"
MASK_BYTES = MASK.encode("ascii")
_MIN_LEN = 6  # shorter values would scrub ordinary words; no real key is that short

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()  # longest first, so a key that contains another is masked whole
_secret_bytes: tuple[bytes, ...] = ()  # the same, UTF-8, for what is written to files

SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"}
)


def register_secret(value: str | None) -> None:
    global _secrets, _secret_bytes
    if not value or len(value) < _MIN_LEN:
        return
    with _lock:
        if value not in _secrets:
            _secrets = tuple(sorted((*_secrets, value), key=len, reverse=True))
            _secret_bytes = tuple(s.encode("utf-8") for s in _secrets)
        # "Bearer <key>" is masked through the key itself; nothing else to add.


def redact(text: str) -> str:
    for s in _secrets:
        if s in text:
            text = text.replace(s, MASK)
    return text


def redact_value(value: Any) -> Any:
    """`redact` on every string inside JSON-like data (dicts, lists, tuples), for what is shown without
    being written first (an editor's hover, lens and diagnostics of a run)."""
    if not _secrets:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    return value


def clip(text: str, limit: int) -> str:
    """`text` masked, then cut to at most `limit` characters, for a preview in a message. Masking after
    the cut (where the message is written) would miss a key the cut went through, and leave its first
    characters in the file."""
    longest = len(_secrets[0]) if _secrets else 0
    return redact(text[:limit + longest])[:limit]


def redact_bytes(data: bytes) -> bytes:
    """`redact` for bytes about to be written: the journal, the cache, results files (appendlog.py,
    run/write/files.py), so a key a provider echoed in an answer, or one interpolated into an input, is
    masked wherever it would land."""
    for s in _secret_bytes:
        if s in data:
            data = data.replace(s, MASK_BYTES)
    return data


def is_sensitive_header(name: str) -> bool:
    n = name.lower()
    return n in SENSITIVE_HEADERS or "key" in n or "token" in n or "secret" in n or "auth" in n


class Secret:
    """A string that will not print itself. `reveal()` is the only way to the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        register_secret(value)

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)
