"""Inlay hints: what a file will mean at run time, written beside the text it comes from.

`inlay_hints(analysis, first_line, end_line)` returns `InlayHint`s (position in code points, label,
tooltip) for the lines in [first_line, end_line):

- a Weval prompt without `id`: the generated id (`hash-…`) its results will carry, at the end of its
  first line (the model's `Prompt.id`, which engine/weval/ids.py computes as the reference does);
- each point's share of its prompt's score, as the scorer combines them
  (scoring/weval_aggregate.aggregate_coverage): points outside a path are one weighted mean, the
  alternative paths (grouped by path id over `should` and `should_not`, as the scorer groups them)
  another, taken at their best; both present, each is half. A path gets one share (on its `- `), its
  points their share of the path;
- an AgentV assertion's share of its test's score (weights over the test's assertions, the suite's
  defaults included: scoring/agentv_aggregate.aggregate_test) and its `required` gate;
- a model collection's size (`· 12 models`) after its name in `models:`.

Plain data; the server converts positions and labels to LSP.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..detect import FileKind
from ..findings import Span
from ..source import Mapping, Node, Sequence
from .layout import layout

ID, SHARE, GATE, SIZE = "id", "share", "gate", "size"


@dataclass(frozen=True, slots=True)
class InlayHint:
    line: int
    col: int  # code points
    label: str
    kind: str  # ID | SHARE | GATE | SIZE
    tooltip: str = ""
    pad_left: bool = False
    pad_right: bool = False


def percent(fraction: float) -> str:
    """`25 %`, `33.3 %`, `0.1 %`: one decimal where the share is not whole, never rounded to 0 or 100
    when it is not exactly that."""
    value = fraction * 100
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    if text in ("0", "0.0") and value > 0:
        text = "<0.1"
    elif text == "100" and value < 100:
        text = ">99.9"
    return f"{text} %"


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def inlay_hints(analysis: Any, first_line: int = 0, end_line: int | None = None) -> list[InlayHint]:
    """The hints whose position lies on a line in [first_line, end_line) (None: to the end)."""
    if analysis.parsed.too_large:
        return []
    end = len(analysis.parsed.lines) if end_line is None else end_line
    if analysis.kind is FileKind.WEVAL and analysis.blueprint is not None:
        out = _weval(analysis, first_line, end)
    elif analysis.kind is FileKind.AGENTV and analysis.suite is not None:
        out = _agentv(analysis, first_line, end)
    else:
        return []
    return sorted((h for h in out if first_line <= h.line < end), key=lambda h: (h.line, h.col))


# --- Weval ------------------------------------------------------------------------------------------


def _weval(analysis: Any, first: int, end: int) -> list[InlayHint]:
    bp = analysis.blueprint
    lines: list[str] = analysis.parsed.lines
    out: list[InlayHint] = []
    out += _collections(analysis, first, end)
    lay = layout(analysis)
    starts = lay.prompt_starts
    # The prompts that may have a line in range: from the last one starting at or before `first`.
    lo = max(0, bisect_right(starts, first) - 1)
    hi = bisect_left(starts, end)
    for i in range(lo, min(hi, len(bp.prompts), len(lay.prompt_nodes))):
        node: Node = lay.prompt_nodes[i]
        prompt = bp.prompts[i]
        if prompt.span != node.span:
            continue  # the model and the tree disagree (an edit in flight): nothing rather than wrong
        if prompt.id_generated:
            line = node.span.start_line
            out.append(InlayHint(line, len(lines[line].rstrip("\r")), f"id: {prompt.id}", ID,
                                 "The id this prompt's results will carry: a hash of its content, which changes "
                                 "whenever the prompt does. Add `id:` to keep results comparable across edits.",
                                 pad_left=True))
        out += point_shares(prompt.points, _path_spans(node))
    return out


def point_shares(points: list[Any], path_spans: dict[Span, Span]) -> list[InlayHint]:
    """Each point's share of the prompt's score; a path's share on the path (`path_spans`: the span of a
    point in a path → the span of its path's list)."""
    required = [p for p in points if p.path_id is None]
    paths: dict[str, list[Any]] = {}
    for p in points:
        if p.path_id is not None:
            paths.setdefault(p.path_id, []).append(p)
    groups = (1 if required else 0) + (1 if paths else 0)
    if groups == 0:
        return []
    out: list[InlayHint] = []
    total = math.fsum(p.weight for p in required)
    half = " (half of the score: the other half is the best alternative path)" if paths else ""
    for p in required:
        share = (p.weight / total if total else 0.0) / groups
        tip = (f"Weight {_number(p.weight)} of {_number(total)} among the points outside the alternative "
               f"paths{half}.")
        if p.inverted:
            tip += " A `should_not` point: met is a fault (scored 1 − met)."
        out.append(InlayHint(p.span.start_line, p.span.start_col, percent(share), SHARE, tip, pad_right=True))
    n = len(paths)
    for members in paths.values():
        path_share = 1.0 / groups
        rest = " (half of the score: the other half is the points outside the paths)" if required else ""
        lists = list(dict.fromkeys(s for s in (path_spans.get(p.span) for p in members) if s is not None))
        joined = (" Its points under `should` and `should_not` form one path: the scorer groups paths by their "
                  "position in each list." if len(lists) > 1 else "")
        for seq in lists:
            out.append(InlayHint(seq.start_line, seq.start_col, f"path {percent(path_share)}", SHARE,
                                 f"An alternative path: the best of the {n} path{'s' if n != 1 else ''} counts, "
                                 f"as {percent(path_share)} of the score{rest}.{joined}", pad_right=True))
        if len(members) < 2:
            continue
        inner = math.fsum(p.weight for p in members)
        for p in members:
            share = p.weight / inner if inner else 0.0
            out.append(InlayHint(p.span.start_line, p.span.start_col, f"{percent(share)} of path", SHARE,
                                 f"Weight {_number(p.weight)} of {_number(inner)} within its path.", pad_right=True))
    return out


