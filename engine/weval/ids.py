"""Blueprint ids from paths and prompt ids from content hashes, exactly as the reference computes them."""

from __future__ import annotations

import hashlib
import json
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..own_files import bounded_file_part

_SUFFIXES = (".civic.yml", ".civic.yaml", ".weval.yml", ".weval.yaml", ".yml", ".yaml", ".json")
_REJECTED_PREFIXES = ("_pr_", "_staging_", "_test_")


def blueprint_id(path: Path | str | None) -> str:
    """`blueprints/subdir/special.civic.yaml` → `subdir__special`, as the reference names them."""
    if path is None:
        return "untitled"
    parts = Path(path).as_posix().split("/")
    if "blueprints" in parts:
        parts = parts[len(parts) - 1 - parts[::-1].index("blueprints") + 1:]
    else:
        parts = parts[-1:]
    rel = "/".join(parts)
    for suffix in _SUFFIXES:
        if rel.endswith(suffix):
            rel = rel[: -len(suffix)]
            break
    return rel.replace("/", "__")


def blueprint_id_problem(bid: str) -> str | None:
    if bid.endswith("__"):
        return f"The blueprint id '{bid}' (from the file path) may not end with '__'."
    for prefix in _REJECTED_PREFIXES:
        if bid.startswith(prefix):
            return f"The blueprint id '{bid}' (from the file path) may not start with '{prefix}'; rename the file."
    return None


def js_number(x: float | int) -> str:
    """Number text as JavaScript's String(x) writes it (Number::toString: the shortest digits that read
    back, fixed notation from 1e-6 up to 1e21): 1.0 → 1, 1e-7 → 1e-7, 1e21 → 1e+21, 2**64 →
    18446744073709552000 (an integer past 2**53 is the double JavaScript reads)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -(2**53) < x < 2**53:
            return str(x)
        try:
            x = float(x)
        except OverflowError:
            return "null"  # Infinity in JavaScript; JSON.stringify writes null
    if math.isnan(x) or math.isinf(x):
        return "null"  # JSON.stringify's rendering
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    s = "".join(map(str, digits))
    k = len(s)
    n = int(exponent) + k  # the decimal point's place after the first n digits
    if k <= n <= 21:
        text = s + "0" * (n - k)
    elif 0 < n <= 21:
        text = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + s
    else:
        e = n - 1
        text = (s if k == 1 else s[0] + "." + s[1:]) + ("e+" if e >= 0 else "e-") + str(abs(e))
    return ("-" if sign else "") + text


# What json.dumps(s, ensure_ascii=False) returns for a string, without building a JSONEncoder per call
# (which was most of the time of hashing a prompt with 1,000,000 points).
_quote: Any = json.encoder.encode_basestring
quote_json: Any = _quote


def stable_json(value: Any) -> str:
    """json-stable-stringify: sorted keys, no spaces, raw UTF-8, JavaScript numbers, undefined skipped."""
    kind = type(value)
    if kind is str:
        return _quote(value)
    if kind is dict:
        keys = [k if type(k) is str else str(k) for k, v in value.items() if v is not _UNDEFINED]
        # JavaScript sorts by UTF-16 code units: past U+FFFF that differs from code points
        keys.sort(key=None if "".join(keys).isascii() else _utf16)
        return "{" + ",".join([_quote(k) + ":" + stable_json(value[k]) for k in keys]) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join(["null" if v is _UNDEFINED else stable_json(v) for v in value]) + "]"
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int and -9007199254740992 < value < 9007199254740992:
        return str(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return js_number(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(["null" if v is _UNDEFINED else stable_json(v) for v in value]) + "]"
    if isinstance(value, dict):
        return stable_json(dict(value))
    return _quote(str(value))


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


class _Undefined:
    """JavaScript's undefined: a member that JSON.stringify skips."""

    def __repr__(self) -> str:
        return "undefined"


_UNDEFINED = _Undefined()
UNDEFINED: Any = _UNDEFINED


def prompt_hash_id(normalized_prompt: dict[str, Any]) -> str:
    """`hash-` + the first 12 hex of sha256 over the stable JSON of the prompt without its id."""
    body = {k: v for k, v in normalized_prompt.items() if k != "id"}
    return hash_id(stable_json(body))


def hash_id(body_json: str) -> str:
    """`prompt_hash_id` of a prompt whose stable JSON (without its id) is `body_json`."""
    try:
        data = body_json.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON.stringify writes it as its \\u escape
        data = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", body_json).encode("utf-8")
    return "hash-" + hashlib.sha256(data).hexdigest()[:12]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


_SAFE_FILE = re.compile(r"[:/\\?#%\[\]]")


def safe_file_part(model_id: str) -> str:
    """Model id characters that cannot stand in a file name become `_` (the artefact layout); a name too
    long for a file name is cut (bounded_file_part)."""
    return bounded_file_part(_SAFE_FILE.sub("_", model_id))

