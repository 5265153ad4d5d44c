"""AgentV scoring: verdicts, required gates, weighted test scores, trials, rubric scores (composite: composite.py).

Follows AgentV v2.19's scoring. Inner weights (rubric criteria, composite
children) are combined here separately from the outer weights of a test's assertions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from .js_text import to_fixed

PASS_THRESHOLD = 0.8
BORDERLINE_THRESHOLD = 0.6
TRIAL_STRATEGIES = ("pass_at_k", "mean", "confidence_interval")
NOT_SCORED = "not scored"  # the verdict of an assertion, or a test, that could not be scored


def verdict(score: float) -> str:
    """≥ 0.8 pass, ≥ 0.6 borderline, else fail."""
    if score >= PASS_THRESHOLD:
        return "pass"
    if score >= BORDERLINE_THRESHOLD:
        return "borderline"
    return "fail"


def negate_verdict(value: str) -> str:
    """`negate: true`: pass ↔ fail; borderline stays borderline."""
    return {"pass": "fail", "fail": "pass"}.get(value, value)


def negate_result(score: float, result_verdict: str) -> tuple[float, str]:
    """`negate` for any scored assertion (including judged ones): (1 − score clamped, negated verdict)."""
    return min(1.0, max(0.0, 1.0 - score)), negate_verdict(result_verdict)


def negated_reasoning(reasoning: str | None, original: float) -> str:
    """AgentV's reasoning of a negated assertion: `[Negated] <reasoning> (original score: 0.40)`."""
    if reasoning:
        return f"[Negated] {reasoning} (original score: {to_fixed(original, 2)})"
    return f"[Negated] Original score: {to_fixed(original, 2)}"


def negated(score: float, result_verdict: str, hits: list[str], misses: list[str],
            reasoning: str | None) -> tuple[float, str, list[str], list[str], str]:
    """`negate: true` on a scored assertion, as AgentV writes it: (score, verdict, hits, misses, reasoning)
    with the score and verdict negated, hits and misses swapped, the reasoning marked."""
    new_score, new_verdict = negate_result(score, result_verdict)
    return new_score, new_verdict, misses, hits, negated_reasoning(reasoning, score)


def execution_status(score: float | None, error: str | None = None) -> str:
    """AgentV's `execution_status`: execution_error when the target failed, else ok at a score ≥ 0.8 and
    quality_failure below (a test not scored is never ok)."""
    if error is not None:
        return "execution_error"
    return "ok" if score is not None and score >= PASS_THRESHOLD else "quality_failure"


def gate_threshold(required: bool | float | None) -> float | None:
    """The minimum score of a required gate: 0.8 for `true`, the number itself; None: not a gate."""
    if required is True:
        return PASS_THRESHOLD
    if required is None or required is False:
        return None
    return float(required)


class GatedScore(NamedTuple):
    score: float
    verdict: str
    failed_gates: tuple[int, ...] = ()  # indices of the required items below their threshold


def _item(item: Any) -> tuple[float, float, bool | float | None]:
    if isinstance(item, tuple) and not hasattr(item, "score"):
        score = item[0]
        weight = item[1] if len(item) > 1 else 1.0
        required = item[2] if len(item) > 2 else False
    else:
        score, weight, required = item.score, getattr(item, "weight", 1.0), getattr(item, "required", False)
    return float(score), 1.0 if weight is None else float(weight), required


def weighted_mean(pairs: Iterable[tuple[float, float]]) -> float:
    """AgentV's computeWeightedMean: Σ score·weight / Σ weight, summed left to right as JavaScript does
    (the last bit decides a verdict at 0.8); total weight 0 → 0."""
    total = weighted = 0.0
    for score, weight in pairs:
        total += weight
        weighted += score * weight
    return weighted / total if total > 0 else 0.0


