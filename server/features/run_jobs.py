"""What the commands of run.py ask the worker, which holds the analysis: a run's plan, the item at a
line, the run items with the file's earlier results, and the report of a results file."""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from . import on_snapshot

if TYPE_CHECKING:
    from evalspec.analysis import Analysis
    from evalspec.run.options import RunOptions

    from ..worker import Doc, Snapshot, Worker

log = logging.getLogger(__name__)
NOT_EVAL = "this file is not a Weval blueprint or an AgentV eval file"


def _runnable(worker: Worker, doc: Doc) -> Analysis | str:
    snap = worker.snapshot(doc)
    if snap is None:
        return NOT_EVAL
    if snap.analysis.error_count:
        return f"the file has {snap.analysis.error_count} error(s); fix them to run it"
    return snap.analysis


def plan(worker: Worker, doc: Doc, options: RunOptions) -> tuple[Any, list[str], Any] | str:
    """(the plan, its problems, the run items), or why nothing can run."""
    from evalspec.ide.runs import run_items
    from evalspec.run.preflight import problems
    from evalspec.run.runner import PlanError, plan_for

    analysis = _runnable(worker, doc)
    if isinstance(analysis, str):
        return analysis
    try:
        planned = plan_for(analysis, options)
    except (PlanError, ValueError) as exc:
        return str(exc)
    return planned, problems(planned, options), run_items(analysis)


def plan_summary(worker: Worker, doc: Doc, options: RunOptions, key: str) -> dict[str, Any] | str:
    """What `evalspec run --dry-run` says of the file (kept with the analysis), or why nothing can run."""
    from evalspec.run.preflight import problems
    from evalspec.run.runner import PlanError, plan_for

    analysis = _runnable(worker, doc)
    if isinstance(analysis, str):
        return analysis
    if key not in analysis.memo:
        try:
            planned = plan_for(analysis, options)
            summary: dict[str, Any] | str = planned.summary()
            assert isinstance(summary, dict)
            summary["problems"] = problems(planned, options)
        except (PlanError, ValueError) as exc:
            summary = str(exc)
        analysis.memo[key] = summary
    return analysis.memo[key]


@on_snapshot
def item_at(snap: Snapshot, line: int) -> str | None:
    """The prompt / test written around the client's `line`."""
    from evalspec.run.plan.items import entries

    line, _ = snap.index.point(lsp.Position(line=line, character=0))
    return next((item_id for _, item_id, span in entries(snap.analysis) if span.start_line <= line <= span.end_line),
                None)


def items_and_history(worker: Worker, doc: Doc, where: tuple[Path, Path, Path] | None) -> tuple[Any, Any]:
    """The run items and, given (output folder, file, workspace root), the file's earlier results when it
    has items (or the message of what reading them raised)."""
    from evalspec.ide.runs import run_items

    snap = worker.snapshot(doc)
    if snap is None:
        return [], None
    items = run_items(snap.analysis)
    if where is None or not items:
        return items, None
    from evalspec.ide.run_history import load_history

    try:
        return items, load_history(*where)
    except Exception as exc:
        return items, f"{type(exc).__name__}: {exc}"


def report(worker: Worker, doc: Doc | None, source: str, markdown: bool) -> tuple[str | None, str | None] | str:
    """(the HTML report's path, the Markdown report) of one results file or journal; None for what
    cannot be made (the results file remains); a string when the file is refused.

    The results come from the output folder, which may be someone else's (a cloned repository's): the
    file is read as an own file (not a link, a FIFO or a device), and no eval file but the open
    document is read for it, whatever the run's journal names."""
    from evalspec.own_files import NotOwnFile, open_own

    known = {}
    if doc is not None and doc.path is not None:
        known[doc.path.resolve()] = worker.analysis(doc)
    try:  # the report package is optional here: without it "show results" opens the results
        build = importlib.import_module("evalspec.report")
        from evalspec.report.sources import OnlyThese
    except ImportError:
        return None, None
    path = Path(source)
    try:
        os.close(open_own(path, os.O_RDONLY))
    except NotOwnFile as exc:
        return exc.strerror or str(exc)
    name = path.name.removesuffix(".jsonl").removesuffix(".json")
    analyses = OnlyThese(known)
    try:
        html = build.write_report([path], path.with_name(f"{name}.report.html"), analyses=analyses)
        text = build.build_report([path], fmt="markdown-text", analyses=analyses) if markdown else None
    except Exception:  # a report that cannot be made never hides the results themselves
        log.warning("no report for %s", path.name, exc_info=True)
        return None, None
    return str(html), text


def run_label(worker: Worker, doc: Doc, user_label: str | None) -> str | None:
    """The label option for a run of the document's text: its own when the text is not the saved file's
    (engine run/plan/run_label.unsaved_label), else None (the terminal's label)."""
    from evalspec.run.plan.run_label import unsaved_label

    snap = worker.snapshot(doc)
    if snap is None or snap.analysis.path is None:
        return None
    return unsaved_label(snap.analysis.text, snap.analysis.path, user_label)


JOBS = {"run_label": run_label, "plan": plan, "plan_summary": plan_summary, "item_at": item_at, "items_and_history": items_and_history,
        "report": report}
