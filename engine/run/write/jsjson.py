"""JSON text exactly as JavaScript's `JSON.stringify` writes it.

The reference hashes `JSON.stringify(...)` output for run labels, so the bytes matter: object keys stay
in insertion order, numbers use JavaScript's text (`1.0` → `1`, `1e21` → `1e+21`), `undefined` members
are skipped (and become `null` inside arrays), and non-ASCII stays raw.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ...weval.ids import UNDEFINED, js_number

_encode_str = json.JSONEncoder(ensure_ascii=False).encode


_encode_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class _NotPlain(Exception):
    pass


def _plain(value: Any) -> Any:
    """The value with integral floats as ints and undefined members dropped, ready for the C encoder;
    raises _NotPlain where Python's JSON text would differ from JavaScript's (exponents, NaN)."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return int(value)
        text = repr(value)
        if "e" in text or "n" in text:  # 1e-07 vs 1e-7, inf, nan
            raise _NotPlain
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not UNDEFINED}
    if isinstance(value, list | tuple):
        return [None if v is UNDEFINED else _plain(v) for v in value]
    if value is UNDEFINED:
        return None
    if value is None or isinstance(value, str | int):  # bool is an int
        return value
    raise _NotPlain


def js_stringify(value: Any) -> str:
    """Fast path through the C encoder when its text is JavaScript's; the exact walk otherwise."""
    if type(value) is str:  # a point's argument, most often: the C encoder's text, as below
        return _encode_compact(value)
    try:
        plain = _plain(value)
        if type(plain) is list and len(plain) <= _SLICE and all(type(v) in _SCALARS for v in plain):
            # A short flat list (a point's `[3, 60]`): orjson's text is the standard encoder's for plain
            # values (~0.3 µs against ~3 µs, a JSONEncoder's C encoder made per call); it refuses what it
            # cannot write the same (integers past 64 bits, lone surrogates): the encoder below takes those
            try:
                return orjson.dumps(plain).decode()
            except TypeError:
                pass
        return _encode_sliced(plain)
    except (_NotPlain, ValueError):
        return _js_stringify(value)


_SCALARS = frozenset({str, int, float, bool, type(None)})  # what `_plain` leaves in a list, besides containers


_SLICE = 256  # list items per call of the C encoder


def _encode_sliced(value: Any, depth: int = 0) -> str:
    """`_encode_compact(value)`, the same text, with long lists encoded a slice at a time: the C encoder
    holds the GIL, and a whole 4 MB blueprint in one call (planning it for a run label) held the
    language server's other threads, its event loop included, for 0.1-0.3 s."""
    if depth < 3:
        if isinstance(value, list) and len(value) > _SLICE:
            return "[" + ",".join(_encode_compact(value[i:i + _SLICE])[1:-1]
                                  for i in range(0, len(value), _SLICE)) + "]"
        if isinstance(value, dict) and len(value) <= 16:
            return "{" + ",".join(f"{_encode_compact(k)}:{_encode_sliced(v, depth + 1)}"
                                  for k, v in value.items()) + "}"
    return _encode_compact(value)


def _js_stringify(value: Any) -> str:
    if value is None or value is UNDEFINED:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return _encode_str(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_js_stringify(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = [f"{_encode_str(str(k))}:{_js_stringify(v)}" for k, v in value.items() if v is not UNDEFINED]
        return "{" + ",".join(parts) + "}"
    return _encode_str(str(value))


def js_sort_key(value: Any) -> str:
    """`Array.prototype.sort()` without a comparator compares the values' string forms."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    return str(value)


def utf16_key(text: str) -> list[int]:
    """JavaScript compares strings by UTF-16 code units; Python by code points. Same for the BMP."""
    return list(text.encode("utf-16-be"))


# The root collation order (CLDR/ICU) of ASCII whitespace, punctuation and symbols, which is what
# `String.prototype.localeCompare` uses in Node with full ICU: all of them sort before digits, and
# digits before letters; letters compare case-insensitively first, lowercase before uppercase.
_ASCII_ORDER = "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789"
_RANK = {c: i for i, c in enumerate(_ASCII_ORDER)}
_LETTERS = len(_ASCII_ORDER)


def locale_compare_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A sort key approximating `a.localeCompare(b)` (ICU root collation) for identifiers.

    Exact for ASCII ids (the common case: `p1`, `hash-…`, `q_2`); other characters fall back to code
    point order after the ASCII letters.
    """
    if text.isascii() and text.isprintable():  # every character's ranks by one table each (all below 256)
        return (tuple(text.translate(_PRIMARY).encode("latin-1")),
                tuple(text.translate(_TERTIARY).encode("latin-1")))
    primary: list[int] = []
    tertiary: list[int] = []
    for ch in text:
        rank = _RANK.get(ch)
        if rank is not None:
            primary.append(rank)
            tertiary.append(0)
        elif ch.isascii() and ch.isalpha():
            primary.append(_LETTERS + ord(ch.lower()))
            tertiary.append(1 if ch.isupper() else 0)
        else:
            primary.append(_LETTERS + 0x80 + ord(ch.lower()))
            tertiary.append(1 if ch.isupper() else 0)
    return tuple(primary), tuple(tertiary)


# locale_compare_key's ranks of the printable ASCII characters, as str.translate tables
_PRINTABLE = [chr(c) for c in range(32, 127)]
_PRIMARY = str.maketrans({c: chr(_RANK[c] if c in _RANK else _LETTERS + ord(c.lower())) for c in _PRINTABLE})
_TERTIARY = str.maketrans({c: chr(1 if c.isupper() else 0) for c in _PRINTABLE})

