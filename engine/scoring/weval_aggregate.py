"""Weval llm-coverage scoring: judge answers, consensus, OR-paths, and JavaScript rounding.

Follows the reference (weval-org/app: llm-coverage-evaluator.ts, coverage-logic.ts) to the last bit:
its order of additions in doubles and `toFixed(2)`. The one difference (docs/reference-differences.md):
a response none of whose points could be scored has no score (None), where the reference gives it 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, NamedTuple

from ..providers.redact import clip
from .tagged_text import first_tagged

# The judge's 10-class scale (the reference's "experimental" scale, CLASS_ prefix).
CLASSIFICATION_SCORES: dict[str, float] = {
    "CLASS_UTTERLY_UNMET": 0.0,
    "CLASS_UNMET": 0.001,
    "CLASS_TRACE": 0.125,
    "CLASS_SLIGHT": 0.25,
    "CLASS_PARTIAL": 0.375,
    "CLASS_MODERATE": 0.5,
    "CLASS_SUBSTANTIAL": 0.625,
    "CLASS_MAJOR": 0.75,
    "CLASS_VERY_NEARLY": 0.875,
    "CLASS_EXACT": 1.0,
}

ALL_JUDGES_FAILED = "All judges failed in consensus mode."
INVERTED_PREFIX = "[INVERTED] "



class JudgeAnswerError(ValueError):
    """The judge's answer has no usable classification; the judge counts as failed for this point."""


class JudgeAnswer(NamedTuple):
    score: float
    classification: str  # canonical, e.g. "CLASS_MAJOR"
    reflection: str | None


def parse_judge_answer(text: str) -> JudgeAnswer:
    """Read `<reflection>…</reflection><classification>…</classification>`.

    Like the reference: the class name is trimmed and uppercased and CLASS_ is optional. Ours is a
    little more forgiving: the tags may be in any case, the reflection may be missing, and an answer
    that is nothing but a class name is accepted.
    """
    if not isinstance(text, str) or not text.strip():
        raise JudgeAnswerError("Empty response")
    tag = first_tagged(text, "classification")
    raw = tag if tag is not None else text
    name = raw.strip().upper().replace(" ", "_")
    if tag is None and not re.fullmatch(r"(CLASS_)?[A-Z_]+", name):
        raise JudgeAnswerError(f"Failed to parse XML: no <classification> tag. Response: {clip(text, 100)}...")
    canonical = name if name.startswith("CLASS_") else f"CLASS_{name}"
    if canonical not in CLASSIFICATION_SCORES:
        raise JudgeAnswerError(f"Invalid classification value: '{raw.strip()}'")
    reflection = first_tagged(text, "reflection")
    return JudgeAnswer(CLASSIFICATION_SCORES[canonical], canonical,
                       reflection.strip() if reflection is not None else None)


def consensus(scores: Iterable[float | None], digits: int | None = 2) -> float | None:
    """Mean of the judges that succeeded (None = failed); None when all failed.

    The reference stores `parseFloat(avg.toFixed(2))`, so by default the mean is rounded the same way;
    pass digits=None for the exact mean.
    """
    ok = [s for s in scores if s is not None]
    if not ok:
        return None
    total = 0.0
    for s in ok:  # added left to right, as the reference's reduce does
        total += s
    mean = total / len(ok)
    return mean if digits is None else js_to_fixed(mean, digits)


def consensus_judge_id(judge_ids: Sequence[str]) -> str:
    """`consensus(a, b, c)`: the judgeModelId of a consensus score."""
    return f"consensus({', '.join(judge_ids)})"


def invert(score: float | None) -> float | None:
    """`should_not`: a point met is a fault. score → 1 − score (None stays None)."""
    return None if score is None else 1.0 - score


def inverted_reflection(reflection: str | None) -> str | None:
    return None if reflection is None else INVERTED_PREFIX + reflection


def path_id(index: int) -> str:
    """The pathId of the alternative path at position `index` in its block."""
    return f"path_{index}"


# ---------------------------------------------------------------------------------------------
# JavaScript number rounding


def _js_math_round(x: float) -> float:
    """`Math.round`: the nearest integer, ties toward +∞ (not Python's round-half-even)."""
    if not math.isfinite(x):
        return x
    floor = math.floor(x)
    return float(floor + 1) if x - floor >= 0.5 else float(floor)  # x - floor is exact for doubles


