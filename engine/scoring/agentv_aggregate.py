"""AgentV scoring: verdicts, required gates, weighted test scores, trials, rubric scores (composite: composite.py).

Follows AgentV v2.19's scoring. Inner weights (rubric criteria, composite
children) are combined here separately from the outer weights of a test's assertions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

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
    """`negate` for any scored assertion (including judged ones): (1 − score, negated verdict)."""
    return 1.0 - score, negate_verdict(result_verdict)


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


def aggregate_test(items: Iterable[Any]) -> GatedScore:
    """A test's score from its assertions' (score, weight, required).

    Required gates first: any required item below its threshold (true → 0.8, a number → itself)
    makes the test 0 and fail. Otherwise the weighted mean (total weight 0 → 0).
    """
    parsed = [_item(item) for item in items]
    failed = tuple(k for k, (score, _, required) in enumerate(parsed)
                   if (threshold := gate_threshold(required)) is not None and score < threshold)
    if failed:
        return GatedScore(0.0, "fail", failed)
    total = math.fsum(weight for _, weight, _ in parsed)
    score = 0.0 if total == 0 else math.fsum(s * w for s, w, _ in parsed) / total
    return GatedScore(score, verdict(score))


class Outcome(NamedTuple):
    """A test's score and verdict when some assertions may not have been scored."""

    score: float | None  # None: not scored (or fails on a check whose score is unknown)
    verdict: str  # pass | borderline | fail | "not scored"
    failed_gates: tuple[int, ...] = ()
    not_scored: tuple[int, ...] = ()  # indices of the items that were not scored


def outcome_of(items: Sequence[tuple[float | None, float, bool | float | None, bool]]) -> Outcome:
    """A test's outcome from its assertions' (score or None, weight, required, fails_test).

    A check that was not made is never a pass: a scored gate below its threshold makes the test 0 and
    fail, as in aggregate_test; otherwise any assertion not scored (score None) makes the test "not
    scored" — its score would need that assertion's — unless an assertion already fails the test
    (`fails_test`: a missed required rubric criterion), which fails it whatever the rest scores.
    With everything scored: the weighted mean, and fail when an assertion fails the test.
    """
    missing = tuple(k for k, item in enumerate(items) if item[0] is None)
    scored = [(k, item) for k, item in enumerate(items) if item[0] is not None]
    failed = tuple(k for k, (score, _, required, _) in scored
                   if (threshold := gate_threshold(required)) is not None and float(score) < threshold)  # type: ignore[arg-type]
    if failed:
        return Outcome(0.0, "fail", failed, missing)
    fails = any(item[3] for _, item in scored)
    if missing:
        return Outcome(None, "fail" if fails else NOT_SCORED, (), missing)
    agg = aggregate_test((score, weight, required) for _, (score, weight, required, _) in scored)
    return Outcome(agg.score, "fail" if fails else agg.verdict)


# ---------------------------------------------------------------------------------------------
# Trials


def pass_at_k(scores: Sequence[float]) -> float:
    """The best trial's score."""
    if not scores:
        raise ValueError("no trial scores")
    return max(scores)


