"""AgentV deterministic assertions: string checks, regex, JSON, metrics, negate, unsupported types."""

from __future__ import annotations

import pytest

from evalspec.scoring.agentv_assertions import (
    AssertionScore,
    NotSupported,
    RunMetrics,
    TokenUsage,
    evaluate_assertion,
    exploration_ratio,
    normalize_type,
)


def run(spec: dict, output: str = "", metrics: RunMetrics | None = None) -> AssertionScore:
    result = evaluate_assertion(spec, output, metrics)
    assert isinstance(result, AssertionScore)
    return result


# (assertion, output, expected score)
STRING_CASES = [
    ({"type": "contains", "value": "world"}, "Hello world", 1.0),
    ({"type": "contains", "value": "World"}, "Hello world", 0.0),
    ({"type": "icontains", "value": "WORLD"}, "Hello world", 1.0),
    ({"type": "starts-with", "value": "Hello"}, "  Hello world", 1.0),  # both sides trimmed
    ({"type": "starts-with", "value": " Hello "}, "Hello world", 1.0),
    ({"type": "starts_with", "value": "world"}, "Hello world", 0.0),
    ({"type": "ends-with", "value": "world"}, "Hello world\n", 1.0),
    ({"type": "ends-with", "value": "Hello"}, "Hello world", 0.0),
    ({"type": "equals", "value": "APPROVED"}, "\ufeff APPROVED \n", 1.0),  # JS trim removes U+FEFF
    ({"type": "equals", "value": "APPROVED"}, "approved", 0.0),
    ({"type": "contains-any", "value": ["x", "world"]}, "Hello world", 1.0),
    ({"type": "contains-any", "value": ["x", "y"]}, "Hello world", 0.0),
    ({"type": "contains-any", "value": []}, "Hello world", 0.0),
    ({"type": "contains-all", "value": ["Hello", "world"]}, "Hello world", 1.0),
    ({"type": "contains-all", "value": ["Hello", "there"]}, "Hello world", 0.0),  # binary, not graded
    ({"type": "contains-all", "value": []}, "anything", 1.0),
    ({"type": "icontains-any", "value": ["WORLD"]}, "Hello world", 1.0),
    ({"type": "icontains-all", "value": ["HELLO", "WORLD"]}, "Hello world", 1.0),
    ({"type": "icontains_all", "value": ["HELLO", "MARS"]}, "Hello world", 0.0),
    ({"type": "regex", "value": "REVIEW|ESCALAT"}, "Needs ESCALATION", 1.0),
    ({"type": "regex", "value": "^review"}, "REVIEW REQUIRED", 0.0),
    ({"type": "regex", "value": "^review", "flags": "i"}, "REVIEW REQUIRED", 1.0),
    ({"type": "regex", "value": "^required$", "flags": "im"}, "REVIEW\nREQUIRED", 1.0),
    ({"type": "regex", "value": "done$"}, "done\n", 0.0),  # JavaScript '$'
    ({"type": "regex", "value": "(?<=\\$)\\d+|€\\d+"}, "costs $12", 1.0),
    ({"type": "is-json", "value": None}, '{"a": 1}', 1.0),
    ({"type": "is_json"}, '"just a string"', 1.0),  # any JSON value, unlike Weval's $is_json
    ({"type": "is-json"}, "42", 1.0),
    ({"type": "is-json"}, "{a: 1}", 0.0),
    ({"type": "is-json"}, "NaN", 0.0),
]


@pytest.mark.parametrize(("spec", "output", "expected"), STRING_CASES)
def test_string_assertions(spec: dict, output: str, expected: float) -> None:
    result = run(spec, output)
    assert result.score == expected
    assert result.verdict == ("pass" if expected == 1.0 else "fail")
    assert bool(result.hits) == (expected == 1.0) and bool(result.misses) == (expected == 0.0)
    assert result.error is None


def test_hit_and_miss_wording_follows_agentv() -> None:
    assert run({"type": "contains", "value": "world"}, "Hello world").hits == ('Output contains "world"',)
    assert run({"type": "contains-all", "value": ["a", "q", "z"]}, "abc").misses == ('Output missing: "q", "z"',)
    assert run({"type": "icontains-any", "value": ["q"]}, "abc").misses == (
        'Output does not contain any of: "q" (case-insensitive)',)
    assert run({"type": "regex", "value": "x", "flags": "i"}, "y").misses == (
        "Output does not match pattern /x/i (flags: i)",)