def aggregate_test(items: Iterable[Any]) -> GatedScore:
    """A test's score from its assertions' (score, weight, required), as AgentV's runEvaluatorList.

    Required gates first: any required item below its threshold (true → 0.8, a number → itself)
    makes the test 0 and fail. Otherwise the weighted mean; the verdict from the score.
    """
    parsed = [_item(item) for item in items]
    failed = tuple(k for k, (score, _, required) in enumerate(parsed)
                   if (threshold := gate_threshold(required)) is not None and score < threshold)
    if failed:
        return GatedScore(0.0, "fail", failed)
    score = weighted_mean((s, w) for s, w, _ in parsed)
    return GatedScore(score, verdict(score))


class Outcome(NamedTuple):
    """A test's score and verdict when some assertions may not have been scored."""

    score: float | None  # None: not scored
    verdict: str  # pass | borderline | fail | "not scored"
    failed_gates: tuple[int, ...] = ()
    not_scored: tuple[int, ...] = ()  # indices of the items that were not scored


def outcome_of(items: Sequence[tuple[float | None, float, bool | float | None]]) -> Outcome:
    """A test's outcome from its assertions' (score or None, weight, required), as aggregate_test.

    Ours: a check that was not made is never a pass. A scored gate below its threshold makes the test
    0 and fail, as in AgentV; otherwise any assertion not scored (score None) makes the test "not
    scored" (AgentV leaves a skipped judge out of the mean, which lifts the score on a check not made).
    """
    # One pass (every result row makes one): the gates, the items not scored, the scored items' pairs
    # for aggregate_test's weighted mean.
    missing: list[int] = []
    failed: list[int] = []
    pairs: list[tuple[float, float]] = []
    for k, (score, weight, required) in enumerate(items):
        if score is None:
            missing.append(k)
            continue
        value = float(score)
        if (threshold := gate_threshold(required)) is not None and value < threshold:
            failed.append(k)
        pairs.append((value, 1.0 if weight is None else float(weight)))
    if failed:
        return Outcome(0.0, "fail", tuple(failed), tuple(missing))
    if missing:
        return Outcome(None, NOT_SCORED, (), tuple(missing))
    mean = weighted_mean(pairs)
    return Outcome(mean, verdict(mean))


# ---------------------------------------------------------------------------------------------
# Trials


def pass_at_k(scores: Sequence[float]) -> float:
    """The best trial's score."""
    if not scores:
        raise ValueError("no trial scores")
    return max(scores)


def mean_score(scores: Sequence[float]) -> float:
    """The mean, summed left to right as AgentV's reduce."""
    if not scores:
        raise ValueError("no trial scores")
    total = 0.0
    for s in scores:
        total += s
    return total / len(scores)


# AgentV's two-sided 95% t critical values for df = 1…29 (z = 1.96 from df = 30 on).
T_TABLE_95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145,
              2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045)


def t_critical_95(df: int) -> float:
    """AgentV's getTCritical: its 3-decimal table, 1.96 from df = 30 on."""
    if df < 1:
        return 12.706
    if df >= 30:
        return 1.96
    return T_TABLE_95[df - 1]


class TrialInterval(NamedTuple):
    mean: float
    lower: float
    upper: float
    stddev: float


def confidence_interval(scores: Sequence[float]) -> TrialInterval:
    """The 95% t-interval of the mean trial score, clamped to [0, 1], as AgentV computes it. With one
    trial the interval is just the mean."""
    n = len(scores)
    mean = mean_score(scores)
    if n < 2:
        clamped = min(1.0, max(0.0, mean))
        return TrialInterval(mean, clamped, clamped, 0.0)
    squares = 0.0
    for s in scores:
        squares += (s - mean) ** 2
    stddev = math.sqrt(squares / (n - 1))
    margin = t_critical_95(n - 1) * (stddev / math.sqrt(n))
    return TrialInterval(mean, min(1.0, max(0.0, mean - margin)), min(1.0, max(0.0, mean + margin)), stddev)


class TrialScore(NamedTuple):
    score: float
    verdict: str
    details: dict[str, Any]


