"""`evalspec run --skip-invalid`: run a blueprint's valid prompts and name each one left out.

One mistake in one prompt of fifteen should not stop the other fourteen, but it must not pass silently
either: every prompt with an error is left out of the run and named with its first error. Errors that
belong to no single prompt (the header, the file's structure, its id) cannot be skipped: the run is
refused as without the flag.
"""

from __future__ import annotations

import copy
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from pathlib import Path

from ...analysis import Analysis
from ...findings import Finding, Span
from ...source import Sequence, is_null
from ...weval.model import Blueprint
from ...weval.prompt_store import keep_prompts, prompt_ids


@dataclass(frozen=True)
class SkippedPrompt:
    prompt_id: str | None  # None: the prompt could not be read far enough to have an id
    finding: Finding  # its first error


@dataclass(frozen=True)
class ValidPart:
    blueprint: Blueprint | None  # the prompts without errors; None when nothing can run
    skipped: list[SkippedPrompt]
    blocking: list[Finding]  # errors outside any prompt: these refuse the run


def _inside(span: Span, line: int, col: int) -> bool:
    return (span.start_line, span.start_col) <= (line, col) <= (span.end_line, span.end_col)


class FirstContaining:
    """`next(i for i, span in enumerate(spans) if _inside(span, line, col))`, without a scan per question:
    every error of a file asked it of every prompt (1.4 million broken prompts: 10^12 steps). Spans are
    YAML nodes' (two are nested, disjoint, or the same, an alias's being its anchor's), so the spans
    holding a position form a chain, found from the last span to start at it, or before it, going out."""

    def __init__(self, spans: list[Span]) -> None:
        first: dict[Span, int] = {}
        for i, span in enumerate(spans):
            first.setdefault(span, i)
        # by start, the outer first where two start together
        self._spans = sorted(first, key=lambda s: (s.start_line, s.start_col, -s.end_line, -s.end_col))
        self._starts = [(s.start_line, s.start_col) for s in self._spans]
        self._parent: list[int] = []  # the nearest span around each (its position in _spans), or -1
        self._first: list[int] = []  # the lowest index among a span and all around it
        around: list[int] = []
        for k, span in enumerate(self._spans):
            while around and not _within(span, self._spans[around[-1]]):
                around.pop()
            parent = around[-1] if around else -1
            self._parent.append(parent)
            self._first.append(min(first[span], self._first[parent]) if parent >= 0 else first[span])
            around.append(k)

    def __call__(self, line: int, col: int) -> int | None:
        at = (line, col)
        found: int | None = None
        # the chain from the last span starting at or before the position, and (for one that ends where
        # another starts) from the last starting before it
        for k in (bisect_right(self._starts, at) - 1, bisect_left(self._starts, at) - 1):
            while k >= 0 and not _inside(self._spans[k], line, col):
                k = self._parent[k]
            if k >= 0 and (found is None or self._first[k] < found):
                found = self._first[k]
        return found


def _within(inner: Span, outer: Span) -> bool:
    return (outer.start_line, outer.start_col) <= (inner.start_line, inner.start_col) \
        and (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)


def valid_part(analysis: Analysis) -> ValidPart:
    bp = analysis.blueprint
    mine = Path(analysis.path).resolve() if analysis.path is not None else None
    errors = sorted((f for f in analysis.errors if f.path is None or mine is None or Path(f.path).resolve() == mine),
                    key=lambda f: (f.span.start_line, f.span.start_col))
    if bp is None or analysis.weval is None:
        return ValidPart(None, [], errors)
    header = analysis.weval.header_node
    # Every prompt item of the file, built or not: a prompt too broken to build is still a prompt.
    spans = [p.span for p in bp.prompts]  # read once (a big blueprint's prompts are decoded when read)
    items: list[Span] = list(spans)
    listed = header.get("prompts") if header is not None else None
    if isinstance(listed, Sequence):  # the JSON form: the prompts are a list inside the header
        items += [i.span for i in listed.items]
    for doc in analysis.parsed.documents:
        root = doc.root
        if root is None or is_null(root) or root is header:
            continue
        if isinstance(root, Sequence):
            items += [i.span for i in root.items]
        else:
            items.append(root.span)
    prompt_at, item_at = FirstContaining(spans), FirstContaining(items)
    first_error: dict[int, Finding] = {}  # prompt index → its first error
    unbuilt: dict[tuple[int, int, int, int], Finding] = {}
    blocking: list[Finding] = []
    for f in errors:
        at = (f.span.start_line, f.span.start_col)
        index = prompt_at(*at)
        if index is not None:
            first_error.setdefault(index, f)
            continue
        found = item_at(*at)
        item = items[found] if found is not None else None
        if item is None and header is not None and _inside(header.span, *at):
            blocking.append(f)
            continue
        if item is None:
            # A line of a list no item could be read from (a YAML error inside a prompt of a list) is
            # that prompt's; anything else (the id from the path, an empty file) belongs to no prompt.
            if f.code in ("invalid-blueprint-id", "empty-blueprint", "invalid-structure") or not items:
                blocking.append(f)
                continue
            unbuilt.setdefault((f.span.start_line, f.span.start_line, 0, 0), f)
            continue
        unbuilt.setdefault((item.start_line, item.start_col, item.end_line, item.end_col), f)
    ids = prompt_ids(bp.prompts) if first_error else []
    skipped = [SkippedPrompt(ids[i], f) for i, f in first_error.items()]
    skipped += [SkippedPrompt(None, f) for f in unbuilt.values()]
    skipped.sort(key=lambda s: (s.finding.span.start_line, s.finding.span.start_col))
    valid = keep_prompts(bp.prompts, lambda i, _: i not in first_error)
    if blocking or not valid:
        return ValidPart(None, skipped, blocking)
    part = copy.copy(bp)
    part.prompts = valid  # type: ignore[assignment]  # a list, or a store's subset that reads as one
    return ValidPart(part, skipped, [])
