"""AgentV's `field-accuracy` assertion: fields of a JSON answer against the test's expected output.

Follows AgentV v2.19 (wording included). The answer is read as JSON: the whole text, else the content
of a ```json fenced block, else the outermost `{…}` in it. The expected data is the content of the last
expected assistant message that has one (an object, or text holding JSON).

Each field `{path, match, weight = 1, required = true, tolerance, relative, formats}`:
- `path`: dot path with array indexes (`invoice.items[0].sku`).
- No expected value at that path: counts as matched ("no expected value").
- Missing in the answer: a miss when `required`, else left out (weight 0).
- `exact`: deep equality (JSON semantics); `numeric_tolerance`: |got − want| ≤ tolerance, or relative
  to |want| with `relative: true` (numbers and numeric strings); `date`: the same calendar day, dates
  read as ISO 8601, `15-JAN-2025`, `January 15, 2025`, or day/month numbers in the order `formats`
  gives (`MM/DD/YYYY`, `DD/MM/YYYY`, with `/` or `-`); ambiguous without formats: month first unless
  the first number cannot be a month.
`aggregation`: `weighted_average` (default; no weight at all → 0) or `all_or_nothing`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, NamedTuple

from ..jsonio import loads
from .tagged_text import fenced_blocks
from .tool_trajectory import deep_equal

_MONTHS = {name: i + 1 for i, names in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december"))) for name in names}
_NUMERIC_DATE = re.compile(r"^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$")
_DAY_MON_YEAR = re.compile(r"^(\d{1,2})[- ]([A-Za-z]{3,9})[- ,]+(\d{4})$")
_MON_DAY_YEAR = re.compile(r"^([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{4})$")


class FieldsResult(NamedTuple):
    score: float
    hits: tuple[str, ...]
    misses: tuple[str, ...]
    reasoning: str | None = None
    unclamped: float | None = None  # the score the verdict comes from (AgentV), when it differs


_NOT_FOUND = object()


def parse_answer_json(text: str) -> Any:
    """The JSON value of an answer (whole, fenced, or the outermost {...}); raises ValueError."""
    if not isinstance(text, str):
        raise ValueError("no text")
    stripped = text.strip()
    candidates = [stripped]
    candidates += [body.strip() for body in fenced_blocks(text)]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start:end + 1])
    for candidate in candidates:
        try:
            return loads(candidate)  # a model's answer: nested too deeply is a ValueError too (jsonio)
        except ValueError:
            continue
    raise ValueError("not JSON")


def expected_data(messages: Sequence[tuple[str, Any]]) -> dict[str, Any] | None:
    """From (role, content) expected messages: the last assistant content that is (or holds) an object."""
    for role, content in reversed(list(messages)):
        if role != "assistant" or not content:
            continue
        if isinstance(content, Mapping):
            return dict(content)
        if isinstance(content, str):
            try:
                value = parse_answer_json(content)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def resolve_path(obj: Any, path: str) -> Any:
    current = obj
    for part in (p for p in re.split(r"\.|\[|\]", path) if p):
        if isinstance(current, list) and part.isdigit():
            index = int(part)
            if index >= len(current):
                return _NOT_FOUND
            current = current[index]
        elif isinstance(current, Mapping) and part in current:
            current = current[part]
        else:
            return _NOT_FOUND
    return current


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        found = re.match(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", value)  # parseFloat: a leading number
        return float(found.group(0)) if found else None
    return None


def parse_date(text: str, formats: Sequence[str] | None) -> date | None:
    value = text.strip()
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    m = _DAY_MON_YEAR.match(value)
    if m and m.group(2).lower() in _MONTHS:
        return _date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
    m = _MON_DAY_YEAR.match(value)
    if m and m.group(1).lower() in _MONTHS:
        return _date(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))
    m = _NUMERIC_DATE.match(value)
    if not m:
        return None
    first, second, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    given = list(formats or [])
    us = any("MM/DD" in f or "MM-DD" in f for f in given)
    eu = any("DD/MM" in f or "DD-MM" in f for f in given)
    if us and not eu:
        return _date(year, first, second)
    if eu and not us:
        return _date(year, second, first)
    if first > 12 >= second:
        return _date(year, second, first)
    return _date(year, first, second)


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _js_type(value: Any) -> str:
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
            return 1.0, weight, True, f"{path} (within tolerance: diff={diff:.2f})"
        return 0.0, weight, False, f"{path} (outside tolerance: diff={diff:.2f}, tolerance={_num(tolerance)})"
    if match == "date":
        formats = field.get("formats")
        formats = [str(f) for f in formats] if isinstance(formats, list) else None
        got_date, want_date = parse_date(_text(got), formats), parse_date(_text(want), formats)
        if got_date is None:
            return 0.0, weight, False, f"{path} (unparseable candidate date)"
        if want_date is None:
            return 0.0, weight, False, f"{path} (unparseable expected date)"
        if got_date == want_date:
            return 1.0, weight, True, path
        return 0.0, weight, False, f"{path} (date mismatch: got {got_date.isoformat()}, expected {want_date.isoformat()})"
    return 0.0, weight, False, f'{path}: unknown match type "{match}"'


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def score_fields(config: Mapping[str, Any], answer_text: str, expected_messages: Any) -> FieldsResult:
    """Score a `field-accuracy` assertion. `expected_messages`: the test's expected (role, content) pairs."""
    fields = [f for f in config.get("fields") or [] if isinstance(f, Mapping)]
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