ERRORS = [
    ({"type": "contains"}, "Assertion type 'contains' requires a 'value' field (string)."),
    ({"type": "equals", "value": 5}, "Assertion type 'equals' requires a 'value' field (string)."),
    ({"type": "contains-any", "value": "hello"}, "Assertion type 'contains-any' requires a 'value' field (array"),
    # As the reference's bun throws them (the checker's lint gives the advice).
    ({"type": "regex", "value": "a++"}, "Invalid regular expression: nothing to repeat"),
    ({"type": "regex", "value": "a", "flags": "q"}, "Invalid flags supplied to RegExp constructor."),
    ({"type": "regex", "value": "a", "flags": 1}, "Assertion type 'regex' requires 'flags' to be a string"),
    ({"type": "latency"}, "Assertion type 'latency' requires 'max_ms'"),
    ({"type": "latency", "max_ms": "fast"}, "'max_ms' must be a number."),
    ({"type": "cost"}, "Assertion type 'cost' requires 'max_usd'"),
    ({"type": "token-usage"}, "Assertion type 'token-usage' requires at least one of"),
    ({"type": "execution-metrics", "exploration_tolerance": 0.1}, "Assertion type 'execution-metrics' requires"),
    ({"type": ""}, "An assertion needs a 'type'."),
    ({}, "An assertion needs a 'type'."),
]


@pytest.mark.parametrize(("spec", "message"), ERRORS)
def test_malformed_assertions_fail_with_an_error(spec: dict, message: str) -> None:
    result = run(spec, "hello", RunMetrics(duration_ms=1, cost_usd=0.1))
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.error is not None and result.error.startswith(message), result.error


def test_negate_flips_score_and_verdict_but_not_errors() -> None:
    passed = run({"type": "contains", "value": "hello", "negate": True}, "hello")
    assert (passed.score, passed.verdict, passed.hits, passed.misses) == (0.0, "fail", (), ('Output contains "hello"',))
    failed = run({"type": "contains", "value": "bye", "negate": True}, "hello")
    assert (failed.score, failed.verdict) == (1.0, "pass")
    error = run({"type": "contains", "negate": True}, "hello")
    assert (error.score, error.verdict) == (0.0, "fail") and error.error


def test_negate_keeps_borderline() -> None:
    metrics = RunMetrics(tool_calls=1, llm_calls=1, duration_ms=10, cost_usd=5.0, token_usage=TokenUsage(1, 1))
    spec = {"type": "execution-metrics", "max_tool_calls": 2, "max_llm_calls": 2, "max_duration_ms": 100,
            "max_cost_usd": 1.0, "max_tokens": 5}
    plain = run(spec, "", metrics)
    assert (plain.score, plain.verdict) == (0.8, "pass")
    three_of_five = run({**spec, "max_cost_usd": 1.0, "max_tokens": 1}, "", metrics)
    assert (three_of_five.score, three_of_five.verdict) == (0.6, "borderline")
    negated = run({**spec, "max_tokens": 1, "negate": True}, "", metrics)
    assert negated.score == pytest.approx(0.4) and negated.verdict == "borderline"


METRICS = RunMetrics(duration_ms=1200, cost_usd=0.0042, token_usage={"input": 900, "output": 300},
                     tool_calls=4, llm_calls=2, tool_names=["Read", "Grep", "Edit", "Bash"])

METRIC_CASES = [
    ({"type": "latency", "max_ms": 2000}, 1.0),
    ({"type": "latency", "max_ms": 1200}, 1.0),
    ({"type": "latency", "threshold": 1000}, 0.0),
    ({"type": "cost", "max_usd": 0.01}, 1.0),
    ({"type": "cost", "budget": 0.001}, 0.0),
    ({"type": "token-usage", "max_total": 1200}, 1.0),
    ({"type": "token_usage", "max_total": 1199}, 0.0),
    ({"type": "token-usage", "max_input": 1000, "max_output": 200}, 0.0),  # all limits must hold
    ({"type": "token-usage", "max_input": 1000, "max_output": 300}, 1.0),
    ({"type": "execution-metrics", "max_tool_calls": 5}, 1.0),
    ({"type": "execution-metrics", "max_tool_calls": 3, "max_llm_calls": 2}, 0.5),
    ({"type": "execution_metrics", "maxToolCalls": 3, "maxLlmCalls": 1, "maxDurationMs": 5000}, 1 / 3),
    ({"type": "execution-metrics", "max_tokens": 1200, "max_cost_usd": 0.004}, 0.5),
    ({"type": "execution-metrics", "target_exploration_ratio": 0.5}, 1.0),
    ({"type": "execution-metrics", "target_exploration_ratio": 0.9, "exploration_tolerance": 0.1}, 0.0),
    ({"type": "execution-metrics", "targetExplorationRatio": 0.7, "explorationTolerance": 0.25}, 1.0),
]


