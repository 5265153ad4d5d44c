"""AgentV's `tool-trajectory` assertion: the tools a target called, against what the test expects.

Follows AgentV v2.19 (its evaluator and the tool-trajectory-simple example's recorded results), hit and
miss wording included:

- `any_order`: each tool in `minimums` called at least that often; score = share of tools met.
- `in_order`: the expected calls found in order, gaps allowed; a call whose name matches but whose
  arguments do not is a miss for that expected item and is consumed.
- `exact`: the same calls at the same positions; a different number of calls is reported as a miss
  ("Expected 3 tool calls, got 4") but, as in AgentV, the score is the share of expected positions met.
- `superset`: every expected call appears somewhere (each actual call matches one expected, greedily).
- `subset`: every actual call matches some expected item (items reusable); no calls is a subset.

`args`: `any` (or absent) accepts any arguments; otherwise `args_match` (the item's, else the
assertion's, else `exact`) decides: `exact` deep equality, `superset` (actual has every expected key,
extras allowed), `subset` (actual has no key beyond the expected ones), `ignore`, or a list of fields
(dot paths) compared one by one. `max_duration_ms` on an expected item of `in_order`/`exact` adds a
latency check, as AgentV counts it: a failed one when the item was not matched. Ours: a matched call
without a reported duration leaves the assertion not scored (AgentV skips that check and leaves it out
of the score, which lifts it on a check not made).

A trace is the calls of what the target answered: `None` means no answer at all ("No trace available
for evaluation", score 0), an empty tuple an answer without tool calls, scored as it is.

A call's arguments are compared as AgentV's JavaScript compares them: a call that gave none (NO_INPUT,
undefined there) matches no `args`; a `null`, a string, a list or a number is looked into as JavaScript
looks into it (`Object.keys("ab")` is `["0", "1"]`, a list has a `length`), and where AgentV's evaluator
throws on one (`Object.keys(null)` under `subset`, `Object.hasOwn(null, key)` under `superset`) the
whole assertion fails with its message, as AgentV reports a throw (`Evaluator '<name>' failed: …`):
TrajectoryResult.error, which `negate` leaves a failure (agentv_assertions.negate_score).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..providers.base import ToolCall
from ..providers.tool_calls import NO_INPUT
from ..weval.ids import js_number
from .agentv_aggregate import verdict

MODES = ("any_order", "in_order", "exact", "subset", "superset")


class TrajectoryResult:
    __slots__ = ("error", "hits", "misses", "not_scored", "score")

    def __init__(self, score: float, hits: list[str], misses: list[str], not_scored: str | None = None,
                 error: str | None = None) -> None:
        self.score = score
        self.hits = hits
        self.misses = misses
        self.not_scored = not_scored  # why the check could not be made (the score is then meaningless)
        self.error = error  # the TypeError AgentV's evaluator throws here (the score is then 0)

    @property
    def verdict(self) -> str:
        return verdict(self.score)


def deep_equal(a: Any, b: Any) -> bool:
    """JavaScript-style deep equality of JSON values: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)  # JavaScript's numbers are doubles: 2**64 and 2**64 + 1 are equal
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
        return False
    return bool(a == b) and type(a) is type(b)


class _JsTypeError(Exception):
    """What AgentV's JavaScript throws comparing arguments with a `null` (bun's message)."""


_MISSING = object()


def _index(key: str, size: int) -> int | None:
    """`key` as a JavaScript array index below `size` ("0", "12"; not "01", "-1", "1.0")."""
    if key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < size:
        return int(key)
    return None


def _units(text: str) -> list[str]:
    """A string's UTF-16 code units, as JavaScript indexes it (a lone surrogate each)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i:i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(data), 2)]


def _own(obj: Any, key: str, evaluating: str) -> Any:
    """`obj[key]` if JavaScript's `Object.hasOwn(obj, key)`, else _MISSING; null throws as in AgentV."""
    if obj is None:
        raise _JsTypeError(f"null is not an object (evaluating '{evaluating}')")
    if isinstance(obj, Mapping):
        return obj.get(key, _MISSING)
    if isinstance(obj, list | tuple | str):
        items = _units(obj) if isinstance(obj, str) else obj
        if key == "length":
            return len(items)
        at = _index(key, len(items))
        return _MISSING if at is None else items[at]
    return _MISSING  # a number or a boolean has no own property


def _own_keys(obj: Any) -> list[str]:
    """JavaScript's `Object.keys(obj)`; null throws as in AgentV."""
    if obj is None:
        raise _JsTypeError("null is not an object (evaluating 'Object.keys(actual)')")
    if isinstance(obj, Mapping):
        return [str(k) for k in obj]
    if isinstance(obj, list | tuple | str):
        return [str(i) for i in range(len(_units(obj) if isinstance(obj, str) else obj))]
    return []


