"""AgentV aggregation: verdicts, required gates, trials, t quantiles, rubrics and composites."""

from __future__ import annotations

import pytest

from evalspec.scoring.agentv_aggregate import (
    GatedScore,
    aggregate_test,
    aggregate_trials,
    confidence_interval,
    gate_threshold,
    mean_score,
    negate_result,
    negate_verdict,
    pass_at_k,
    score_checklist,
    score_ranges,
    t_critical_95,
    verdict,
)
from evalspec.scoring.agentv_assertions import evaluate_assertion


@pytest.mark.parametrize(("score", "expected"), [
    (0.85, "pass"), (0.7, "borderline"), (0.5, "fail"),  # the reference cases
    (1.0, "pass"), (0.8, "pass"), (0.7999, "borderline"), (0.6, "borderline"), (0.5999, "fail"), (0.0, "fail"),
])
def test_verdict(score: float, expected: str) -> None:
    assert verdict(score) == expected


def test_negation_of_verdicts() -> None:
    assert [negate_verdict(v) for v in ("pass", "borderline", "fail")] == ["fail", "borderline", "pass"]
    assert negate_result(0.7, "borderline") == pytest.approx((0.3, "borderline"))


def _test_score(output: str, assertions: list[dict]) -> GatedScore:
    items = []
    for spec in assertions:
        result = evaluate_assertion(spec, output)
        items.append((result.score, spec.get("weight", 1.0), spec.get("required", False)))  # type: ignore[union-attr]
    return aggregate_test(items)


def test_reference_case_required_gate_fails() -> None:
    result = _test_score("The answer is goodbye", [{"type": "contains", "value": "hello", "required": True},
                                                   {"type": "contains", "value": "goodbye"}])
    assert (result.score, result.verdict, result.failed_gates) == (0.0, "fail", (0,))


def test_reference_case_gate_passes_then_mean() -> None:
    result = _test_score("hello world", [{"type": "contains", "value": "hello", "required": True},
                                         {"type": "contains", "value": "foo"}])
    assert (result.score, result.verdict) == (0.5, "fail")


GATES = [
    ("no gates: weighted mean", [(1.0, 3, False), (0.0, 1, False)], 0.75, "borderline"),
    ("true needs 0.8", [(0.79, 1, True), (1.0, 1, False)], 0.0, "fail"),
    ("true passes at 0.8", [(0.8, 1, True), (1.0, 1, False)], 0.9, "pass"),
    ("numeric gate", [(0.6, 1, 0.6), (1.0, 1, False)], 0.8, "pass"),
    ("numeric gate missed", [(0.59, 1, 0.6), (1.0, 1, False)], 0.0, "fail"),
    ("gate with weight 0 still gates", [(0.0, 0, True), (1.0, 1, False)], 0.0, "fail"),
    ("total weight 0", [(1.0, 0, False), (1.0, 0, False)], 0.0, "fail"),
    ("no items", [], 0.0, "fail"),
    ("None weight means 1", [(1.0, None, False), (0.0, 1, False)], 0.5, "fail"),
]


@pytest.mark.parametrize(("items", "score", "expected_verdict"), [g[1:] for g in GATES], ids=[g[0] for g in GATES])
def test_aggregate_test(items: list[tuple], score: float, expected_verdict: str) -> None:
    result = aggregate_test(items)
    assert result.score == pytest.approx(score) and result.verdict == expected_verdict


def test_aggregate_test_accepts_objects() -> None:
    class Item:
        def __init__(self, score: float, weight: float, required: bool | float) -> None:
            self.score, self.weight, self.required = score, weight, required

    assert aggregate_test([Item(1.0, 1, True), Item(0.5, 1, False)]).score == 0.75
    assert aggregate_test([(0.9,), (0.7,)]).score == pytest.approx(0.8)


def test_gate_threshold() -> None:
    assert gate_threshold(True) == 0.8
    assert gate_threshold(0.3) == 0.3
    assert gate_threshold(1) == 1.0
    assert gate_threshold(False) is None and gate_threshold(None) is None


def test_trials_reference_case_mean() -> None:
    result = aggregate_trials([0.7, 0.9, 1.0], "mean")
    assert round(result.score, 4) == 0.8667 and result.verdict == "pass"
    assert result.details == {"strategy": "mean", "mean": pytest.approx(0.866666666), "min": 0.7, "max": 1.0}


def test_trials_pass_at_k_takes_the_best() -> None:
    result = aggregate_trials([0.5, 0.9, 0.7], "pass_at_k")
    assert (result.score, result.verdict) == (0.9, "pass")
    assert result.details == {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 3}
    assert pass_at_k([0.2]) == 0.2


def test_trials_confidence_interval_is_the_lower_bound() -> None:
    # mean 0.8667, s = 0.15275, AgentV's t(2) = 4.303 → margin 0.37949
    interval = confidence_interval([0.7, 0.9, 1.0])
    assert interval.mean == pytest.approx(0.8666667)
    assert interval.stddev == pytest.approx(0.1527525)
    assert interval.lower == pytest.approx(0.8666667 - 4.303 * 0.1527525 / 3 ** 0.5, abs=1e-6)
    assert interval.upper == 1.0  # clamped
    result = aggregate_trials([0.7, 0.9, 1.0], "confidence_interval")
    assert result.score == interval.lower and result.verdict == "fail"
    assert confidence_interval([0.8, 0.8, 0.8]).lower == pytest.approx(0.8)
    assert confidence_interval([0.6]).lower == 0.6  # one trial: no interval
    assert confidence_interval([0.0, 0.0, 1.0]).lower == 0.0  # clamped at 0


def test_trials_errors() -> None:
    with pytest.raises(ValueError, match="unknown trials strategy"):
        aggregate_trials([1.0], "best_of")
    with pytest.raises(ValueError):
        mean_score([])