def mean_score(scores: Sequence[float]) -> float:
    if not scores:
        raise ValueError("no trial scores")
    return math.fsum(scores) / len(scores)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the regularized incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                          -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t (bisection on the CDF; no SciPy needed)."""
    if not 0 < p < 1 or df <= 0:
        raise ValueError("need 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while student_t_cdf(high, df) < p:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if student_t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return (low + high) / 2


def t_critical_95(df: int) -> float:
    """Two-sided 95% critical value t(0.975, df): 12.706 for df=1, 2.228 for 10, → 1.96."""
    return t_quantile(0.975, df)


class TrialInterval(NamedTuple):
    mean: float
    lower: float
    upper: float
    stddev: float


def confidence_interval(scores: Sequence[float]) -> TrialInterval:
    """The 95% t-interval of the mean trial score, clamped to [0, 1].

    With one trial the interval is just the mean. (AgentV uses a 3-decimal t table and z = 1.96 from
    df = 30 on; this computes the exact quantile, so bounds can differ in the fourth decimal, or by
    up to ~4% of the margin for 31+ trials.)
    """
    n = len(scores)
    mean = mean_score(scores)
    if n < 2:
        clamped = min(1.0, max(0.0, mean))
        return TrialInterval(mean, clamped, clamped, 0.0)
    stddev = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / (n - 1))
    margin = t_critical_95(n - 1) * stddev / math.sqrt(n)
    return TrialInterval(mean, min(1.0, max(0.0, mean - margin)), min(1.0, max(0.0, mean + margin)), stddev)


class TrialScore(NamedTuple):
    score: float
    verdict: str
    details: dict[str, Any]


def aggregate_trials(scores: Sequence[float], strategy: str = "pass_at_k",
                     verdicts: Sequence[str] | None = None) -> TrialScore:
    """Combine the scores of repeated runs of one test by `strategy`."""
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
        return TrialScore(interval.lower, verdict(interval.lower), {
            "strategy": strategy, "mean": interval.mean, "ci95_lower": interval.lower,
            "ci95_upper": interval.upper, "stddev": interval.stddev})
    raise ValueError(f"unknown trials strategy '{strategy}'; expected one of {', '.join(TRIAL_STRATEGIES)}")


# ---------------------------------------------------------------------------------------------
# Rubrics (the judge's answer, turned into a score)


class RubricScore(NamedTuple):
    score: float
    verdict: str
    hits: tuple[str, ...]
    misses: tuple[str, ...]
    failed_required: bool = False  # a required criterion was missed: the test fails, as in AgentV


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _criterion_label(criterion: Any) -> str:
    outcome = _get(criterion, "outcome") or _get(criterion, "expected_outcome") or _get(criterion, "description")
    return f"[{_get(criterion, 'id')}] {outcome}" if outcome else f"[{_get(criterion, 'id')}]"


def _checks_by_id(checks: Iterable[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for check in checks:
        key = _get(check, "id")
        if isinstance(key, str):
            found.setdefault(key, check)
    return found


def _weight(criterion: Any) -> float:
    weight = _get(criterion, "weight", 1.0)
    return 1.0 if weight is None else float(weight)


def score_checklist(criteria: Sequence[Any], checks: Iterable[Any]) -> RubricScore:
    """Checklist rubrics: score = satisfied weight / total weight; a missed required criterion fails.

    `criteria`: {id, outcome, weight = 1, required = true}; `checks`: the judge's {id, satisfied,
    reasoning}. A criterion the judge did not report counts as not satisfied (AgentV would drop it
    from the total), so an incomplete judge answer cannot raise the score.
    """
    by_id = _checks_by_id(checks)
    hits: list[str] = []
    misses: list[str] = []
    total = earned = 0.0
    failed_required = False
    for criterion in criteria:
        weight = _weight(criterion)
        total += weight
        check = by_id.get(_get(criterion, "id"))
        reasoning = _get(check, "reasoning") if check is not None else "not assessed by the judge"
        line = f"{_criterion_label(criterion)}: {reasoning}" if reasoning else _criterion_label(criterion)
        if check is not None and _get(check, "satisfied") is True:
            earned += weight
            hits.append(line)
        else:
            misses.append(line)
            failed_required = failed_required or _get(criterion, "required", True) is not False
    score = 0.0 if total <= 0 else min(1.0, max(0.0, earned / total))
    return RubricScore(score, "fail" if failed_required else verdict(score), tuple(hits), tuple(misses),
                       failed_required)


def score_ranges(criteria: Sequence[Any], checks: Iterable[Any]) -> RubricScore:
    """Score-range rubrics: each criterion scored 0-10; score = weighted mean of s / 10; a criterion
    below its `required_min_score` fails the verdict. An unreported criterion scores 0."""
    by_id = _checks_by_id(checks)
    hits: list[str] = []
    misses: list[str] = []
    total = weighted = 0.0
    failed_required = False
    for criterion in criteria:
        weight = _weight(criterion)
        check = by_id.get(_get(criterion, "id"))
        raw = _get(check, "score") if check is not None else None
        value = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw) else 0.0
        value = min(10.0, max(0.0, value))
        total += weight
        weighted += weight * value  # divide by 10 once at the end: 9·2 + 6·1 over 30 is exactly 0.8
        reasoning = _get(check, "reasoning") if check is not None else "not assessed by the judge"
        line = f"{_criterion_label(criterion)} - Score: {value:g}/10" + (f": {reasoning}" if reasoning else "")
        minimum = _get(criterion, "required_min_score")
        if minimum is not None and value < float(minimum):
            failed_required = True
            misses.append(line)
        elif value >= 7:
            hits.append(line)
        else:
            misses.append(line)
    score = 0.0 if total <= 0 else min(1.0, max(0.0, weighted / (10 * total)))
    return RubricScore(score, "fail" if failed_required else verdict(score), tuple(hits), tuple(misses),
                       failed_required)
