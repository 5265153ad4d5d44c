"""Writing result files: JSON as the reference writes it, atomically, and file-name-safe timestamps."""

from __future__ import annotations

import json
import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def now_utc() -> datetime:
    return datetime.now(UTC)


def iso_timestamp(when: datetime) -> str:
    """JavaScript's `toISOString()`: `2024-01-01T12:30:00.123Z`."""
    when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def safe_timestamp(when: datetime) -> str:
    """The reference's `toSafeTimestamp`: `2024-01-01T12-30-00-123Z` (file names cannot hold `:`/`.`)."""
    return iso_timestamp(when).replace(":", "-").replace(".", "-")


def _clean(value: Any) -> Any:
    """NaN and infinities become null, as JSON.stringify writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value



def _make_encoder() -> Any:
    """Compact, raw-UTF-8, NaN-refusing JSON encoding through one reusable C encoder.

    `json.dumps` builds a new C encoder on every call (~5 µs); a run writes one record a call and
    thousands of small result files, so the encoder is built once. Falls back to json.dumps where the
    C accelerator is missing.
    """
    try:
        from json.encoder import c_encode_basestring, c_make_encoder  # type: ignore[attr-defined]
    except ImportError:
        c_make_encoder = None
    if c_make_encoder is None or c_encode_basestring is None:
        plain = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
        return plain

    def default(o: Any) -> Any:
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan)
    chunks = c_make_encoder({}, default, c_encode_basestring, None, ":", ",", False, False, False)

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return c_encode_basestring(value)
        return "".join(chunks(value, 0))

    return encode


_encode = _make_encoder()


def dumps(value: Any) -> str:
    """Compact JSON; NaN (a similarity with no embedding) is written as null, as JavaScript does."""
    try:
        return _encode(value)
    except ValueError:
        return _encode(_clean(value))


def dumps_pretty(value: Any) -> str:
    """Indented two levels deep, compact below.

    `json.dumps(indent=…)` falls back to the pure-Python encoder (≈10× slower: ~0.3 s for a 2,000-prompt
    comparison file); this keeps the C encoder for the bulk and still puts every top-level field, and
    every prompt or model under it, on its own line.
    """
    if not isinstance(value, dict) or not value:
        return dumps(value)
    lines = []
    for key, item in value.items():
        head = f"  {dumps(key)}: "
        if isinstance(item, dict) and item:
            inner = ",\n".join(f"    {dumps(k)}: {dumps(v)}" for k, v in item.items())
            lines.append(head + "{\n" + inner + "\n  }")
        else:
            lines.append(head + dumps(item))
    return "{\n" + ",\n".join(lines) + "\n}"


def write_json(path: Path, value: Any, *, pretty: bool = False) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(dumps_pretty(value) if pretty else dumps(value), encoding="utf-8")
    os.replace(tmp, path)
