"""AgentV's `composite` assertion: its children's results combined by an aggregator (pure part).

The runner scores each child as it would a test's assertion (judges, scripts and nested composites
included) and hands the results here. Inner weights never mix with outer ones: a child's weight
counts only inside its composite; the composite's own `weight` only in the test.

- `weighted_average`: Σ score·w / Σ w, where w is `aggregator.weights[<child name>]`, else 1 (the
  child's own `weight` counts only in a test, as AgentV); total weight 0 → 0. Verdict from the score.
- `threshold`: score = passing children / children, borderline counting as passing; the verdict is
  pass when the score ≥ `threshold` (default 0.5), else fail — never borderline.
- The reasoning is the children's (`<name>: <reasoning>`, joined by "; "), after the threshold's count.
- `llm-judge` and `code-judge` aggregators get the children's results (`results_object`) and return
  a score; those calls are the runner's.

Children's hits and misses are kept, prefixed with the child's name (`[safety] …`), as AgentV does.
A child that was not scored leaves the composite not scored: the aggregate would need its score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .agentv_aggregate import verdict

DEFAULT_THRESHOLD = 0.5
DEFAULT_AGGREGATOR_PROMPT = """Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all evaluator results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail/borderline), and reasoning."""


class Child(NamedTuple):
    name: str
    type: str
    score: float
    verdict: str
    weight: float = 1.0
    hits: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    reasoning: str | None = None


class CompositeScore(NamedTuple):
    score: float
    verdict: str
    hits: tuple[str, ...]
    misses: tuple[str, ...]
    reasoning: str | None = None
    child_weights: tuple[float, ...] | None = None  # the weight each child counted with (weighted_average)


def aggregator_kind(aggregator: Any) -> str:
    """The aggregator's type, normalized (`code_judge` → `code-judge`); weighted_average by default."""
    kind = aggregator.get("type") if isinstance(aggregator, Mapping) else None
    if not isinstance(kind, str) or not kind.strip():
        return "weighted_average"
    kind = kind.strip()
    return kind if kind in ("weighted_average", "threshold") else kind.replace("_", "-")


def _labelled(children: Sequence[Child]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    hits = tuple(f"[{c.name}] {h}" for c in children for h in c.hits)
    misses = tuple(f"[{c.name}] {m}" for c in children for m in c.misses)
    return hits, misses


def _reasons(children: Sequence[Child]) -> list[str]:
    return [f"{c.name}: {c.reasoning}" for c in children if c.reasoning]


def weighted_average(children: Sequence[Child], weights: Mapping[str, Any] | None = None) -> CompositeScore:
    weights = weights if isinstance(weights, Mapping) else {}
    used: list[float] = []
    total = weighted = 0.0
    for c in children:
        w = weights.get(c.name)
        w = float(w) if isinstance(w, int | float) and not isinstance(w, bool) else 1.0
        used.append(w)
        total += w
        weighted += c.score * w
    score = weighted / total if total > 0 else 0.0
    hits, misses = _labelled(children)
    reasons = _reasons(children)
    return CompositeScore(min(1.0, max(0.0, score)), verdict(score), hits, misses,
                          "; ".join(reasons) if reasons else None, tuple(used))


def threshold(children: Sequence[Child], minimum: Any = DEFAULT_THRESHOLD) -> CompositeScore:
    from ..weval.ids import js_number

    bar = float(minimum) if isinstance(minimum, int | float) and not isinstance(minimum, bool) else DEFAULT_THRESHOLD
    passing = sum(1 for c in children if c.verdict in ("pass", "borderline"))
    borderline = sum(1 for c in children if c.verdict == "borderline")
    score = passing / len(children) if children else 0.0
    passed = score >= bar
    hits, misses = _labelled(children)
    reasons = [f"{passing}/{len(children)} evaluators passed (threshold: {js_number(bar)})", *_reasons(children)]
    if passed and borderline:
        reasons.append(f"Warning: {borderline} borderline evaluator(s) counted as passing")
    return CompositeScore(score, "pass" if passed else "fail", hits, misses, "; ".join(reasons))


def results_object(children: Sequence[Child]) -> dict[str, Any]:
    """What an llm-judge or code-judge aggregator reads: each child's result by name."""
    return {c.name: {"type": c.type, "score": c.score, "verdict": c.verdict, "hits": list(c.hits),
                     "misses": list(c.misses), "reasoning": c.reasoning} for c in children}


def aggregator_prompt(aggregator: Mapping[str, Any], children: Sequence[Child]) -> str:
    """The llm-judge aggregator's prompt: `prompt` (inline text) or AgentV's default, with
    {{EVALUATOR_RESULTS_JSON}} replaced by the children's results."""
    from ..jsonio import dumps_indented

    template = aggregator.get("prompt")
    template = template if isinstance(template, str) and template.strip() else DEFAULT_AGGREGATOR_PROMPT
    return template.replace("{{EVALUATOR_RESULTS_JSON}}", dumps_indented(results_object(children)))
