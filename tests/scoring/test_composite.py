"""composite aggregation, computed by hand (compat notes §6 reference case included)."""

from __future__ import annotations

import json

import pytest

from evalspec.scoring.composite import Child, aggregator_kind, aggregator_prompt, threshold, weighted_average


def _children(*verdicts: str) -> list[Child]:
    scores = {"pass": 1.0, "borderline": 0.7, "fail": 0.0}
    return [Child(f"c{i}", "contains", scores[v], v) for i, v in enumerate(verdicts)]


def test_threshold_reference_case_and_borderline_counts_as_passing() -> None:
    got = threshold(_children("pass", "fail", "pass", "fail"), 0.5)  # compat notes §6: 2 of 4 → pass, 0.5
    assert (got.score, got.verdict) == (0.5, "pass")
    assert got.reasoning is not None and got.reasoning.startswith("2/4 evaluators passed (threshold: 0.5)")
    got = threshold(_children("pass", "borderline", "fail"), 0.6)
    assert (got.score, got.verdict) == (pytest.approx(2 / 3), "pass")
    got = threshold(_children("fail", "fail", "pass"), 0.5)
    assert (got.score, got.verdict) == (pytest.approx(1 / 3), "fail")
    assert got.reasoning is not None and got.reasoning.startswith("1/3 evaluators passed (threshold: 0.5)")
    assert threshold([], 0.5)[:2] == (0.0, "fail")
    assert threshold([], 0.0)[:2] == (0.0, "pass")  # AgentV: 0 ≥ 0
    assert threshold(_children("pass", "fail"))[:2] == (0.5, "pass")  # default threshold 0.5


def test_weighted_average_uses_the_aggregators_weights_only() -> None:
    # AgentV: weights?.[name] ?? 1 — a child's own `weight` counts only in a test, not in its composite
    children = [Child("safety", "llm-judge", 1.0, "pass", 1.0, ("safe",)), Child("quality", "x", 0.5, "fail"),
                Child("extra", "x", 0.0, "fail", 2.0, (), ("bad",))]
    got = weighted_average(children)
    assert (got.score, got.verdict) == (pytest.approx(1.5 / 3), "fail") and got.child_weights == (1.0, 1.0, 1.0)
    assert got.hits == ("[safety] safe",) and got.misses == ("[extra] bad",)
    assert weighted_average(children, {"safety": 6.0}).score == pytest.approx(6.5 / 8)
    assert weighted_average(children, {"safety": 0.7, "quality": 0.3, "extra": 0})[:2] == (pytest.approx(0.85), "pass")
    assert weighted_average([Child("a", "x", 1.0, "pass", 0.0)], {"a": 0})[:2] == (0.0, "fail")


def test_aggregator_kinds_and_prompt() -> None:
    assert aggregator_kind({"type": "code_judge"}) == "code-judge"
    assert aggregator_kind({"type": "llm_judge"}) == "llm-judge"
    assert aggregator_kind(None) == "weighted_average"
    prompt = aggregator_prompt({"prompt": "Results: {{EVALUATOR_RESULTS_JSON}} end"}, _children("pass"))
    body = json.loads(prompt.removeprefix("Results: ").removesuffix(" end"))
    assert body == {"c0": {"type": "contains", "score": 1.0, "verdict": "pass", "hits": [], "misses": [],
                           "reasoning": None}}
    assert "Decide the final score" in aggregator_prompt({}, _children("pass"))
