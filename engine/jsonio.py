"""JSON in and out, fast: orjson, with the standard library for the few values orjson refuses.

A run encodes a journal record per call, a request body per call and thousands of result files, and
decodes every answer; with the standard encoder that was a tenth of a run's CPU.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson


def _clean(value: Any) -> Any:
    """NaN and infinities become null, as JSON.stringify writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _refuse(o: Any) -> Any:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


# The standard encoder, for what orjson refuses: integers beyond 64 bits and strings holding lone
# surrogates (a model's answer may carry one, decoded from a `\ud800` escape). ASCII escapes keep
# such a string writable as UTF-8.
_fallback = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=_refuse).encode
_OPTIONS = orjson.OPT_NON_STR_KEYS  # int keys become strings, as with json and JSON.stringify


def dumps_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON, as JSON.stringify writes it: NaN and infinities (a similarity with no
    embedding) become null."""
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except TypeError:
        return _fallback(_clean(value)).encode("ascii")


def dumps(value: Any) -> str:
    """`dumps_bytes` as text."""
    return dumps_bytes(value).decode("utf-8")


def loads(data: bytes | str) -> Any:
    """Parse JSON; orjson, or the standard parser for what orjson refuses (lone surrogate escapes,
    which JSON.parse accepts). Raises ValueError."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data)
        except RecursionError:
            # orjson stops at 1,024 levels; the standard parser recurses until Python's limit, and a
            # provider's `[[[[…` must be a bad answer, not a crash.
            raise ValueError("JSON nested too deeply") from None
