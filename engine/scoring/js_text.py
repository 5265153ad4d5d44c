"""JavaScript's notions of whitespace, trimming, JSON and equality, for scorers that must agree with JS.

Python's `str.strip()`, `str.split()` and `json.loads` differ from JavaScript's `trim()`, `/\\S+/g` and
`JSON.parse` at the edges (U+FEFF, U+001C-U+001F, U+0085, `NaN`), and `True == 1` in Python but not in
JavaScript. The reference implementations are TypeScript, so the scorers use these instead.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, TypeGuard

from ..jsonio import NestedTooDeeply

# ECMAScript WhiteSpace + LineTerminator: what `\s` matches and what `trim()` removes.
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# The same set as the body of a regex character class (ranges kept short for readability).
JS_WHITESPACE_CLASS = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
JS_LINE_TERMINATORS_CLASS = r"\n\r\u2028\u2029"

_WORDS = re.compile(f"[^{JS_WHITESPACE_CLASS}]+")
_SPACE_RUNS = re.compile(f"[{JS_WHITESPACE_CLASS}]+")


def js_trim(text: str) -> str:
    """`String.prototype.trim()`."""
    return text.strip(JS_WHITESPACE)


def js_words(text: str) -> list[str]:
    """`text.match(/\\S+/g) || []`: runs of non-whitespace."""
    return _WORDS.findall(text)


def js_remove_whitespace(text: str) -> str:
    """`text.replace(/\\s+/g, '')`."""
    return _SPACE_RUNS.sub("", text)


def _reject_constant(name: str) -> Any:
    # JSON.parse has no NaN / Infinity literals; Python's json accepts them by default.
    raise ValueError(f"{name} is not JSON")


def json_blob(text: str) -> str:
    r"""What `text.match(/\{[\s\S]*\}/)?.[0] ?? text` gives (AgentV's extractJsonBlob): from the first
    `{` to the last `}` after it, else the text. With find/rfind: the regex is quadratic on a run of `{`."""
    start = text.find("{")
    end = text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else text


def js_json_parse(text: str) -> Any:
    """`JSON.parse(text)`: raises ValueError where JavaScript would throw, NestedTooDeeply (a ValueError)
    where JavaScript parses what the standard parser cannot (a model's `[[[[…` 100,000 deep raised
    RecursionError through the scorer)."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise NestedTooDeeply("JSON nested deeper than evalspec's parser goes") from None


def is_js_number(value: object) -> TypeGuard[int | float]:
    """`typeof value === 'number'` for a value that came from YAML/JSON (bool is not a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


@lru_cache(maxsize=1024)  # scores take few distinct values; Decimal is slow
def to_fixed(x: float, digits: int) -> str:
    """`x.toFixed(digits)`, the one copy: the exact binary value rounded, ties away from zero (0.125 → "0.13",
    1.005 → "1.00"); -0 written without its sign, as JavaScript's `x < 0` test does ("0.00"), but a negative
    that rounds to zero keeps it ("-0.00"); NaN, ±Infinity and magnitudes from 1e21 on as String(x) writes
    them ("1e+21")."""
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    if x != x:
        return "NaN"
    if abs(x) >= 1e21:
        from ..weval.ids import js_number

        return js_number(x) if x - x == 0 else ("Infinity" if x > 0 else "-Infinity")
    with localcontext() as ctx:
        ctx.prec = 22 + digits  # every digit of a magnitude below 1e21, and the decimals asked for
        return str(Decimal(x if x != 0 else 0).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def js_strict_equal(a: object, b: object) -> bool:
    """`a === b` for JSON-like values (primitives only; objects compare by identity in JS)."""
    if is_js_number(a) and is_js_number(b):
        return a == b  # 1 === 1.0; NaN !== NaN holds for floats too
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is b