def _get_path(obj: Any, path: str) -> Any:
    """AgentV's getNestedValue: each step into an object (a mapping or a list, not a string), else absent."""
    current = obj
    for part in path.split("."):
        if not isinstance(current, Mapping | list | tuple):
            return _MISSING
        current = _own(current, part, "")
        if current is _MISSING:
            return _MISSING
    return current


def _setting(item: Mapping[str, Any], snake: str, camel: str) -> Any:
    return item[snake] if snake in item else item.get(camel)


def args_match(expected: Any, actual: Any, mode: Any) -> bool:
    """AgentV's argsMatch. `actual` is the call's input: NO_INPUT when it gave none, None for a null (which
    `subset` and a `superset` with keys throw on: _JsTypeError)."""
    if expected is None or expected == "any":
        return True
    if mode == "ignore":
        return True
    if actual is NO_INPUT:
        return False
    if isinstance(mode, list | tuple):
        for name in mode:
            want = _get_path(expected, str(name))
            if want is _MISSING:
                continue  # a listed field the expected args do not give is not checked
            got = _get_path(actual, str(name))
            if got is _MISSING or not deep_equal(want, got):
                return False
        return True
    if not isinstance(expected, Mapping):  # the checker refuses other `args`
        return deep_equal(expected, actual)
    if mode == "superset":
        for k, v in expected.items():
            got = _own(actual, str(k), "Object.hasOwn(actual, key)")
            if got is _MISSING or not deep_equal(v, got):
                return False
        return True
    if mode == "subset":
        for k in _own_keys(actual):
            want = expected.get(k, _MISSING)
            if want is _MISSING or not deep_equal(_own(actual, k, ""), want):
                return False
        return True
    return deep_equal(expected, actual)


def _fmt_ms(value: float) -> str:
    """A number as JavaScript's template literals write it (1e-9 → `1e-9`, ∞ → `Infinity`)."""
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return js_number(value)


class _Latency:
    """The max_duration_ms checks of in_order / exact, as AgentV counts them: every expected item with
    one is a check (failed unless its matched call was fast enough)."""

    def __init__(self, expected: list[Mapping[str, Any]]) -> None:
        self.hits = 0
        self.counted = sum(1 for item in expected if _limit(item) is not None)
        self.unmeasured: list[str] = []

    def check(self, item: Mapping[str, Any], call: ToolCall, hits: list[str], misses: list[str]) -> None:
        limit = _limit(item)
        if limit is None:
            return
        if call.duration_ms is None:  # AgentV: "No duration data for <tool>; latency assertion skipped"
            self.unmeasured.append(call.tool)
            return
        if call.duration_ms <= limit:
            self.hits += 1
            hits.append(f"{call.tool} completed in {_fmt_ms(call.duration_ms)}ms (max: {_fmt_ms(limit)}ms)")
        else:
            misses.append(f"{call.tool} took {_fmt_ms(call.duration_ms)}ms (max: {_fmt_ms(limit)}ms)")

    def result(self, matched: int, expected: int, hits: list[str], misses: list[str]) -> TrajectoryResult:
        total = expected + self.counted
        if self.unmeasured:
            return TrajectoryResult(0.0, hits, misses, f"tool-trajectory: no duration reported for {', '.join(self.unmeasured)}; "
                                    "its max_duration_ms check could not be made")
        return TrajectoryResult((matched + self.hits) / total, hits, misses)


def _limit(item: Mapping[str, Any]) -> float | None:
    limit = _setting(item, "max_duration_ms", "maxDurationMs")
    return float(limit) if isinstance(limit, int | float) and not isinstance(limit, bool) else None


def _expected(config: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = config.get("expected")
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def _mode_of(item: Mapping[str, Any], config: Mapping[str, Any]) -> Any:
    # As AgentV's loader reads it: a list keeps its non-empty strings (none left: unset), a string must be
    # one of the modes; anything else is unset, and unset is the item's, then the assertion's, then exact.
    for where in (item, config):
        mode = _readable_mode(_setting(where, "args_match", "argsMatch"))
        if mode is not None:
            return mode
    return "exact"


def _readable_mode(mode: Any) -> Any:
    if isinstance(mode, list | tuple):
        names = [m for m in mode if isinstance(m, str) and m]
        return names or None
    return mode if mode in ("exact", "superset", "subset", "ignore") else None


def score_trajectory(config: Mapping[str, Any], calls: Sequence[ToolCall] | None) -> TrajectoryResult:
    """Score a `tool-trajectory` assertion (`config`: mode, minimums, expected, args_match)."""
    mode = config.get("mode")
    if mode not in MODES:
        return TrajectoryResult(0.0, [], [f"Unknown mode: {mode}. Supported modes: {', '.join(MODES)}"])
    if calls is None:
        return TrajectoryResult(0.0, [], ["No trace available for evaluation"])
    if mode == "any_order":
        return _any_order(config, calls)
    try:
        return _by_expected(config, mode, calls)
    except _JsTypeError as exc:
        return TrajectoryResult(0.0, [], [], error=str(exc))


def _by_expected(config: Mapping[str, Any], mode: str, calls: Sequence[ToolCall]) -> TrajectoryResult:
    expected = _expected(config)
    if mode == "subset":
        return _subset(config, expected, calls)
    if not expected:
        return TrajectoryResult(1.0, ["No tool sequence specified" if mode != "superset"
                                      else "No expected tools specified"], [])
    if mode == "in_order":
        return _in_order(config, expected, calls)
    if mode == "exact":
        return _exact(config, expected, calls)
    return _superset(config, expected, calls)


def _any_order(config: Mapping[str, Any], calls: Sequence[ToolCall]) -> TrajectoryResult:
    minimums = config.get("minimums")
    minimums = minimums if isinstance(minimums, Mapping) else {}
    if not minimums:
        return TrajectoryResult(1.0, ["No tool requirements specified"], [])
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.tool] = counts.get(call.tool, 0) + 1
    hits: list[str] = []
    misses: list[str] = []
    for tool, required in minimums.items():
        need = required if isinstance(required, int | float) and not isinstance(required, bool) else 0
        got = counts.get(str(tool), 0)
        line = f"{tool}: called {got} times (required >={_fmt_ms(need)})"
        (hits if got >= need else misses).append(line)
    return TrajectoryResult(len(hits) / len(minimums), hits, misses)