def js_round(x: float, digits: int = 2) -> float:
    """`Math.round(x * 10**digits) / 10**digits`, in IEEE doubles exactly as JavaScript computes it.

    0.125 → 0.13 (Python's round gives 0.12), and 1.005 → 1 (1.005 * 100 is 100.49999999999999).
    """
    scale = float(10**digits)
    return _js_math_round(x * scale) / scale


def js_to_fixed(x: float, digits: int = 2) -> float:
    """`parseFloat(x.toFixed(digits))`: rounds the exact binary value, ties away from zero.

    This is what the reference uses for avgCoverageExtent and consensus. It differs from js_round
    where x * 100 rounds up to a tie: 1.115 → 1.11 here but 1.12 with Math.round.
    """
    if digits >= 2 and -1e15 < x < 1e15 and (x * 4).is_integer():
        return x  # a whole number or a quarter (most scores): exact in binary and in two decimals
    if not math.isfinite(x):
        return x
    quantum = Decimal(1).scaleb(-digits)
    return float(Decimal(x).quantize(quantum, rounding=ROUND_HALF_UP))


# ---------------------------------------------------------------------------------------------
# Aggregation with alternative paths


class CoveragePoint(NamedTuple):
    score: float | None  # None: excluded (error, or all judges failed)
    weight: float = 1.0
    path_id: str | None = None  # None: a required point; "path_k": part of alternative path k


def _fields(point: Any) -> tuple[float | None, float, str | None]:
    if isinstance(point, tuple) and not hasattr(point, "score"):
        score = point[0]
        weight = point[1] if len(point) > 1 else 1.0
        path = point[2] if len(point) > 2 else None
    else:
        score, weight, path = point.score, getattr(point, "weight", 1.0), getattr(point, "path_id", None)
    return score, 1.0 if weight is None else float(weight), path or None


def _weighted_average(items: list[tuple[float | None, float]]) -> float:
    """calculateWeightedAverage: `score × multiplier` added left to right in doubles, as JavaScript does;
    a point without a score is skipped; 0 when none has one."""
    total = 0.0
    weights = 0.0
    for score, weight in items:
        if score is not None:
            total += score * weight
            weights += weight
    return 0.0 if weights == 0 else total / weights


def aggregate_coverage(points: Iterable[Any]) -> float | None:
    """The coverage score of one response: the reference's aggregateCoverageScores, to the last bit.

    Points are CoveragePoint or (score, weight, path_id) tuples or objects with those attributes, in the
    reference's order (function points, then judged points: `reference_order`). required = weighted
    average of the points without a path; each path its weighted average; best = max over paths;
    final = (required + best) / 2 when both exist, else whichever exists. As in the reference, a group
    whose points all failed counts as 0. Ours: nothing scored at all (no point, or every point failed)
    gives None, not the reference's 0 (a check not made is never a score).
    """
    required: list[tuple[float | None, float]] = []
    paths: dict[str, list[tuple[float | None, float]]] = {}
    scored = False
    for point in points:
        score, weight, path = _fields(point)
        if score is not None:
            score = float(score)
            scored = True
        if path and path.strip():
            paths.setdefault(path, []).append((score, weight))
        else:
            required.append((score, weight))
    if not scored:
        return None
    groups: list[float] = []
    if required:
        groups.append(_weighted_average(required))
    if paths:
        groups.append(max(_weighted_average(items) for items in paths.values()))
    total = 0.0
    for g in groups:
        total += g
    return total / len(groups)


def reference_order(assessments: list[dict[str, Any]], function_first: Sequence[bool]) -> list[dict[str, Any]]:
    """The assessments in the reference's order: its evaluator scores the function points, then the
    judged ones, and aggregates (and writes) them in that order."""
    return ([a for a, fn in zip(assessments, function_first, strict=True) if fn]
            + [a for a, fn in zip(assessments, function_first, strict=True) if not fn])


def avg_coverage_extent(points: Iterable[Any]) -> float | None:
    """aggregate_coverage rounded as the reference stores it (`toFixed(2)`)."""
    score = aggregate_coverage(points)
    return None if score is None else js_to_fixed(score, 2)