def aggregate_trials(scores: Sequence[float], strategy: str = "pass_at_k",
                     verdicts: Sequence[str] | None = None) -> TrialScore:
    """Combine the scores of repeated runs of one test by `strategy` (AgentV's aggregateTrials)."""
    if strategy == "pass_at_k":
        passed = sum(1 for k, s in enumerate(scores) if (verdicts[k] if verdicts else verdict(s)) == "pass")
        best = pass_at_k(scores)
        return TrialScore(best, verdict(best), {"strategy": strategy, "passed_attempts": passed,
                                                "total_attempts": len(scores)})
    if strategy == "mean":
        mean = mean_score(scores)
        return TrialScore(mean, verdict(mean), {"strategy": strategy, "mean": mean, "min": min(scores),
                                                "max": max(scores)})
    if strategy == "confidence_interval":
        interval = confidence_interval(scores)
        score = interval.lower if len(scores) >= 2 else interval.mean
        return TrialScore(score, verdict(score), {
            "strategy": strategy, "mean": interval.mean, "ci95_lower": interval.lower,
            "ci95_upper": interval.upper, "stddev": interval.stddev})
    raise ValueError(f"unknown trials strategy '{strategy}'; expected one of {', '.join(TRIAL_STRATEGIES)}")


# ---------------------------------------------------------------------------------------------
# Rubrics (the judge's answer, turned into a score)


class RubricScore(NamedTuple):
    score: float
    verdict: str  # a missed required criterion makes it fail: the assertion fails, not the test (AgentV)
    hits: tuple[str, ...]
    misses: tuple[str, ...]
    details: dict[str, Any] | None = None  # score ranges: {raw_scores, normalization, aggregation}
    unassessed: tuple[str, ...] = ()  # criteria the judge did not check: the assertion is then not scored


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _ranges_of(raw: Any) -> Any:
    """AgentV's score_ranges shorthand ({0: "Bad", 5: "OK"} → [{score_range: [0, 4], outcome: "Bad"}, …])."""
    if not isinstance(raw, Mapping) or not raw:
        return raw
    keys: list[int] = []
    for key, value in raw.items():
        try:
            n = float(str(key))
        except ValueError:
            return raw
        if not n.is_integer() or not 0 <= n <= 10 or not isinstance(value, str) or not value:
            return raw
        keys.append(int(n))
    keys.sort()
    return [{"score_range": [k, keys[i + 1] - 1 if i + 1 < len(keys) else 10], "outcome": raw[str(k)]
             if str(k) in raw else raw[k]} for i, k in enumerate(keys)]


def rubric_items(criteria: Sequence[Any]) -> list[dict[str, Any]]:
    """The criteria as AgentV's parseRubricItems reads them: a string is {id: rubric-<n>, outcome,
    required: true}; an object's id defaults to rubric-<n>, weight to 1; a checklist criterion (no
    score_ranges) needs an outcome and is required unless `required: false`; others are dropped."""
    items: list[dict[str, Any]] = []
    for index, raw in enumerate(criteria):
        if isinstance(raw, str):
            raw = {"id": f"rubric-{index + 1}", "outcome": raw, "weight": 1.0, "required": True}
        if not isinstance(raw, Mapping):
            continue
        rid = raw.get("id") if isinstance(raw.get("id"), str) else f"rubric-{index + 1}"
        outcome = raw.get("outcome") if isinstance(raw.get("outcome"), str) else ""
        weight = raw.get("weight")
        item: dict[str, Any] = {"id": rid, "weight": float(weight) if isinstance(weight, int | float)
                                and not isinstance(weight, bool) else 1.0}
        required = raw.get("required") if isinstance(raw.get("required"), bool) else None
        minimum = raw.get("required_min_score")
        if isinstance(minimum, int | float) and not isinstance(minimum, bool):
            item["required_min_score"] = minimum
        ranges = raw.get("score_ranges")
        if ranges is not None:
            if outcome:
                item["outcome"] = outcome
            if required is not None:
                item["required"] = required
            item["score_ranges"] = _ranges_of(ranges)
        else:
            if not outcome:
                continue
            item["outcome"] = outcome
            item["required"] = True if required is None else required
        items.append(item)
    return items


