"""What the last runs say about single points and assertions, at their own lines.

`run_notes(analysis, board)`: one note per failed, borderline or unscored point (Weval) or assertion
(AgentV) and per cell with no answer, for every item whose text has not changed since its run, each
on the point's own span with the score, the model and the judge's (or function's) reason. The server
sends them as Information diagnostics; an edit to the item drops them (its fingerprint changes), and
a new run of the item replaces them.

`point_markdown(analysis, board, line)`: hovering a point's line shows its score per model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..detect import FileKind
from ..findings import Span
from ..run.plan.items import fingerprint
from .markdown_text import md_code, md_text, plain
from .runs import CellResult, RunBoard

PASS = 0.8  # below this a point is reported (AgentV's pass threshold, which the run table uses for both)
REASON = 240  # characters of a judge's reason in a note
MAX_NOTES = 2000  # a file with thousands of failures gets the first ones, not a frozen editor

FAILED, NOT_SCORED, NO_ANSWER = "run-point-failed", "run-point-not-scored", "run-no-answer"


@dataclass(frozen=True, slots=True)
class RunNote:
    span: Span
    code: str  # FAILED | NOT_SCORED | NO_ANSWER
    message: str


@dataclass(frozen=True, slots=True)
class _Item:
    item_id: str
    span: Span  # the whole item
    head: Span  # where a note about the whole cell goes: the id, else the first line
    checks: list[tuple[Span, str]]  # each point / assertion: its span and a short label, in result order


def _items(analysis: Any) -> Iterator[_Item]:
    if analysis.kind is FileKind.WEVAL and analysis.blueprint is not None and analysis.weval is not None:
        for prompt, node in zip(analysis.blueprint.prompts, analysis.weval.prompt_nodes, strict=False):
            head = prompt.id_span or Span(node.span.start_line, node.span.start_col,
                                          node.span.start_line, node.span.start_col)
            yield _Item(prompt.id, node.span, head, [(p.span, _point_label(p)) for p in prompt.points])
    elif analysis.kind is FileKind.AGENTV and analysis.suite is not None:
        here = analysis.path
        for test in analysis.suite.tests:
            if test.source_path is not None and here is not None and test.source_path != here:
                continue
            head = test.id_span or test.span
            checks = [(a.span if a.source_path in (None, here) else head, a.name or a.type) for a in test.assertions]
            yield _Item(test.id, test.span, head, checks)


def _point_label(point: Any) -> str:
    if point.kind == "fn":
        return f"${point.fn_written or point.fn}"
    return _short(str(point.text or ""), 60)


def _fresh(board: RunBoard, item: _Item, lines: list[str]) -> bool:
    recorded = board.fingerprints.get(item.item_id)
    return recorded is None or recorded == fingerprint(lines, item.span)


def run_notes(analysis: Any, board: RunBoard) -> list[RunNote]:
    if not board.results:
        return []
    lines: list[str] = analysis.parsed.lines
    out: list[RunNote] = []
    for item in _items(analysis):
        by_model = board.results.get(item.item_id)
        if not by_model or not _fresh(board, item, lines):
            continue
        for cell in by_model.values():
            out += _cell_notes(item, cell)
        if len(out) >= MAX_NOTES:
            return out[:MAX_NOTES]
    return out


def _cell_notes(item: _Item, cell: CellResult) -> list[RunNote]:
    if cell.running:
        return []
    checks = _checks(cell.details)
    if cell.score is None and cell.error and not checks:
        return [RunNote(item.head, NO_ANSWER, plain(f"{cell.model}: no score: {_short(cell.error, REASON)}"))]
    out: list[RunNote] = []
    aligned = len(checks) == len(item.checks)
    for i, (score, label, why, verdict) in enumerate(checks):
        span, written = item.checks[i] if aligned else (item.head, label)
        if score is None:
            if verdict == "skip" and not why:
                why = "not supported"
            out.append(RunNote(span, NOT_SCORED, plain(f"{written} not scored on {cell.model}: {_short(why, REASON)}")))
        elif score < PASS:
            word = "failed" if score < 0.6 else "borderline"
            text = f"{written} {word} on {cell.model}: {score:.2f}"
            out.append(RunNote(span, FAILED, plain(text + (f": {_short(why, REASON)}" if why else ""))))
    return out


def _checks(details: dict[str, Any]) -> list[tuple[float | None, str, str, str | None]]:
    """(score, label, reason, verdict) of each Weval point assessment or AgentV assertion score."""
    out: list[tuple[float | None, str, str, str | None]] = []
    for p in details.get("pointAssessments") or []:
        if isinstance(p, dict):
            extent = p.get("coverageExtent")
            score = float(extent) if isinstance(extent, int | float) and not isinstance(extent, bool) else None
            why = str(p.get("error") or _reason(p)) if score is None else _reason(p)
            out.append((score, _short(str(p.get("keyPointText") or ""), 60), why, None))
    for s in details.get("scores") or []:
        if isinstance(s, dict):
            value = s.get("score")
            score = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
            verdict = str(s["verdict"]) if s.get("verdict") else None
            if verdict == "skip" and score is not None:
                score = None
            out.append((score, str(s.get("name") or s.get("type") or "?"), str(s.get("reasoning") or ""), verdict))
    return out


def _reason(assessment: dict[str, Any]) -> str:
    """The judges' own words when the point was judged (the top-level reflection of a consensus only
    says "Consensus from 1 judge(s)…"), else the function's or judge's reflection."""
    judgements = [j for j in assessment.get("individualJudgements") or [] if isinstance(j, dict) and j.get("reflection")]
    if len(judgements) == 1:
        return str(judgements[0]["reflection"])
    if judgements:
        return " | ".join(f"{j.get('judgeModelId') or 'judge'}: {j['reflection']}" for j in judgements)
    return str(assessment.get("reflection") or "")


def point_markdown(analysis: Any, board: RunBoard, line: int) -> str | None:
    """The scores per model of the point or assertion written on `line`, from the item's last run."""
    if not board.results:
        return None
    for item in _items(analysis):
        if not (item.span.start_line <= line <= item.span.end_line):
            continue
        by_model = board.results.get(item.item_id)
        if not by_model:
            return None
        index = next((i for i, (span, _) in enumerate(item.checks) if span.start_line <= line <= span.end_line
                      and span != item.head), None)
        if index is None:
            return None
        rows = []
        for cell in by_model.values():
            checks = _checks(cell.details)
            if len(checks) != len(item.checks):
                continue
            score, _, why, _ = checks[index]
            value = f"{score:.2f}" if score is not None else "not scored"
            rows.append(f"- **{md_text(cell.model)}**: {value}" + (f": {md_text(_short(why, REASON))}" if why else ""))
        if not rows:
            return None
        stale = "" if _fresh(board, item, analysis.parsed.lines) else " (text changed since)"
        return (f"**Last run** of {md_code(item.checks[index][1])} in {md_code(item.item_id)}{stale}\n\n"
                + "\n".join(rows))
    return None


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
