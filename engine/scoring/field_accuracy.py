"""AgentV's `field-accuracy` assertion: fields of a JSON answer against the test's expected output.

Follows AgentV v2.19 (wording included). The answer is read as JSON: the whole text, else the content
of a ```json fenced block, else the outermost `{…}` in it. The expected data is the content of the last
expected assistant message that has one (an object, or text holding JSON).

Each field `{path, match, weight = 1, required = true, tolerance, relative, formats}`:
- `path`: dot path with array indexes (`invoice.items[0].sku`).
- No expected value at that path: AgentV counts the field as matched ("no expected value"); evalspec
  does not score the assertion (a field that was not compared is never a match; docs/reference-differences.md).
- Missing in the answer: a miss when `required`, else left out (weight 0).
- `exact`: deep equality (JSON semantics); `numeric_tolerance`: |got − want| ≤ tolerance, or relative
  to |want| with `relative: true` (numbers and numeric strings); `date`: the same calendar day (UTC) of
  `String(value)` read as AgentV reads it (parse_date: bun's `new Date(text)`, then AgentV's own
  `DD-MMM-YYYY` and `MM/DD/YYYY` / `DD/MM/YYYY` fallbacks).
`aggregation`: `weighted_average` (default; no weight at all → 0) or `all_or_nothing`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..weval.js_values import js_string as _js_string
from . import js_date
from .js_text import is_js_number, js_json_parse, js_trim, json_blob, to_fixed
from .tool_trajectory import deep_equal

_MONTHS = {name: i for i, names in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december"))) for name in names}
# AgentV's fallbacks after `new Date(text)` (fullmatch: JavaScript's `^…$` without the m flag)
_DAY_MON_YEAR = re.compile(r"([0-9]{1,2})-([A-Za-z]{3,9})-([0-9]{4})")
_NUMERIC_DATE = re.compile(r"([0-9]{1,2})[/-]([0-9]{1,2})[/-]([0-9]{4})")
# fieldConfig.formats ?? DEFAULT_DATE_FORMATS
_DEFAULT_DATE_FORMATS = ("YYYY-MM-DDTHH:mm:ssZ", "YYYY-MM-DDTHH:mm:ss", "YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY",
                         "DD/MM/YYYY", "MM-DD-YYYY", "DD-MM-YYYY")


class FieldsResult(NamedTuple):
    score: float  # meaningless when `not_scored` says why the check could not be made
    hits: tuple[str, ...]
    misses: tuple[str, ...]
    reasoning: str | None = None
    unclamped: float | None = None  # the score the verdict comes from (AgentV), when it differs
    not_scored: str | None = None


_NOT_FOUND = object()


_FENCE = re.compile(r"```json\n?|```")


def parse_answer_json(text: str) -> Any:
    """AgentV's parseJsonFromText: code fences removed, then the text from the first `{` to the last `}`
    (else all of it) parsed as JSON — any JSON value. Raises ValueError."""
    cleaned = _FENCE.sub("", text if isinstance(text, str) else "").strip()
    return js_json_parse(json_blob(cleaned))


def expected_data(messages: Sequence[tuple[str, Any]]) -> Any:
    """From (role, content) expected messages: the last assistant content that is an object (or a list),
    or text holding JSON (AgentV's extractExpectedData); None when there is none."""
    for role, content in reversed(list(messages)):
        if role != "assistant" or content is None or content is False or content == "" or (
                is_js_number(content) and (content == 0 or math.isnan(content))):
            continue  # JavaScript's falsy values (an empty list or object is truthy there)
        if isinstance(content, Mapping | list):
            return content
        if isinstance(content, str):
            try:
                return parse_answer_json(content)
            except ValueError:
                continue
    return None


class JsBuiltin:
    """What JavaScript finds on a plain object or array that JSON did not put there: `constructor`,
    `toString` … (functions) and `__proto__` (Object.prototype, an object without own keys)."""

    __slots__ = ("kind", "name")

    def __init__(self, kind: str, name: str) -> None:
        self.kind, self.name = kind, name  # kind: "function" | "prototype"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsBuiltin) and (self.kind, self.name) == (other.kind, other.name)

    def __hash__(self) -> int:
        return hash((self.kind, self.name))


_OBJECT_FUNCTIONS = frozenset({"constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
                               "toLocaleString", "toString", "valueOf", "__defineGetter__", "__defineSetter__",
                               "__lookupGetter__", "__lookupSetter__"})
_ARRAY_FUNCTIONS = frozenset({"at", "concat", "copyWithin", "entries", "every", "fill", "filter", "find",
                              "findIndex", "findLast", "findLastIndex", "flat", "flatMap", "forEach", "includes",
                              "indexOf", "join", "keys", "lastIndexOf", "map", "pop", "push", "reduce",
                              "reduceRight", "reverse", "shift", "slice", "some", "sort", "splice", "toReversed",
                              "toSorted", "toSpliced", "unshift", "values", "with"})


def resolve_path(obj: Any, path: str) -> Any:
    """AgentV's resolvePath: dot and bracket parts, read as JavaScript reads them (an array's `length`,
    an object's inherited `constructor`, `__proto__` …); _NOT_FOUND for undefined."""
    if not path or obj is None or obj is False or obj == 0 or obj == "":
        return _NOT_FOUND
    current = obj
    for part in (p for p in re.split(r"\.|\[|\]", path) if p):
        if isinstance(current, list):
            if re.fullmatch(r"[0-9]+", part):
                index = int(part)
                current = current[index] if index < len(current) else _NOT_FOUND
            elif part == "length":
                current = len(current)
            elif part in _ARRAY_FUNCTIONS or part in _OBJECT_FUNCTIONS:
                own = part in _ARRAY_FUNCTIONS or part in ("constructor", "toString", "toLocaleString")
                current = JsBuiltin("function", ("array." if own else "") + part)
            elif part == "__proto__":
                current = JsBuiltin("prototype", "Array")
            else:
                return _NOT_FOUND
        elif isinstance(current, Mapping):
            if part in current:
                current = current[part]
            elif part in _OBJECT_FUNCTIONS:
                current = JsBuiltin("function", part)
            elif part == "__proto__":
                current = JsBuiltin("prototype", "Object")
            else:
                return _NOT_FOUND
        elif isinstance(current, JsBuiltin) and current.kind == "prototype" and current.name == "Object":
            if part in _OBJECT_FUNCTIONS:
                current = JsBuiltin("function", part)
            else:
                return _NOT_FOUND
        else:
            return _NOT_FOUND  # a string, number, boolean, function or null: typeof is not 'object'
        if current is _NOT_FOUND:
            return current
    return current


_FLOAT = re.compile(r"^[\s\ufeff\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*"
                    r"([-+]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?))", re.ASCII)


def _number(value: Any) -> float | None:
    """AgentV's toNumber: a number, or `parseFloat` of a string (its leading number, Infinity too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        found = _FLOAT.match(value)
        return float(found.group(1).replace("Infinity", "inf")) if found else None
    return None


def parse_date(text: str, formats: Sequence[str]) -> int | None:
    """AgentV's parseDate: the time value (milliseconds, UTC) of `text`, or None. JavaScript's
    `new Date(text)` first (bun's, js_date.parse); else `15-JAN-2025` with a month name; else
    `MM/DD/YYYY` or `DD/MM/YYYY` (`/` or `-`) in the order `formats` gives, guessed when it gives both or
    neither: day first when the first number is over 12 and the second is not, else month first. The
    last two build `new Date(year, month, day)`, so days and months past their ends roll over."""
    if not text:
        return None
    trimmed = js_trim(text)
    parsed = js_date.parse(trimmed)
    if parsed is not None:
        return parsed
    m = _DAY_MON_YEAR.fullmatch(trimmed)
    if m and m.group(2).lower() in _MONTHS:
        return js_date.make_date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
    m = _NUMERIC_DATE.fullmatch(trimmed)
    if not m:
        return None
    first, second, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    us = any("MM/DD" in f or "MM-DD" in f for f in formats)
    eu = any("DD/MM" in f or "DD-MM" in f for f in formats)
    if us and not eu:
        return js_date.make_date(year, first - 1, second) if 1 <= first <= 12 and 1 <= second <= 31 else None
    if eu and not us:
        return js_date.make_date(year, second - 1, first) if 1 <= second <= 12 and 1 <= first <= 31 else None
    if first > 12 and second <= 12:
        return js_date.make_date(year, second - 1, first)
    if second > 12 and first <= 12:
        return js_date.make_date(year, first - 1, second)
    if first <= 12 and second <= 31:
        return js_date.make_date(year, first - 1, second)
    return None


def _js_type(value: Any) -> str:
    if isinstance(value, JsBuiltin):
        return "function" if value.kind == "function" else "object"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"  # null, objects and arrays, as JavaScript's typeof says


def _field(field: Mapping[str, Any], answer: Any, expected: dict[str, Any]) -> tuple[float, float, bool, str]:
    """(score, weight, hit, message) of one field."""
    path = str(field.get("path") or "")
    match = field.get("match")
    weight_raw = field.get("weight", 1.0)
    weight = float(weight_raw) if isinstance(weight_raw, int | float) and not isinstance(weight_raw, bool) else 1.0
    required = field.get("required", True) is not False
    want = resolve_path(expected, path)
    if want is _NOT_FOUND:
        return 1.0, weight, True, f"{path}: no expected value"
    got = resolve_path(answer, path)
    if got is _NOT_FOUND:
        if required:
            return 0.0, weight, False, f"{path} (required, missing)"
        return 1.0, 0.0, True, f"{path}: optional field missing"
    if match == "exact":
        if deep_equal(got, want):
            return 1.0, weight, True, path
        if _js_type(got) != _js_type(want):
            return 0.0, weight, False, f"{path} (type mismatch: got {_js_type(got)}, expected {_js_type(want)})"
        return 0.0, weight, False, f"{path} (value mismatch)"
    if match == "numeric_tolerance":
        tol_raw = field.get("tolerance", 0)
        tolerance = float(tol_raw) if isinstance(tol_raw, int | float) and not isinstance(tol_raw, bool) else 0.0
        a, b = _number(got), _number(want)
        if a is None or b is None:
            return 0.0, weight, False, f"{path} (non-numeric value)"
        if not (math.isfinite(a) and math.isfinite(b)):
            return 0.0, weight, False, f"{path} (invalid numeric value)"
        diff = abs(a - b)
        measured = diff / abs(b) if field.get("relative") is True and b != 0 else diff
        if measured <= tolerance:
            return 1.0, weight, True, f"{path} (within tolerance: diff={to_fixed(diff, 2)})"
        return 0.0, weight, False, f"{path} (outside tolerance: diff={to_fixed(diff, 2)}, tolerance={js_string(tolerance)})"
    if match == "date":
        raw_formats = field.get("formats")  # AgentV's loader keeps a list's strings
        formats = [f for f in raw_formats if isinstance(f, str)] if isinstance(raw_formats, list) else _DEFAULT_DATE_FORMATS
        got_date, want_date = parse_date(js_string(got), formats), parse_date(js_string(want), formats)
        if got_date is None:
            return 0.0, weight, False, f"{path} (unparseable candidate date)"
        if want_date is None:
            return 0.0, weight, False, f"{path} (unparseable expected date)"
        if js_date.ymd(got_date) == js_date.ymd(want_date):  # the same calendar day (UTC)
            return 1.0, weight, True, path
        return 0.0, weight, False, (f"{path} (date mismatch: got {js_date.iso_date(got_date)}, "
                                    f"expected {js_date.iso_date(want_date)})")
    return 0.0, weight, False, f'{path}: unknown match type "{match}"'


def js_string(value: Any) -> str:
    """JavaScript's `String(value)` of a resolved value: a JSON value as `weval/js_values.js_string` writes
    it (arrays joined with `,`, objects `[object Object]`, numbers as JavaScript), or a builtin the path
    reached (`length` of an array: a function, `constructor`…)."""
    if isinstance(value, JsBuiltin):
        if value.kind == "function":
            return f"function {value.name.removeprefix('array.')}() {{\n    [native code]\n}}"
        return "" if value.name == "Array" else "[object Object]"  # Array.prototype is an empty array
    return _js_string(value)


def score_fields(config: Mapping[str, Any], answer_text: str, expected_messages: Any) -> FieldsResult:
    """Score a `field-accuracy` assertion. `expected_messages`: the test's expected (role, content) pairs."""
    # AgentV's loader drops a field without a path
    fields = [f for f in config.get("fields") or [] if isinstance(f, Mapping) and isinstance(f.get("path"), str)
              and f.get("path")]
    if not fields:  # AgentV drops the assertion; nothing was checked, which is never a pass
        return FieldsResult(0.0, (), (), not_scored="field-accuracy: no field has a path; nothing was checked")
    try:
        answer = parse_answer_json(answer_text)
    except ValueError:
        return FieldsResult(0.0, (), ("Failed to parse candidate answer as JSON",), "Candidate answer is not valid JSON")
    expected = expected_data(expected_messages or [])
    if expected is None:
        return FieldsResult(0.0, (), ("No expected data found in expected_output",),
                            "Could not extract expected data from expected_output")
    results = [_field(f, answer, expected) for f in fields]
    hits = tuple(message for _, _, hit, message in results if hit)
    misses = tuple(message for _, _, hit, message in results if not hit)
    unchecked = [str(f["path"]) for f in fields if resolve_path(expected, str(f["path"])) is _NOT_FOUND]
    if unchecked and not (misses and config.get("aggregation") == "all_or_nothing"):
        # AgentV scores such a field 1.0, a check not made, which is never a pass (unless a compared
        # field's miss decides the result whatever it is: all_or_nothing).
        return FieldsResult(0.0, (), (), not_scored=f"field-accuracy: no expected value for {', '.join(unchecked[:4])}"
                            f"{' …' if len(unchecked) > 4 else ''} in expected_output, so "
                            f"{'that field was' if len(unchecked) == 1 else 'those fields were'} not compared")
    if config.get("aggregation") == "all_or_nothing":
        score = 0.0 if misses else 1.0
    else:
        total = weighted = 0.0
        for _, w, _, _ in results:  # summed left to right, as AgentV's reduce
            total += w
        for s, w, _, _ in results:
            weighted += s * w
        score = (1.0 if not results else 0.0) if total == 0 else weighted / total
    # AgentV keeps 4 hits and 4 misses, and gives the verdict of the unclamped score
    return FieldsResult(min(1.0, max(0.0, score)), hits[:4], misses[:4], f"{len(hits)}/{len(results)} fields matched",
                        score)
