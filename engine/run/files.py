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



def dumps(value: Any, *, indent: int | None = None) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False,
                          separators=None if indent else (",", ":"))
    except ValueError:  # NaN somewhere (a similarity with no embedding): write null like JavaScript
        return json.dumps(_clean(value), ensure_ascii=False, indent=indent,
                          separators=None if indent else (",", ":"))


def write_json(path: Path, value: Any, *, indent: int | None = None) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(dumps(value, indent=indent), encoding="utf-8")
    os.replace(tmp, path)