def _in_order(config: Mapping[str, Any], expected: list[Mapping[str, Any]],
              calls: Sequence[ToolCall]) -> TrajectoryResult:
    hits: list[str] = []
    misses: list[str] = []
    latency = _Latency(expected)
    found_count = 0
    at = 0
    for i, item in enumerate(expected):
        tool = str(item.get("tool"))
        mode = _mode_of(item, config)
        matched: ToolCall | None = None
        mismatched = False
        while at < len(calls):
            call = calls[at]
            if call.tool == tool:
                if args_match(item.get("args"), call.input, mode):
                    hits.append(f"Found {tool} at position {at}")
                    matched = call
                else:
                    misses.append(f"Expected {tool} at position {i}: tool found at {at} but args mismatch")
                    mismatched = True
                at += 1
                break
            at += 1
        if matched is not None:
            found_count += 1
            latency.check(item, matched, hits, misses)
        elif not mismatched:
            misses.append(f"Expected {tool} at position {i}, not found in remaining trace")
    return latency.result(found_count, len(expected), hits, misses)


def _exact(config: Mapping[str, Any], expected: list[Mapping[str, Any]],
           calls: Sequence[ToolCall]) -> TrajectoryResult:
    hits: list[str] = []
    misses: list[str] = []
    latency = _Latency(expected)
    if len(calls) != len(expected):
        misses.append(f"Expected {len(expected)} tool calls, got {len(calls)}")
    matched = 0
    for i, item in enumerate(expected):
        tool = str(item.get("tool"))
        if i >= len(calls):
            misses.append(f"Position {i}: expected {tool}, got nothing")
            continue
        call = calls[i]
        if call.tool != tool:
            misses.append(f"Position {i}: expected {tool}, got {call.tool}")
        elif not args_match(item.get("args"), call.input, _mode_of(item, config)):
            misses.append(f"Position {i}: {tool} args mismatch")
        else:
            hits.append(f"Position {i}: {tool}")
            matched += 1
            latency.check(item, call, hits, misses)
    return latency.result(matched, len(expected), hits, misses)


def _superset(config: Mapping[str, Any], expected: list[Mapping[str, Any]],
              calls: Sequence[ToolCall]) -> TrajectoryResult:
    hits: list[str] = []
    misses: list[str] = []
    used: set[int] = set()
    for item in expected:
        tool = str(item.get("tool"))
        mode = _mode_of(item, config)
        j = next((j for j, call in enumerate(calls) if j not in used and call.tool == tool
                  and args_match(item.get("args"), call.input, mode)), None)
        if j is None:
            misses.append(f"Expected {tool} not found in actual trajectory")
        else:
            used.add(j)
            hits.append(f"Found {tool} at position {j}")
    return TrajectoryResult(len(hits) / len(expected), hits, misses)


def _subset(config: Mapping[str, Any], expected: list[Mapping[str, Any]],
            calls: Sequence[ToolCall]) -> TrajectoryResult:
    if not calls:
        return TrajectoryResult(1.0, ["No tool calls and no expected tools" if not expected
                                      else "No actual tool calls (trivially a subset)"], [])
    if not expected:
        return TrajectoryResult(0.0, [], [f"{len(calls)} unexpected tool call(s) with empty allowed list"])
    hits: list[str] = []
    misses: list[str] = []
    for i, call in enumerate(calls):
        allowed = any(call.tool == str(item.get("tool"))
                      and args_match(item.get("args"), call.input, _mode_of(item, config)) for item in expected)
        (hits if allowed else misses).append(
            f"Position {i}: {call.tool} is {'in' if allowed else 'not in'} allowed set")
    score = len(hits) / len(calls)
    return TrajectoryResult(score if math.isfinite(score) else 0.0, hits, misses)
