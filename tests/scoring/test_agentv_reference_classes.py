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
    from evalspec.run.score.judged_types import judged_entry

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
    from evalspec.run.score.judged_types import judged_entry

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


def test_a_regex_javascript_rejects_is_a_warning_and_scores_zero() -> None:
    # AgentV's validator warns ("Invalid regex pattern …") and its run scores the assertion as its
    # evaluator's failure; negated, evalspec keeps that failure (AgentV would pass it: a deliberate row).
    result = check("""
        tests:
          - id: t
            input: hi
            assert:
              - {name: r, type: regex, value: "a++"}
              - {name: n, type: regex, value: "a++", negate: true}
    """)
    found = [f for f in result.findings if f.code == "invalid-regex"]
    assert [f.severity for f in found] == ["warning", "warning"]
    plain, negated = result.suite.tests[0].assertions  # type: ignore[union-attr]
    for a in (plain, negated):
        got = evaluate_assertion(a, "aaa")
        assert (got.score, got.verdict, got.misses) == (  # type: ignore[union-attr]
            0.0, "fail", ("Evaluator '" + a.name + "' failed: Invalid regular expression: nothing to repeat",))


def test_a_csv_tests_file_or_an_eval_file_that_is_a_list_is_refused(tmp_path: Any) -> None:
    # AgentV v2.19: "Unsupported external test file format '.csv'" / "File must contain a YAML object".
    from evalspec.analysis import analyze_file

    (tmp_path / "cases.csv").write_text("id,input,criteria\nc1,hi,Greets\n", encoding="utf-8")
    suite = tmp_path / "suite.eval.yaml"
    suite.write_text("tests: ./cases.csv\n", encoding="utf-8")
    assert [(f.code, f.severity) for f in analyze_file(suite).findings] == [("unsupported-tests-extension", "error")]
    suite.write_text("- id: a\n  input: hi\n  criteria: c\n", encoding="utf-8")
    [f] = analyze_file(suite).findings
    assert (f.code, f.severity) == ("not-an-eval-file", "error") and "File must contain a YAML object" in f.message
    listed = tmp_path / "cases.yaml"  # a tests file on its own is still a list of tests
    listed.write_text("- id: a\n  input: hi\n  criteria: c\n", encoding="utf-8")
    assert analyze_file(listed).findings == []


def test_unknown_regex_flags_are_a_warning_and_score_zero() -> None:
    # AgentV runs `new RegExp(value, "q")`: it throws and the assertion is its evaluator's failure (load
    # vectors 402, 441, 943).
    result = check("""
        tests:
          - id: t
            input: hi
            assert:
              - {name: r, type: regex, value: a, flags: q}
    """)
    assert [(f.code, f.severity) for f in result.findings] == [("invalid-regex-flags", "warning")]
    [a] = result.suite.tests[0].assertions  # type: ignore[union-attr]
    got = evaluate_assertion(a, "a")
    assert (got.score, got.verdict, got.misses) == (  # type: ignore[union-attr]
        0.0, "fail", ("Evaluator 'r' failed: Invalid flags supplied to RegExp constructor.",))


def test_trials_values_agentv_ignores_are_warnings_and_ignored() -> None:
    # AgentV: "Invalid trials.strategy: 'best' … Defaulting to pass_at_k", "Invalid trials.cost_limit_usd:
    # -1 … Ignoring", an invalid count drops the setting (load vectors 382, 830).
    def trials(text: str) -> Any:
        result = check("execution:\n  trials: " + text + "\ntests:\n  - {id: t, input: hi, criteria: c}\n")
        assert {f.severity for f in result.findings} <= {"warning"}, result.findings
        return result.suite.trials  # type: ignore[union-attr]

    assert trials("{count: 3, strategy: best}") == {"count": 3, "strategy": "pass_at_k"}
    assert trials("{count: 3, cost_limit_usd: -1}") == {"count": 3, "strategy": "pass_at_k"}
    assert trials("{count: 2, strategy: mean, costLimitUsd: 0.5}") == {"count": 2, "strategy": "mean",
                                                                       "cost_limit_usd": 0.5}
    assert trials("{count: 0}") is None


def test_unknown_roles_and_content_blocks_are_left_out_as_agentv_does() -> None:
    # AgentV's loader drops a message whose role it does not know and its prompt has nothing for a block of
    # an unknown type or a text block without `value` (load vectors 86, 53, 94): warnings, and left out.
    result = check("""
        tests:
          - id: t
            input:
              - {role: human, content: x}
              - role: user
                content:
                  - {type: audio, value: x}
                  - {type: text}
                  - {type: text, value: kept}
            criteria: c
    """)
    assert sorted((f.code, f.severity) for f in result.findings) == [
        ("invalid-content-block", "warning"), ("invalid-content-type", "warning"), ("invalid-role", "warning")]
    [message] = result.suite.tests[0].input_messages  # type: ignore[union-attr]
    assert message.role == "user" and [b.value for b in message.content] == ["kept"]