# AgentV's table (trials.ts): 3 decimals up to df 29, then z = 1.96.
T_TABLE = [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447), (7, 2.365), (8, 2.306),
           (9, 2.262), (10, 2.228), (15, 2.131), (20, 2.086), (25, 2.060), (29, 2.045), (30, 1.96), (40, 1.96),
           (0, 12.706), (100000, 1.960)]


@pytest.mark.parametrize(("df", "expected"), T_TABLE)
def test_t_critical_values(df: int, expected: float) -> None:
    assert t_critical_95(df) == expected


CRITERIA = [
    {"id": "identification", "outcome": "Identifies the entity", "weight": 3.0, "required": True},
    {"id": "legal-basis", "outcome": "Cites the regulation", "weight": 2.0, "required": False},
    {"id": "tone", "outcome": "Professional tone", "required": False},
]


def test_checklist_scoring() -> None:
    checks = [{"id": "identification", "satisfied": True, "reasoning": "Named it."},
              {"id": "legal-basis", "satisfied": False, "reasoning": "No citation."},
              {"id": "tone", "satisfied": True, "reasoning": "Fine."}]
    result = score_checklist(CRITERIA, checks)
    assert result.score == pytest.approx(4 / 6) and result.verdict == "borderline"
    assert result.hits == ("[identification] Identifies the entity: Named it.", "[tone] Professional tone: Fine.")
    assert result.misses == ("[legal-basis] Cites the regulation: No citation.",)


def test_checklist_missed_required_criterion_fails_the_assertion() -> None:
    checks = [{"id": "identification", "satisfied": False, "reasoning": "r"},
              {"id": "legal-basis", "satisfied": True, "reasoning": "r"}, {"id": "tone", "satisfied": True,
                                                                            "reasoning": "r"}]
    result = score_checklist(CRITERIA, checks)
    assert result.score == pytest.approx(0.5) and result.verdict == "fail"


def test_checklist_in_the_judges_order_repeats_count_unknown_ids_skipped() -> None:
    # AgentV's calculateRubricScore: a repeated check counts again, an unknown id is skipped
    criteria = [{"id": "a", "outcome": "A", "required": False}, {"id": "b", "outcome": "B", "required": False}]
    result = score_checklist(criteria, [{"id": "b", "satisfied": False, "reasoning": "x"},
                                        {"id": "a", "satisfied": True, "reasoning": "y"},
                                        {"id": "a", "satisfied": True, "reasoning": "z"},
                                        {"id": "zz", "satisfied": True, "reasoning": "w"}])
    assert result.score == pytest.approx(2 / 3) and result.hits == ("[a] A: y", "[a] A: z")
    assert result.unassessed == ()


def test_checklist_criteria_the_judge_left_out_are_unassessed() -> None:
    result = score_checklist(CRITERIA[1:], [{"id": "tone", "satisfied": True, "reasoning": "r"}])
    assert result.unassessed == ("legal-basis",)  # the runner does not score the assertion


def test_score_range_scoring() -> None:
    criteria = [{"id": "correctness", "weight": 2.0, "required_min_score": 7,
                 "score_ranges": [{"score_range": [0, 6], "outcome": "Weak"}, {"score_range": [7, 10], "outcome": "Strong"}]},
                {"id": "clarity", "weight": 1.0, "outcome": "Clear"}]
    result = score_ranges(criteria, [{"id": "correctness", "score": 9, "reasoning": "Right."},
                                     {"id": "clarity", "score": 6}])
    # 9/10·2 + 6/10·1 over 3 is 0.7999999999999999 in AgentV's arithmetic (each score / 10 first): borderline
    assert result.score == 0.7999999999999999 and result.verdict == "borderline"
    assert result.hits == ("[correctness] correctness - Score: 9/10 (Strong): Right.",)
    assert result.misses == ("[clarity] Clear - Score: 6/10 ()",)
    assert result.details == {"raw_scores": {"correctness": 9, "clarity": 6}, "normalization": "score / 10",
                              "aggregation": "weighted_average"}
    below = score_ranges(criteria, [{"id": "correctness", "score": 6}, {"id": "clarity", "score": 10}])
    assert below.score == pytest.approx((1.2 + 1.0) / 3) and below.verdict == "fail"


def test_score_range_required_true_means_ten() -> None:
    result = score_ranges([{"id": "a", "required": True}], [{"id": "a", "score": 9}])
    assert (result.score, result.verdict) == (0.9, "fail")


def test_score_range_clamps() -> None:
    result = score_ranges([{"id": "a"}, {"id": "b"}], [{"id": "a", "score": 14}, {"id": "b", "score": -2}])
    assert result.score == pytest.approx(0.5)


def test_outcome_never_passes_on_a_check_that_was_not_made() -> None:
    from evalspec.scoring.agentv_aggregate import NOT_SCORED, outcome_of

    # (score or None, weight, required)
    assert outcome_of([(1.0, 1, False), (None, 1, True)])[:2] == (None, NOT_SCORED)
    assert outcome_of([(1.0, 1, False), (None, 5, False)])[:2] == (None, NOT_SCORED)
    got = outcome_of([(0.5, 1, True), (None, 1, True)])
    assert got[:2] == (0.0, "fail") and got.failed_gates == (0,) and got.not_scored == (1,)
    # everything scored: the reference cases of compat notes §6
    assert outcome_of([(0.0, 1, True), (1.0, 1, False)])[:2] == (0.0, "fail")
    assert outcome_of([(1.0, 1, True), (0.0, 1, False)])[:2] == (0.5, "fail")
    assert outcome_of([(1.0, 1, 0.6), (0.7, 1, False)])[:2] == (0.85, "pass")
