"""Rubric criteria and their `score_ranges`, scored as AgentV v2.19 scores them.

A criterion is a string (→ `{id: rubric-<i+1>, outcome}`) or `{id, outcome, weight = 1, required,
required_min_score, score_ranges}` (`required` is true by default without score_ranges, as AgentV's). `score_ranges` is a list of `{score_range: [min, max], outcome}`
or the shorthand map `{0: Bad, 3: OK, 7: Good, 10: Top}` → [0,2], [3,6], [7,9], [10,10]. Ranges use
integers 0–10, min ≤ max, must not overlap and must cover every score 0–10.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..findings import Related, Span
from ..source import Mapping, Node, Scalar, Sequence, is_number, node_type_name
from .context import Context


def check_criteria(ctx: Context, node: Node | None, key: Scalar | None, *, owner: str,
                   strings: bool = True) -> list[dict[str, Any]]:
    """Rubric criteria from a list node, normalized; reports problems. `owner` names the field for messages.
    `strings`: a string is shorthand for a criterion (a `rubrics` assertion's `criteria`, a test's `rubrics`);
    without it (the `rubrics` of an llm-judge, agent-judge or `type: rubric`) AgentV skips a string ("invalid
    rubric entry … (expected object)"), a criterion left out: an error."""
    if node is None or not isinstance(node, Sequence) or not node.items:
        where = node.span if node is not None else (key.span if key else Span(0, 0, 0, 0))
        if node is None or isinstance(node, Sequence):
            return []  # the caller reports a missing or empty list in its own words
        ctx.out.error("wrong-type", where, f"'{owner}' must be a list of criteria (strings or "
                      f"{{id, outcome, weight, required}}); found {node_type_name(node)}.")
        return []
    criteria: list[dict[str, Any]] = []
    ids: dict[str, Span] = {}
    for i, item in enumerate(node.items):
        text = ctx.str_of(item)
        if text is not None and not strings:
            ctx.out.error("wrong-type", item.span, f"AgentV skips a string in this '{owner}' list (it expects "
                          f"{{id, outcome}}; only a rubrics assertion's criteria take strings): write "
                          f"{{id: rubric-{i + 1}, outcome: …}}.")
            continue
        if text is not None:
            if not text.strip():
                ctx.out.warning("empty-criterion", item.span, "Empty rubric criterion; AgentV ignores it.")
                continue
            criteria.append({"id": f"rubric-{i + 1}", "outcome": text, "weight": 1.0, "required": True})
            continue
        if not isinstance(item, Mapping):
            ctx.out.error("wrong-type", item.span, "A rubric criterion must be a string or "
                          f"{{id, outcome, weight, required}}; found {node_type_name(item)}.")
            continue
        entries = ctx.object(item, "rubric_criterion", handled=("score_ranges",))
        if entries is None:
            continue
        crit: dict[str, Any] = {"id": ctx.str_of(entries.get("id")) or f"rubric-{i + 1}"}
        outcome = ctx.str_of(entries.get("outcome"))
        ranges_node = entries.get("score_ranges")
        if outcome:
            crit["outcome"] = outcome
        elif ranges_node is None:
            # On the key when there is one; an empty criterion `{}` has none, so on the braces.
            outcome_key = entries.key("outcome")
            span = outcome_key.span if outcome_key else item.pairs[0][0].span if item.pairs else item.span
            ctx.out.error("missing-outcome", span,
                          "A rubric criterion needs an 'outcome' (what the answer must do) or 'score_ranges'.")
        weight = ctx.values.value(entries.get("weight"))
        crit["weight"] = float(weight) if is_number(entries.get("weight")) else 1.0
        required = ctx.values.value(entries.get("required"))
        if isinstance(required, bool):
            crit["required"] = required
        elif ranges_node is None:  # AgentV: a checklist criterion is required unless told; a scored one is not
            crit["required"] = True
        min_score = entries.get("required_min_score")
        if is_number(min_score):
            crit["required_min_score"] = ctx.values.value(min_score)
        if ranges_node is not None:
            crit["score_ranges"] = check_score_ranges(ctx, ranges_node, entries.key("score_ranges"))
        id_node = entries.get("id")
        if id_node is not None and isinstance(crit["id"], str):
            first = ids.get(crit["id"])
            if first is not None:
                ctx.out.warning("duplicate-rubric-id", id_node.span,
                                f"Duplicate rubric criterion id '{crit['id']}'; the judge's verdicts are "
                                "matched by id.", related=(Related(first, "first used here"),))
            else:
                ids[crit["id"]] = id_node.span
        criteria.append(crit)
    return criteria


def check_score_ranges(ctx: Context, node: Node, key: Scalar | None) -> list[dict[str, Any]]:
    """The ranges as `[{score_range: [min, max], outcome}]`, sorted; reports every rule broken."""
    if isinstance(node, Mapping):
        return _shorthand(ctx, node, key)
    if not isinstance(node, Sequence):
        ctx.out.error("wrong-type", node.span, "'score_ranges' must be a list of {score_range: [min, max], "
                      "outcome} or a map like {0: Bad, 5: OK, 10: Great}; found " + node_type_name(node) + ".")
        return []
    ranges: list[tuple[int, int, str, Span]] = []
    for item in node.items:
        entries = ctx.object(item, "score_range", handled=("score_range", "outcome"),
                             missing={"score_range": ("invalid-score-range", "A score range needs "
                                                      "'score_range: [min, max]'."),
                                      "outcome": ("missing-outcome", "A score range needs an 'outcome'.")})
        if entries is None:
            continue
        outcome = ctx.str_of(entries.get("outcome"))
        if entries.get("outcome") is not None and not (outcome and outcome.strip()):
            ctx.out.error("missing-outcome", entries.get("outcome").span,  # type: ignore[union-attr]
                          "A score range's 'outcome' must be a non-empty string.")
        bounds = entries.get("score_range")
        if bounds is None:
            continue
        pair = _bounds(ctx, bounds)
        if pair is not None:
            ranges.append((pair[0], pair[1], outcome or "", bounds.span))
    _overlaps_and_gaps(ctx, ranges, key.span if key else node.span)
    return [{"score_range": [lo, hi], "outcome": text} for lo, hi, text, _ in sorted(ranges)]


def _bounds(ctx: Context, node: Node) -> tuple[int, int] | None:
    if not isinstance(node, Sequence) or len(node.items) != 2:
        ctx.out.error("invalid-score-range", node.span,
                      "'score_range' must be [min, max]: two integers from 0 to 10.")
        return None
    values: list[int] = []
    for item in node.items:
        v: Any = item.value if isinstance(item, Scalar) else None  # a number once is_number(item) holds
        if not is_number(item) or not float(v).is_integer() or not 0 <= v <= 10:
            shown = item.raw if isinstance(item, Scalar) else node_type_name(item)
            ctx.out.error("invalid-score-range", item.span,
                          f"Score range bounds must be integers from 0 to 10; found {shown}.")
            return None
        values.append(int(v))
    lo, hi = values
    if lo > hi:
        ctx.out.error("invalid-score-range", node.span, f"Score range [{lo}, {hi}]: min must not exceed max.")
        return None
    return lo, hi


def _shorthand(ctx: Context, node: Mapping, key: Scalar | None) -> list[dict[str, Any]]:
    starts: list[tuple[int, str, Span]] = []
    seen: dict[int, Span] = {}
    for k, v in node.pairs:
        raw = k.value if isinstance(k, Scalar) else None
        if isinstance(raw, str) and raw.strip().isdigit():
            raw = int(raw.strip())
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not float(raw).is_integer() \
                or not 0 <= raw <= 10:
            shown = k.raw if isinstance(k, Scalar) else node_type_name(k)
            ctx.out.error("invalid-score-range", k.span,
                          f"score_ranges keys must be integers from 0 to 10; found '{shown}'.")
            continue
        score = int(raw)
        if score in seen:
            ctx.out.error("score-ranges-overlap", k.span, f"Score {score} is listed twice in score_ranges.",
                          related=(Related(seen[score], "first listed here"),))
            continue
        seen[score] = k.span
        text = ctx.str_of(v)
        if not (text and text.strip()):
            ctx.out.error("missing-outcome", v.span if v is not None else k.span,
                          f"Score {score} needs a description (its outcome).")
        starts.append((score, text or "", k.span))
    if not starts:
        return []
    starts.sort()
    if starts[0][0] != 0:
        ctx.out.error("invalid-score-range", starts[0][2],
                      f"score_ranges must start at 0; the lowest key is {starts[0][0]}, so scores "
                      f"0–{starts[0][0] - 1} have no description.")
    ranges = []
    for i, (lo, text, _) in enumerate(starts):
        hi = starts[i + 1][0] - 1 if i + 1 < len(starts) else 10
        ranges.append({"score_range": [lo, hi], "outcome": text})
    return ranges


def _overlaps_and_gaps(ctx: Context, ranges: list[tuple[int, int, str, Span]], where: Span) -> None:
    if not ranges:
        return
    ordered = sorted(ranges, key=lambda r: (r[0], r[1]))
    for prev, cur in itertools.pairwise(ordered):
        if cur[0] <= prev[1]:
            ctx.out.error("score-ranges-overlap", cur[3],
                          f"Score range [{cur[0]}, {cur[1]}] overlaps [{prev[0]}, {prev[1]}].",
                          related=(Related(prev[3], "the other range"),))
    covered: set[int] = set()
    for lo, hi, _, _ in ranges:
        covered.update(range(lo, hi + 1))
    missing = [s for s in range(11) if s not in covered]
    if missing:
        ctx.out.error("score-ranges-gap", where,
                      f"score_ranges must cover every score from 0 to 10; not covered: {_runs(missing)}.")


def _runs(values: list[int]) -> str:
    parts: list[str] = []
    start = prev = values[0]
    for v in [*values[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(parts)
