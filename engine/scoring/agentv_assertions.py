"""AgentV's deterministic assertion types (`contains`, `regex`, `latency`, …), scored without a judge.

Semantics, hit/miss wording and defaults follow AgentV v2.19 (packages/core/src/evaluation/evaluators):
string checks are binary; equals/starts-with/ends-with trim both sides; `is-json` accepts any JSON
value (unlike Weval's `$is_json`); metric checks fail when the metric was not reported. `negate`
flips score (1 − score) and pass ↔ fail, leaving borderline alone. Judge-based and trace-based types
are the runner's: evaluate_assertion returns NotSupported naming the type. Which scorer scores a type is
its registry entry's `scorer` (registry/agentv_assertions.py, stage FUNCTION or TRACE): the functions
at the end of this module, `(spec, answer, RunMetrics, expected) -> AssertionScore | NotScored`.

Ours: a malformed assertion is an AssertionScore with `error` set (score 0, fail) rather than an
exception, and `negate` never turns an error into a pass. A check that could not be made (a `regex`
whose match ran past its deadline or beyond QuickJS's limits) is NotScored with the reason: never a score, never a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..providers.base import ToolCall
from ..registry.agentv_assertions import ASSERTION_TYPES
from ..registry.stages import resolve_scorer
from ..weval.ids import js_number
from .agentv_aggregate import negate_result, negated_reasoning, verdict
from .field_accuracy import score_fields
from .js_regex import JsRegexError, JsRegexNotEvaluated, js_regex_test
from .js_text import NestedTooDeeply, is_js_number, js_json_parse, js_trim, to_fixed
from .tool_trajectory import score_trajectory

# AgentV's default "exploration" tools for execution-metrics' target_exploration_ratio.
DEFAULT_EXPLORATION_TOOLS = ("read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch",
                             "WebFetch")


def normalize_type(name: str) -> str:
    """`code_judge` → `code-judge`: AgentV treats snake_case and kebab-case spellings as one type."""
    return name.replace("_", "-")


@dataclass(frozen=True)
class TokenUsage:
    input: int | None = None
    output: int | None = None
    total: int | None = None  # when None: input + output
    cached: int | None = None

    def total_tokens(self) -> int | None:
        if self.total is not None:
            return self.total
        if self.input is None or self.output is None:
            return None
        return self.input + self.output + (self.cached or 0)


@dataclass(frozen=True)
class RunMetrics:
    """What the target reported about one run; None = not reported (checks on it fail)."""

    duration_ms: float | None = None
    cost_usd: float | None = None
    token_usage: TokenUsage | Mapping[str, int] | None = None
    tool_calls: int | None = None
    llm_calls: int | None = None
    tool_names: Sequence[str] | None = None  # one entry per tool call, for the exploration ratio
    # The target's tool calls, in order (tool-trajectory): () an answer without tool calls, None no answer.
    trace: Sequence[ToolCall] | None = None

    def usage(self) -> TokenUsage | None:
        u = self.token_usage
        if u is None or isinstance(u, TokenUsage):
            return u
        return TokenUsage(u.get("input"), u.get("output"), u.get("total"), u.get("cached"))


@dataclass(frozen=True)
class AssertionScore:
    score: float
    verdict: str  # "pass" | "borderline" | "fail"
    hits: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    reasoning: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class NotSupported:
    """A type this module does not score (its registry entry's stage is a judge, a script, a group): the
    runner scores it in that stage."""

    type: str
    reason: str = field(default="")


@dataclass(frozen=True)
class NotScored:
    """A check that could not be made on this answer (a regex match past its deadline): the runner lists
    it as not scored with `reason`, so it never lifts (nor sinks) a score or verdict."""

    reason: str


def _binary(passed: bool, hit: str, miss: str, reasoning: str | None = None) -> AssertionScore:
    """A pass/fail check; its reasoning is its hit or miss unless given (AgentV's builtin evaluators)."""
    return AssertionScore(1.0 if passed else 0.0, "pass" if passed else "fail",
                          (hit,) if passed else (), () if passed else (miss,),
                          reasoning if reasoning is not None else (hit if passed else miss))


def _error(message: str) -> AssertionScore:
    return AssertionScore(0.0, "fail", (), (message,), message, message)


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


# ---------------------------------------------------------------------------------------------
# String assertions


def _need_string(kind: str, spec: Mapping[str, Any]) -> str | AssertionScore:
    value = spec.get("value")
    if not isinstance(value, str):
        return _error(f"Assertion type '{kind}' requires a 'value' field (string).")
    return value


def _need_strings(kind: str, spec: Mapping[str, Any]) -> list[str] | AssertionScore:
    value = spec.get("value")
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return _error(f"Assertion type '{kind}' requires a 'value' field (array of strings).")
    return value


def _contains(kind: str, spec: Mapping[str, Any], output: str) -> AssertionScore:
    value = _need_string(kind, spec)
    if isinstance(value, AssertionScore):
        return value
    if kind == "contains":
        return _binary(value in output, f'Output contains "{value}"', f'Output does not contain "{value}"')
    passed = value.lower() in output.lower()
    return _binary(passed, f'Output contains "{value}" (case-insensitive)',
                   f'Output does not contain "{value}" (case-insensitive)')


def _trimmed(kind: str, spec: Mapping[str, Any], output: str) -> AssertionScore:
    value = _need_string(kind, spec)
    if isinstance(value, AssertionScore):
        return value
    out, want = js_trim(output), js_trim(value)
    if kind == "equals":
        return _binary(out == want, f'Output equals "{value}"', f'Output does not equal "{value}"')
    if kind == "starts-with":
        return _binary(out.startswith(want), f'Output starts with "{value}"', f'Output does not start with "{value}"')
    return _binary(out.endswith(want), f'Output ends with "{value}"', f'Output does not end with "{value}"')


def _any_all(kind: str, spec: Mapping[str, Any], output: str) -> AssertionScore:
    values = _need_strings(kind, spec)
    if isinstance(values, AssertionScore):
        return values
    insensitive = kind.startswith("i")
    suffix = " (case-insensitive)" if insensitive else ""
    text = output.lower() if insensitive else output
    present = [v for v in values if (v.lower() if insensitive else v) in text]
    if kind.endswith("-any"):
        return _binary(bool(present), f'Output contains "{present[0]}"{suffix}' if present else "",
                       f"Output does not contain any of: {_quoted(values)}{suffix}")
    missing = [v for v in values if v not in present]
    label = "Output missing (case-insensitive)" if insensitive else "Output missing"
    return _binary(not missing, f"Output contains all {len(values)} expected strings{suffix}",
                   f"{label}: {_quoted(missing)}")


def _regex(spec: Mapping[str, Any], output: str) -> AssertionScore | NotScored:
    pattern = _need_string("regex", spec)
    if isinstance(pattern, AssertionScore):
        return pattern
    flags = spec.get("flags") or ""
    if not isinstance(flags, str):
        return _error("Assertion type 'regex' requires 'flags' to be a string (e.g. \"i\").")
    try:
        passed = js_regex_test(pattern, output, flags, dialect="agentv")
    except JsRegexNotEvaluated as exc:
        return NotScored(f"regex /{pattern}/{flags}: {exc.message}")  # the answer was not checked
    except JsRegexError as exc:
        # As the reference's evaluator reports a throw: "Evaluator '<name>' failed: <message>" (its
        # unnamed regex assertions are named `regex-<first 30 characters>`).
        name = spec.get("name") if isinstance(spec.get("name"), str) else f"regex-{pattern[:30]}"
        return AssertionScore(0.0, "fail", (), (f"Evaluator '{name}' failed: {exc.message}",), exc.message,
                              exc.message)
    shown = f"/{pattern}/{flags}" + (f" (flags: {flags})" if flags else "")
    return _binary(passed, f"Output matches pattern {shown}", f"Output does not match pattern {shown}",
                   f"Output {'matches' if passed else 'does not match'} pattern /{pattern}/{flags}")


def _is_json(output: str) -> AssertionScore | NotScored:
    try:
        js_json_parse(output)
        passed = True
    except NestedTooDeeply as exc:  # JavaScript would parse it; evalspec cannot tell: not checked
        return NotScored(f"is-json: {exc}")
    except ValueError:
        passed = False
    return _binary(passed, "Output is valid JSON", "Output is not valid JSON")


# ---------------------------------------------------------------------------------------------
# Metric assertions


def _limit(spec: Mapping[str, Any], *names: str) -> float | AssertionScore | None:
    for name in names:
        if spec.get(name) is not None:
            value = spec[name]
            if not is_js_number(value) or math.isnan(value):
                return _error(f"'{name}' must be a number.")
            return float(value)
    return None


def _fmt(n: float) -> str:
    """A number as JavaScript's template literals write it."""
    return js_number(n)


def _latency(spec: Mapping[str, Any], metrics: RunMetrics) -> AssertionScore:
    limit = _limit(spec, "max_ms", "threshold")
    if isinstance(limit, AssertionScore):
        return limit
    if limit is None:
        return _error("Assertion type 'latency' requires 'max_ms' (milliseconds).")
    duration = metrics.duration_ms
    if duration is None:
        return AssertionScore(0.0, "fail", (), ("No duration data available in trace",),
                              "Execution duration not reported by provider")
    return _binary(duration <= limit, f"Duration {_fmt(duration)}ms <= {_fmt(limit)}ms threshold",
                   f"Duration {_fmt(duration)}ms > {_fmt(limit)}ms threshold",
                   f"Execution took {_fmt(duration)}ms (threshold: {_fmt(limit)}ms)")


def _cost(spec: Mapping[str, Any], metrics: RunMetrics) -> AssertionScore:
    limit = _limit(spec, "max_usd", "budget")
    if isinstance(limit, AssertionScore):
        return limit
    if limit is None:
        return _error("Assertion type 'cost' requires 'max_usd' (US dollars).")
    cost = metrics.cost_usd
    if cost is None:
        return AssertionScore(0.0, "fail", (), ("No cost data available in trace",),
                              "Execution cost not reported by provider")
    c, b = to_fixed(cost, 4), to_fixed(limit, 4)
    return _binary(cost <= limit, f"Cost ${c} <= ${b} budget", f"Cost ${c} > ${b} budget",
                   f"Execution cost ${c} (budget: ${b})")


def _token_usage(spec: Mapping[str, Any], metrics: RunMetrics) -> AssertionScore:
    # AgentV's loader reads `max_total ?? maxTotal` (likewise input, output)
    spec = {**{_TOKEN_KEYS[k]: v for k, v in spec.items() if k in _TOKEN_KEYS},
            **{k: v for k, v in spec.items() if k not in _TOKEN_KEYS}}
    limits = {}
    for key in ("max_input", "max_output", "max_total"):
        limit = _limit(spec, key)
        if isinstance(limit, AssertionScore):
            return limit
        if limit is not None:
            limits[key] = limit
    if not limits:
        return _error("Assertion type 'token-usage' requires at least one of 'max_total', 'max_input', 'max_output'.")
    usage = metrics.usage()
    if usage is None:
        return AssertionScore(0.0, "fail", (), ("No token usage data available in trace",),
                              "Token usage not reported by provider")
    actual = {"max_input": ("Input", usage.input), "max_output": ("Output", usage.output),
              "max_total": ("Total", usage.total_tokens())}
    hits, misses = [], []
    for key, limit in limits.items():
        label, value = actual[key]
        if value is None:
            misses.append(f"{label} tokens not reported")
        elif value <= limit:
            hits.append(f"{label} tokens {value} <= {_fmt(limit)}")
        else:
            misses.append(f"{label} tokens {value} > {_fmt(limit)}")
    passed = not misses
    return AssertionScore(1.0 if passed else 0.0, "pass" if passed else "fail", tuple(hits), tuple(misses),
                          f"token-usage input={usage.input}, output={usage.output}, cached={usage.cached or 0}, "
                          f"total={usage.total_tokens()}")


_TOKEN_KEYS = {"maxTotal": "max_total", "maxInput": "max_input", "maxOutput": "max_output"}  # snake ← camel

_METRIC_KEYS = {  # snake_case ← camelCase
    "maxToolCalls": "max_tool_calls", "maxLlmCalls": "max_llm_calls", "maxTokens": "max_tokens",
    "maxCostUsd": "max_cost_usd", "maxDurationMs": "max_duration_ms",
    "targetExplorationRatio": "target_exploration_ratio", "explorationTolerance": "exploration_tolerance",
}


def exploration_ratio(tool_names: Sequence[str] | None,
                      exploration_tools: Sequence[str] = DEFAULT_EXPLORATION_TOOLS) -> float | None:
    """Share of tool calls that only explore (read, grep, search, …); None when there were no calls."""
    if not tool_names:
        return None
    explore = set(exploration_tools)
    return sum(1 for name in tool_names if name in explore) / len(tool_names)


def _execution_metrics(spec: Mapping[str, Any], metrics: RunMetrics) -> AssertionScore:
    config = {_METRIC_KEYS.get(k, k): v for k, v in spec.items()}
    checks = ("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms",
              "target_exploration_ratio")
    limits: dict[str, float] = {}
    for key in (*checks, "exploration_tolerance"):
        limit = _limit(config, key)
        if isinstance(limit, AssertionScore):
            return limit
        if limit is not None:
            limits[key] = limit
    if not any(key in limits for key in checks):
        return _error("Assertion type 'execution-metrics' requires at least one of " + ", ".join(checks) + ".")
    if metrics.tool_calls is None and any(k in limits for k in ("max_tool_calls", "max_llm_calls",
                                                                  "target_exploration_ratio")):
        return AssertionScore(0.0, "fail", (), ("No trace summary available",),
                              "Execution metrics not available - no trace summary provided")
    hits: list[str] = []
    misses: list[str] = []
    facts: dict[str, str] = {}

    def check(label: str, key: str, value: float, limit: float, shown: str, cap: str) -> None:
        facts[key] = shown
        if value <= limit:
            hits.append(f"{label} {shown} <= {cap} max")
        else:
            misses.append(f"{label} {shown} > {cap} max")

    if "max_tool_calls" in limits and metrics.tool_calls is not None:
        check("Tool calls", "tool_calls", metrics.tool_calls, limits["max_tool_calls"], _fmt(metrics.tool_calls),
              _fmt(limits["max_tool_calls"]))
    if "max_llm_calls" in limits:
        if metrics.llm_calls is None:
            misses.append("LLM call count data not available")
        else:
            check("LLM calls", "llm_calls", metrics.llm_calls, limits["max_llm_calls"], _fmt(metrics.llm_calls),
                  _fmt(limits["max_llm_calls"]))
    if "max_tokens" in limits:
        usage = metrics.usage()
        if usage is None or usage.input is None or usage.output is None:
            misses.append("Token usage data not available")
        else:
            tokens = usage.input + usage.output
            check("Total tokens", "tokens", tokens, limits["max_tokens"], _fmt(tokens), _fmt(limits["max_tokens"]))
    if "max_cost_usd" in limits:
        if metrics.cost_usd is None:
            misses.append("Cost data not available")
        else:
            cost, cap = metrics.cost_usd, limits["max_cost_usd"]
            facts["cost"] = f"${to_fixed(cost, 4)}"
            (hits if cost <= cap else misses).append(
                f"Cost ${to_fixed(cost, 4)} {'<=' if cost <= cap else '>'} ${to_fixed(cap, 4)} max")
    if "max_duration_ms" in limits:
        if metrics.duration_ms is None:
            misses.append("Duration data not available")
        else:
            check("Duration", "duration", metrics.duration_ms, limits["max_duration_ms"],
                  f"{_fmt(metrics.duration_ms)}ms", f"{_fmt(limits['max_duration_ms'])}ms")
    if "target_exploration_ratio" in limits:
        target = limits["target_exploration_ratio"]
        tolerance = limits.get("exploration_tolerance", 0.2)
        ratio = exploration_ratio(metrics.tool_names)
        if ratio is None:
            misses.append("Exploration ratio not available (no tool calls)")
        else:
            diff = abs(ratio - target)
            facts["exploration_ratio"] = to_fixed(ratio, 2)
            if diff <= tolerance:
                hits.append(f"Exploration ratio {to_fixed(ratio, 2)} within tolerance of target {_fmt(target)}")
            else:
                misses.append(f"Exploration ratio {to_fixed(ratio, 2)} outside tolerance of target {_fmt(target)} "
                              f"(diff: {to_fixed(diff, 2)}, tolerance: {_fmt(tolerance)})")
    total = len(hits) + len(misses)
    score = len(hits) / total if total else 0.0
    order = ("tool_calls", "llm_calls", "tokens", "cost", "duration", "exploration_ratio")
    parts = [f"{k}={facts[k]}" for k in order if k in facts]
    reasoning = "execution-metrics " + ", ".join(parts) if parts else "No metrics evaluated"
    return AssertionScore(score, verdict(score), tuple(hits), tuple(misses), reasoning)


# ---------------------------------------------------------------------------------------------
# Entry point


def negate_score(result: AssertionScore | NotScored) -> AssertionScore | NotScored:
    """`negate: true`: score → 1 − score, pass ↔ fail, borderline stays; hits and misses swap. An error
    stays an error and a check not made stays not scored."""
    if isinstance(result, NotScored) or result.error is not None:
        return result
    score, negated = negate_result(result.score, result.verdict)
    return AssertionScore(score, negated, result.misses, result.hits, negated_reasoning(result.reasoning, result.score))


def _flatten(spec: Any) -> Mapping[str, Any]:
    # Also accept the checker's normalized Assertion (type, negate, config) as well as a plain mapping.
    if isinstance(spec, Mapping):
        return spec
    return {**(getattr(spec, "config", None) or {}), "type": getattr(spec, "type", None),
            "negate": getattr(spec, "negate", False), "name": getattr(spec, "name", None)}


def evaluate_assertion(spec: Any, output: str, metrics: RunMetrics | None = None, *,
                       expected: Any = None) -> AssertionScore | NotSupported | NotScored:
    """Score one assertion against the target's answer and run metrics.

    `spec` is the assertion as written (`{type, value, flags, max_ms, …, negate}`) or the checker's
    normalized Assertion. Weight and `required` are the aggregator's (agentv_aggregate.aggregate_test).
    `expected`: the test's expected messages as (role, content) pairs, for field-accuracy.
    NotScored: the check could not be made on this answer (see NotScored).
    """
    spec = _flatten(spec)
    raw_type = spec.get("type")
    if not isinstance(raw_type, str) or not raw_type.strip():
        return _error("An assertion needs a 'type'.")
    kind = normalize_type(raw_type)
    entry = ASSERTION_TYPES.get(kind)
    if entry is None or not entry.stage.deterministic or entry.scorer is None:
        reason = ("scored by the runner (it needs a judge, a script or a trace)" if entry is not None
                  else f"unknown assertion type '{raw_type}' (a custom assertion, resolved by the runner)")
        return NotSupported(kind, reason)
    scorer: Scorer = resolve_scorer(entry.scorer)
    result = scorer(spec, output if isinstance(output, str) else "", metrics or RunMetrics(), expected)
    return negate_score(result) if spec.get("negate") is True else result


# ---------------------------------------------------------------------------------------------
# The scorers the registry's entries name (`scorer="evalspec.scoring.agentv_assertions:<snake_name>"`)

Scorer = Callable[[Mapping[str, Any], str, "RunMetrics", Any], "AssertionScore | NotScored"]


def _on_answer(check: Callable[[str, Mapping[str, Any], str], AssertionScore], kind: str) -> Scorer:
    def scorer(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any) -> AssertionScore:
        return check(kind, spec, output)

    return scorer


contains = _on_answer(_contains, "contains")
icontains = _on_answer(_contains, "icontains")
equals = _on_answer(_trimmed, "equals")
starts_with = _on_answer(_trimmed, "starts-with")
ends_with = _on_answer(_trimmed, "ends-with")
contains_any = _on_answer(_any_all, "contains-any")
contains_all = _on_answer(_any_all, "contains-all")
icontains_any = _on_answer(_any_all, "icontains-any")
icontains_all = _on_answer(_any_all, "icontains-all")


def regex(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any) -> AssertionScore | NotScored:
    return _regex(spec, output)


def is_json(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any) -> AssertionScore | NotScored:
    return _is_json(output)


def latency(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any) -> AssertionScore:
    return _latency(spec, metrics)


def cost(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any) -> AssertionScore:
    return _cost(spec, metrics)


def token_usage(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any) -> AssertionScore:
    return _token_usage(spec, metrics)


def execution_metrics(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any) -> AssertionScore:
    return _execution_metrics(spec, metrics)


def tool_trajectory(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any
                    ) -> AssertionScore | NotScored:
    got = score_trajectory(spec, metrics.trace)
    if got.error is not None:  # AgentV's evaluator threw: reported as a throw is (see _regex)
        name = spec.get("name") if isinstance(spec.get("name"), str) else "tool-trajectory"
        return AssertionScore(0.0, "fail", (), (f"Evaluator '{name}' failed: {got.error}",), got.error, got.error)
    return NotScored(got.not_scored) if got.not_scored is not None else AssertionScore(
        got.score, got.verdict, tuple(got.hits), tuple(got.misses))


def field_accuracy(spec: Mapping[str, Any], output: str, metrics: RunMetrics, expected: Any
                   ) -> AssertionScore | NotScored:
    fields = score_fields(spec, output, expected)
    return NotScored(fields.not_scored) if fields.not_scored is not None else AssertionScore(
        fields.score, verdict(fields.score if fields.unclamped is None else fields.unclamped),
        fields.hits, fields.misses, fields.reasoning)