def _weight(criterion: Any) -> float:
    weight = _get(criterion, "weight", 1.0)
    return 1.0 if weight is None else float(weight)


def score_checklist(criteria: Sequence[Any], checks: Iterable[Any]) -> RubricScore:
    """Checklist rubrics, as AgentV's calculateRubricScore: the judge's checks in its order (an unknown
    id is skipped, a repeated one counts again); score = satisfied weight / weight checked; a missed
    required criterion makes the verdict fail.

    Ours: criteria the judge did not check at all are returned in `unassessed` and the caller does not
    score the assertion (AgentV drops them from the total, a score made without those checks)."""
    by_id = {_get(c, "id"): c for c in criteria}
    hits: list[str] = []
    misses: list[str] = []
    total = earned = 0.0
    failed_required = False
    seen: set[Any] = set()
    for check in checks:
        criterion = by_id.get(_get(check, "id"))
        if criterion is None:
            continue
        seen.add(_get(criterion, "id"))
        weight = _weight(criterion)
        total += weight
        line = f"[{_get(criterion, 'id')}] {_get(criterion, 'outcome')}: {_get(check, 'reasoning')}"
        if _get(check, "satisfied") is True:
            earned += weight
            hits.append(line)
        else:
            misses.append(line)
            failed_required = failed_required or bool(_get(criterion, "required"))
    score = min(1.0, max(0.0, earned / total)) if total > 0 else 0.0
    return RubricScore(score, "fail" if failed_required else verdict(score), tuple(hits), tuple(misses),
                       unassessed=tuple(str(rid) for rid in by_id if rid not in seen))


def _js_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def score_ranges(criteria: Sequence[Any], checks: Iterable[Any]) -> RubricScore:
    """Score-range rubrics, as AgentV's calculateScoreRangeResult: each check's 0-10 score (clamped) / 10,
    weighted mean over the criteria checked; below `required_min_score` (`required: true`: 10) fails
    the verdict; a score ≥ 7 is a hit. Ours: criteria the judge did not score are `unassessed`, as in
    score_checklist."""
    by_id = {_get(c, "id"): c for c in criteria}
    hits: list[str] = []
    misses: list[str] = []
    raw_scores: dict[str, Any] = {}
    total = weighted = 0.0
    failed_required = False
    seen: set[Any] = set()

    def minimum_of(criterion: Any) -> float | None:
        minimum = _get(criterion, "required_min_score")
        if minimum is not None:
            return float(minimum)
        return 10.0 if _get(criterion, "required") is True else None

    for check in checks:
        criterion = by_id.get(_get(check, "id"))
        if criterion is None:
            continue
        rid = _get(criterion, "id")
        seen.add(rid)
        raw = max(0.0, min(10.0, float(_get(check, "score"))))
        raw_scores[rid] = int(raw) if raw.is_integer() else raw
        weight = _weight(criterion)
        total += weight
        weighted += raw / 10 * weight
        ranges = _get(criterion, "score_ranges") or []
        match = next((r for r in ranges if isinstance(r, Mapping) and isinstance(r.get("score_range"), list)
                      and len(r["score_range"]) == 2 and r["score_range"][0] <= raw <= r["score_range"][1]), None)
        described = match.get("outcome") if match is not None and isinstance(match.get("outcome"), str) else ""
        reasoning = _get(check, "reasoning")
        line = (f"[{rid}] {_get(criterion, 'outcome') or rid} - Score: {_js_number(raw)}/10 ({described})"
                + (f": {reasoning}" if reasoning else ""))
        minimum = minimum_of(criterion)
        if minimum is not None and raw < minimum:
            failed_required = True
            misses.append(line)
        elif raw >= 7:
            hits.append(line)
        else:
            misses.append(line)
    score = min(1.0, max(0.0, weighted / total)) if total > 0 else 0.0
    return RubricScore(score, "fail" if failed_required else verdict(score), tuple(hits), tuple(misses),
                       {"raw_scores": raw_scores, "normalization": "score / 10", "aggregation": "weighted_average"},
                       tuple(str(rid) for rid in by_id if rid not in seen))
