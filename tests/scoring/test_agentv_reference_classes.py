"""Issue 25: each class where evalspec differed from AgentV v2.19, at its minimal case (the vectors test,
tests/agentv/test_reference_vectors.py, walks the generated cases)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalspec.agentv.assertions import auto_name
from evalspec.scoring.agentv_aggregate import execution_status, outcome_of
from evalspec.scoring.agentv_assertions import NotScored, RunMetrics, TokenUsage, evaluate_assertion
from evalspec.scoring.trials import Attempt, TrialSettings, combine, stop_reason

from ..agentv.helpers import check


def test_false_pass_a_target_that_reported_nothing_fails_its_metric_checks() -> None:
    nothing = RunMetrics()  # AgentV's mock target: no usage, no duration, no cost
    for spec, miss in (({"type": "token-usage", "max_total": 10**9}, "No token usage data available in trace"),
                       ({"type": "latency", "max_ms": 10**9}, "No duration data available in trace"),
                       ({"type": "cost", "max_usd": 10**9}, "No cost data available in trace")):
        got = evaluate_assertion(spec, "ok", nothing)
        assert (got.score, got.verdict, got.misses) == (0.0, "fail", (miss,))  # type: ignore[union-attr]
    reported = RunMetrics(token_usage=TokenUsage(3, 4), duration_ms=5.0)
    got = evaluate_assertion({"type": "token-usage", "max_total": 7}, "ok", reported)
    assert got.score == 1.0 and got.reasoning == "token-usage input=3, output=4, cached=0, total=7"  # type: ignore[union-attr]


@pytest.mark.parametrize(("score", "status"), [(0.79, "quality_failure"), (0.6, "quality_failure"), (0.8, "ok"),
                                               (1.0, "ok"), (None, "quality_failure")])
def test_execution_status_ok_needs_point_eight(score: float | None, status: str) -> None:
    assert execution_status(score) == status
    assert execution_status(1.0, "boom") == "execution_error"


def test_a_missed_required_rubric_criterion_fails_the_rubric_not_the_test() -> None:
    from evalspec.run.score.judges import judged_entry

    test = check("""
        tests:
          - id: t
            input: hi
            assert:
              - {type: contains, value: hi, weight: 9}
              - type: rubrics
                criteria:
                  - {id: a, outcome: A, weight: 9}
                  - {id: b, outcome: B}
    """).suite.tests[0]  # type: ignore[union-attr]
    rubric = test.assertions[1]
    entry = judged_entry(rubric, json.dumps({"checks": [{"id": "a", "satisfied": True, "reasoning": "y"},
                                                        {"id": "b", "satisfied": False, "reasoning": "n"}],
                                             "overall_reasoning": "ok"}))
    assert (entry["type"], entry["score"], entry["verdict"]) == ("llm-judge", 0.9, "fail")
    outcome = outcome_of([(1.0, 9.0, False), (entry["score"], 1.0, False)])
    assert (outcome.score, outcome.verdict) == (pytest.approx(0.99), "pass")  # the weighted mean decides


def _rubric_entry(reply: dict[str, Any] | str) -> dict[str, Any]:
    from evalspec.run.score.judges import judged_entry

    test = check("""
        tests:
          - id: t
            input: hi
            assert:
              - type: rubrics
                criteria: [{id: a, outcome: A, required: false}, {id: b, outcome: B, required: false}]
    """).suite.tests[0]  # type: ignore[union-attr]
    return judged_entry(test.assertions[0], reply if isinstance(reply, str) else json.dumps(reply))


def test_judge_replies_that_repeat_omit_or_break_the_schema() -> None:
    # repeated: counted each time, as AgentV's calculateRubricScore (2 of 3)
    got = _rubric_entry({"checks": [{"id": "a", "satisfied": True, "reasoning": "x"},
                                    {"id": "a", "satisfied": True, "reasoning": "y"},
                                    {"id": "b", "satisfied": False, "reasoning": "z"}], "overall_reasoning": "o"})
    assert got["score"] == pytest.approx(2 / 3)
    # an unknown id is skipped
    got = _rubric_entry({"checks": [{"id": "a", "satisfied": True, "reasoning": "x"},
                                    {"id": "b", "satisfied": True, "reasoning": "y"},
                                    {"id": "zz", "satisfied": False, "reasoning": "z"}], "overall_reasoning": "o"})
    assert got["score"] == 1.0
    # omitted: AgentV scores without it (1.0 here); evalspec does not score the assertion
    got = _rubric_entry({"checks": [{"id": "a", "satisfied": True, "reasoning": "x"}], "overall_reasoning": "o"})
    assert got["score"] is None and "did not assess 'b'" in got["reasoning"]
    # outside AgentV's schema (no reasoning, no overall_reasoning, satisfied not a boolean): AgentV skips it
    for reply in ({"checks": [{"id": "a", "satisfied": True}, {"id": "b", "satisfied": True}], "overall_reasoning": "o"},
                  {"checks": [{"id": "a", "satisfied": True, "reasoning": "x"},
                              {"id": "b", "satisfied": True, "reasoning": "y"}]},
                  {"checks": [{"id": "a", "satisfied": "yes", "reasoning": "x"},
                              {"id": "b", "satisfied": True, "reasoning": "y"}], "overall_reasoning": "o"},
                  "no json here"):
        got = _rubric_entry(reply)
        assert got["score"] is None and got["verdict"] == "not scored", reply
    # fenced JSON and text around it are read as AgentV's parseJsonFromText reads them
    got = _rubric_entry("Sure:\n```json\n" + json.dumps({"checks": [{"id": "a", "satisfied": True, "reasoning": "x"},
                        {"id": "b", "satisfied": True, "reasoning": "y"}], "overall_reasoning": "o"}) + "\n```")
    assert got["score"] == 1.0


@pytest.mark.parametrize(("kind", "value", "name"), [
    ("contains", "DENIED", "contains-DENIED"), ("icontains", "x", "icontains-x"), ("equals", "4", "equals-4"),
    ("starts-with", "He", "starts-with-He"), ("ends-with", ".", "ends-with-."),
    ("regex", "a" * 40, "regex-" + "a" * 30), ("regex", "😀" * 20, "regex-" + "😀" * 15),
    ("contains-any", ["a", "b", "c"], "contains-any-3"), ("icontains-all", ["a"], "icontains-all-1"),
    ("is-json", None, "is-json"), ("rubrics", None, "rubrics"), ("contains", "", "contains"),
])
def test_unnamed_assertions_get_agentvs_names(kind: str, value: Any, name: str) -> None:
    assert auto_name(kind, value) == name


def test_unnamed_assertions_are_named_so_in_the_model() -> None:
    result = check("""
        tests:
          - id: t
            input: hi
            assert:
              - {type: contains, value: DENIED}
              - {type: regex, value: '^[A-Z]+ \\d{4} and a long tail beyond thirty'}
              - {type: contains-any, value: [a, b]}
    """)
    names = [a.name for a in result.suite.tests[0].assertions]  # type: ignore[union-attr]
    assert names == ["contains-DENIED", "regex-^[A-Z]+ \\d{4} and a long tail ", "contains-any-2"]


def test_trials_an_attempt_of_unknown_cost_adds_nothing_to_the_limit() -> None:
    settings = TrialSettings(count=5, strategy="mean", cost_limit_usd=1.0)
    attempts = [Attempt(0.5, "fail", 0.6), Attempt(0.5, "fail", None)]
    assert stop_reason(settings, attempts) is None  # AgentV: 0.6 < 1, the unknown one counts nothing
    assert stop_reason(settings, [*attempts, Attempt(0.5, "fail", 0.5)]) == "cost_limit"


def test_trials_the_row_shows_the_first_best_attempt_and_agentvs_status() -> None:
    settings = TrialSettings(count=3, strategy="mean")
    attempts = [Attempt(0.5, "fail", None), Attempt(0.9, "pass", None), Attempt(0.9, "pass", None)]
    result = combine(settings, attempts, "count")
    assert result.chosen == 1 and result.score == pytest.approx(2.3 / 3)
    # any attempt ok → ok, though the mean (0.77) is below 0.8
    assert result.execution_status == "ok" and result.verdict == "borderline"
    low = combine(settings, [Attempt(0.5, "fail", None), Attempt(0.7, "borderline", None)], "count")
    assert low.execution_status == "quality_failure"


def test_a_regex_field_without_a_path_or_an_empty_value_is_not_a_check() -> None:
    got = evaluate_assertion({"type": "field-accuracy", "fields": [{"path": "", "match": "exact"}]}, "{}", RunMetrics(),
                             expected=[("assistant", {"a": 1})])
    assert isinstance(got, NotScored)
    result = check("""
        tests:
          - id: t
            input: hi
            assert:
              - {type: regex, value: ''}
    """)
    assert [f.code for f in result.findings if f.severity == "error"] == ["missing-value"]
