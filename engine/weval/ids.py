"""Blueprint ids from paths and prompt ids from content hashes, exactly as the reference computes them."""

from __future__ import annotations

import hashlib
import json
import math
import re
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
    """Number text as JavaScript's String(x) writes it: 1.0 → 1, 1e-7 → 1e-7, 1e21 → 1e+21."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x) or math.isinf(x):
        return "null"  # JSON.stringify's rendering
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    text = repr(x)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        text = f"{mantissa}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
        if mantissa.endswith(".0"):
            text = text.replace(".0e", "e")
    return text


# What json.dumps(s, ensure_ascii=False) returns for a string, without building a JSONEncoder per call
# (which was most of the time of hashing a prompt with 1,000,000 points).
_quote: Any = json.encoder.encode_basestring
quote_json: Any = _quote


def stable_json(value: Any) -> str:
    """json-stable-stringify: sorted keys, no spaces, raw UTF-8, JavaScript numbers, undefined skipped."""
    kind = type(value)
    if kind is str:
        return _quote(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return js_number(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join([stable_json(v) for v in value]) + "]"
    if isinstance(value, dict):
        items = sorted((str(k), v) for k, v in value.items() if v is not _UNDEFINED)
        return "{" + ",".join([_quote(k) + ":" + stable_json(v) for k, v in items]) + "}"
    return _quote(str(value))


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
    return "hash-" + hashlib.sha256(body_json.encode("utf-8")).hexdigest()[:12]


_SAFE_FILE = re.compile(r"[:/\\?#%\[\]]")


def safe_file_part(model_id: str) -> str:
    """Model id characters that cannot stand in a file name become `_` (the artefact layout); a name too
    long for a file name is cut (bounded_file_part)."""
    return bounded_file_part(_SAFE_FILE.sub("_", model_id))

