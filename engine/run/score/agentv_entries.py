"""AgentV's deterministic assertions (contains, regex, json, latency, …) as the function stage scores them:
one assertion's result entry (the row's `scores` item, with `_required` for the aggregation), from
scoring/agentv_assertions; an assertion that cannot be scored is an entry with no score and its reason
(`skipped`), never a pass. Weval's function points are score/functions.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...scoring.agentv_aggregate import NOT_SCORED

if TYPE_CHECKING:
    from ...agentv.model import Assertion
    from ...scoring.agentv_assertions import RunMetrics

_AGENTV_SCORERS: Any = None  # scoring/agentv_assertions, once an AgentV run scores with it


def _agentv_scorers() -> Any:
    # Imported here: the AgentV scorers and model cost a Weval run ~0.1 s of imports it does not need
    # (and once: the import statement in `deterministic` was 15 % of its time).
    global _AGENTV_SCORERS
    from ...scoring import agentv_assertions

    _AGENTV_SCORERS = agentv_assertions
    return agentv_assertions


def deterministic(a: Assertion, answer: str, metrics: RunMetrics, expected: list[tuple[str, Any]]) -> dict[str, Any]:
    """A deterministic assertion (contains, regex, json, latency, …: scoring/agentv_assertions)."""
    agentv_assertions = _AGENTV_SCORERS or _agentv_scorers()
    try:
        got = agentv_assertions.evaluate_assertion(a, answer, metrics, expected=expected)
    except Exception as exc:  # our bug must not pass a test, nor lose the run: the check was not made
        return skipped(a, f"not scored: evalspec failed while scoring it ({type(exc).__name__}: {exc})")
    if isinstance(got, agentv_assertions.NotSupported):
        return skipped(a, f"not scored: evalspec does not score '{got.type}' assertions yet")
    if isinstance(got, agentv_assertions.NotScored):
        return skipped(a, f"not scored: {got.reason}")
    return entry(a, got.score, got.verdict, list(got.hits), list(got.misses), got.reasoning)


def row_type(a: Assertion) -> str:
    """The type a result row names: its entry's `row_type` when AgentV reports another (it runs a
    `rubrics` assertion as an llm-judge and says so), else the type."""
    t = a.registered
    return (t.row_type if t is not None else None) or a.type


def entry(a: Assertion, score: float, result_verdict: str, hits: list[str], misses: list[str],
          reasoning: str | None) -> dict[str, Any]:
    """A scored assertion's entry."""
    return {"name": a.name, "type": row_type(a), "score": score, "weight": a.weight, "verdict": result_verdict,
            "hits": hits, "misses": misses, "reasoning": reasoning, "_required": a.required}


def skipped(a: Assertion, reason: str) -> dict[str, Any]:
    """Not scored (a type not run yet, no judge, a failed judge): listed with its reason; the test is then
    not scored unless something else fails it (agentv_aggregate.outcome_of)."""
    return {"name": a.name, "type": row_type(a), "score": None, "weight": a.weight, "verdict": NOT_SCORED, "hits": [],
            "misses": [], "reasoning": reason, "_required": a.required}