@pytest.mark.parametrize(("spec", "expected"), METRIC_CASES)
def test_metric_assertions(spec: dict, expected: float) -> None:
    assert run(spec, "answer", METRICS).score == pytest.approx(expected)


def test_metric_wording() -> None:
    latency = run({"type": "latency", "max_ms": 1000}, "", METRICS)
    assert latency.misses == ("Duration 1200ms > 1000ms threshold",)
    assert latency.reasoning == "Execution took 1200ms (threshold: 1000ms)"
    metrics = run({"type": "execution-metrics", "max_tool_calls": 3, "max_cost_usd": 0.01}, "", METRICS)
    assert metrics.hits == ("Cost $0.0042 <= $0.0100 max",)
    assert metrics.misses == ("Tool calls 4 > 3 max",)


@pytest.mark.parametrize("spec", [
    {"type": "latency", "max_ms": 10},
    {"type": "cost", "max_usd": 10},
    {"type": "token-usage", "max_total": 10},
])
def test_unreported_metrics_fail(spec: dict) -> None:
    result = run(spec, "answer", RunMetrics())
    assert (result.score, result.verdict) == (0.0, "fail") and result.error is None and result.misses


def test_execution_metrics_counts_missing_data_as_a_miss() -> None:
    result = run({"type": "execution-metrics", "max_tool_calls": 5, "max_llm_calls": 5}, "", RunMetrics(tool_calls=1))
    assert result.score == 0.5 and result.misses == ("LLM call count data not available",)


def test_token_totals() -> None:
    assert TokenUsage(10, 5).total_tokens() == 15
    assert TokenUsage(10, 5, cached=3).total_tokens() == 18
    assert TokenUsage(10, 5, total=99).total_tokens() == 99
    assert TokenUsage(None, 5).total_tokens() is None


def test_exploration_ratio() -> None:
    assert exploration_ratio(["Read", "Grep", "Edit", "Bash"]) == 0.5
    assert exploration_ratio([]) is None
    assert exploration_ratio(["lookup", "edit"], exploration_tools=["lookup"]) == 0.5


@pytest.mark.parametrize("kind", ["rubrics", "llm-judge", "llm_judge", "code_judge", "agent-judge", "composite"])
def test_runner_types_are_not_supported_by_name(kind: str) -> None:
    result = evaluate_assertion({"type": kind}, "x")
    assert isinstance(result, NotSupported)
    assert result.type == normalize_type(kind) and "runner" in result.reason


def test_unknown_types_are_reported_as_custom() -> None:
    result = evaluate_assertion({"type": "my_check"}, "x")
    assert result == NotSupported("my-check", "unknown assertion type 'my_check' (a custom assertion, resolved by "
                                              "the runner)")


def test_normalize_type() -> None:
    assert normalize_type("code_judge") == "code-judge"
    assert normalize_type(" starts-with ") == " starts-with "  # not trimmed: AgentV takes it as a custom type


def test_every_registry_type_is_either_scored_here_or_by_the_runner() -> None:
    """A deterministic entry names a scorer here that resolves; every other entry is left to its stage."""
    from evalspec.registry import agentv_assertions as registry
    from evalspec.registry.stages import resolve_scorer

    here = {n for n, t in registry.ASSERTION_TYPES.items() if t.stage.deterministic}
    assert {"contains", "regex", "latency", "tool-trajectory", "field-accuracy"} <= here
    assert set(registry.ASSERTION_TYPES) - here == {"rubrics", "llm-judge", "code-judge", "agent-judge", "composite"}
    for name in here:
        ref = registry.ASSERTION_TYPES[name].scorer
        assert isinstance(ref, str) and ref.startswith("evalspec.scoring.agentv_assertions:"), name
        assert callable(resolve_scorer(ref)), name
    for name in set(registry.ASSERTION_TYPES) - here:
        assert isinstance(evaluate_assertion({"type": name}, "x"), NotSupported), name


def test_accepts_the_checkers_normalized_assertion() -> None:
    class Assertion:
        type = "icontains"
        negate = True
        config = {"value": "HELLO"}

    result = run(Assertion(), "hello")  # type: ignore[arg-type]
    assert (result.score, result.verdict) == (0.0, "fail")