def _path_spans(prompt: Node) -> dict[Span, Span]:
    """Each point span inside an alternative path (a list item that is a list) → the path's span."""
    out: dict[Span, Span] = {}
    if not isinstance(prompt, Mapping):
        return out
    for _, value in prompt.items():
        if not isinstance(value, Sequence):
            continue
        for item in value.items:
            if isinstance(item, Sequence):
                for member in item.items:
                    out[member.span] = item.span
    return out


def _collections(analysis: Any, first: int, end: int) -> list[InlayHint]:
    bp = analysis.blueprint
    collections: dict[str, list[str]] = analysis.weval.collections or {}
    out: list[InlayHint] = []
    for ref in bp.models:
        if not ref.collection or not first <= ref.span.end_line < end:
            continue
        models = collections.get(ref.collection)
        if models is None:
            continue  # not found: the checker says so
        unique = list(dict.fromkeys(models))
        n = len(unique)
        shown = ", ".join(unique[:20]) + (f", … ({n - 20} more)" if n > 20 else "")
        out.append(InlayHint(ref.span.end_line, ref.span.end_col, f"· {n} model{'s' if n != 1 else ''}", SIZE,
                             f"The collection {ref.collection}: {shown}", pad_left=True))
    return out


# --- AgentV -----------------------------------------------------------------------------------------


def _agentv(analysis: Any, first: int, end: int) -> list[InlayHint]:
    suite = analysis.suite
    here: Path | None = analysis.path
    out: list[InlayHint] = []
    for test in suite.tests:
        if test.source_path is not None and here is not None and Path(test.source_path) != here:
            continue
        if test.span.end_line < first or test.span.start_line >= end:
            continue
        asserts = test.assertions
        total = math.fsum(a.weight for a in asserts)
        own = sum(1 for a in asserts if _own_assertion(a, test))
        for a in asserts:
            if not _own_assertion(a, test):
                continue  # the suite's defaults: their share differs per test
            share = a.weight / total if total else 0.0
            tip = (f"Weight {_number(a.weight)} of {_number(total)} over the test's {len(asserts)} assertion"
                   f"{'s' if len(asserts) != 1 else ''}" + (" (the suite's defaults included)"
                                                             if len(asserts) > own else "") + ".")
            label = percent(share)
            threshold = a.threshold
            if threshold is not None:
                label += f" · gate ≥ {_number(threshold)}"
                tip += (f" Required: a score below {_number(threshold)} makes the whole test 0 and fail, "
                        "whatever the other assertions score.")
            out.append(InlayHint(a.span.start_line, a.span.start_col, label,
                                 GATE if threshold is not None else SHARE, tip, pad_right=True))
    return out


def _in(inner: Span, outer: Span) -> bool:
    return (outer.start_line, outer.start_col) <= (inner.start_line, inner.start_col) and \
        (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)


def _own_assertion(a: Any, test: Any) -> bool:
    """Written in the test itself (not one of the suite's defaults)."""
    if a.source_path is not None and test.source_path is not None and Path(a.source_path) != Path(test.source_path):
        return False
    return _in(a.span, test.span)