def test_checks_that_compare_nothing_are_refused() -> None:
    # Deliberate (docs/reference-differences.md, vectors NO_LIMIT): AgentV runs a token-usage check without a
    # limit and a tool minimum of -1, and both pass whatever happened; evalspec refuses the file.
    for assertion, code in (("{name: t, type: token-usage, max_totl: 100}", "missing-field"),
                            ("{name: tt, type: tool-trajectory, mode: any_order, minimums: {a: -1}}",
                             "invalid-value")):
        result = check("tests:\n  - id: t\n    input: hi\n    assert:\n      - " + assertion + "\n")
        assert (code, "error") in [(f.code, f.severity) for f in result.findings], result.findings
    got = evaluate_assertion({"type": "token-usage"}, "ok", RunMetrics(token_usage=TokenUsage(3, 4)))
    assert getattr(got, "score", None) != 1.0  # never a pass without a limit


def test_execution_values_agentv_ignores_are_warnings() -> None:
    # AgentV: "Invalid execution.total_budget_usd: -5 … Ignoring"; an unknown workspace isolation is the
    # default, shared (load vectors 293, 278).
    result = check("execution:\n  total_budget_usd: -5\nworkspace:\n  isolation: sometimes\n"
                   "tests:\n  - {id: t, input: hi, criteria: c}\n")
    assert sorted((f.code, f.severity) for f in result.findings) == [("invalid-value", "warning"),
                                                                     ("out-of-range", "warning")]
    assert all(f.message.endswith("AgentV ignores it.") for f in result.findings)


def test_assertion_values_agentv_ignores_are_warnings_and_ignored() -> None:
    # AgentV reads `flags` only as a string and a code-judge `target` only as true or a mapping ("Invalid
    # target config … expected object or true"): both ignored, with a warning (load vectors 350, 174).
    result = check("""
        tests:
          - id: t
            input: hi
            assert:
              - {name: r, type: regex, value: abc, flags: 1}
              - {name: c, type: code-judge, command: [python3, check.py], target: 5}
    """)
    assert {f.severity for f in result.findings if f.code in ("wrong-type", "invalid-value")} == {"warning"}
    regex, judge = result.suite.tests[0].assertions  # type: ignore[union-attr]
    assert "flags" not in regex.config and "target" not in judge.config


def test_tool_items_agentv_cannot_read_are_refused() -> None:
    # Deliberate (vectors UNREAD_TOOL_ITEM): AgentV drops an expected item without `tool` and an `args` that
    # is neither `any` nor a mapping, and scores without them; evalspec refuses the file.
    for item, code in (("{args: {q: 1}}", "missing-field"), ("{tool: a, args: whatever}", "invalid-value")):
        result = check("tests:\n  - id: t\n    input: hi\n    assert:\n      - {name: tt, type: tool-trajectory, "
                       "mode: in_order, expected: [" + item + "]}\n")
        assert (code, "error") in [(f.code, f.severity) for f in result.findings], result.findings


def test_an_args_match_agentv_cannot_read_is_a_warning_and_exact() -> None:
    # AgentV: "Invalid args_match 'fuzzy' … must be exact, superset, subset, ignore, or a string array", and
    # the arguments are compared exactly (load vectors 139, 587, 722, 772, 808); a list without a usable
    # name is exact too, never "check nothing".
    from evalspec.providers.tool_calls import calls_from_json
    from evalspec.scoring.tool_trajectory import score_trajectory

    result = check("tests:\n  - id: t\n    input: hi\n    assert:\n      - {name: tt, type: tool-trajectory, "
                   "mode: in_order, args_match: fuzzy, expected: [{tool: a, args: {q: 1}}]}\n")
    assert [(f.code, f.severity) for f in result.findings] == [("invalid-value", "warning")]
    calls = calls_from_json([{"tool": "a", "input": {"q": 2}}])
    for mode in ("fuzzy", [5], []):
        config = {"mode": "in_order", "args_match": mode, "expected": [{"tool": "a", "args": {"q": 1}}]}
        assert score_trajectory(config, calls).score == 0.0, mode
    assert score_trajectory({**config, "args_match": "ignore"}, calls).score == 1.0


def test_a_suite_input_agentv_cannot_read_is_a_warning_and_ignored() -> None:
    # AgentV's expandInputShorthand gives nothing for a suite-level `input: 5` and runs the tests (load
    # vectors 160, 621 …); a test's own unreadable input stays an error.
    result = check("input: 5\ntests:\n  - {id: t, input: hi, criteria: c}\n")
    assert [(f.code, f.severity) for f in result.findings] == [("invalid-input", "warning")]
    assert [m.content for m in result.suite.tests[0].input_messages] == ["hi"]  # type: ignore[union-attr]
    refused = check("tests:\n  - {id: t, input: 5, criteria: c}\n")
    assert ("invalid-input", "error") in [(f.code, f.severity) for f in refused.findings]
