"""Running from the editor, in the engine worker (which holds the analysis): a run's plan, the item at a
line, the run items with the file's earlier results, and the report of a results file; and the run
commands' names (run.py runs them)."""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import on_snapshot

if TYPE_CHECKING:
    from evalspec.run.options import RunOptions

    from ..worker import Doc, Snapshot, Worker

log = logging.getLogger(__name__)
RUN, PLAN, CANCEL, SHOW = "evalspec.run", "evalspec.plan", "evalspec.cancelRun", "evalspec.showResults"
NOT_EVAL = "this file is not a Weval blueprint or an AgentV eval file"


def plan(worker: Worker, doc: Doc, options: RunOptions, summary_key: str | None = None) -> Any:
    """(the plan, its problems, the run items, the options), or with `summary_key` what `evalspec run
    --dry-run` says (kept with the analysis under that key); or why nothing can run. A text that is not
    the saved file's gets a run label, and journal, of its own (run_label.unsaved_label)."""
    from evalspec.ide.runs import run_items
    from evalspec.run.plan.run_label import unsaved_label
    from evalspec.run.preflight import problems
    from evalspec.run.runner import PlanError, plan_for

    snap = worker.snapshot(doc)
    if snap is None:
        return NOT_EVAL
    analysis = snap.analysis
    if analysis.error_count:
        return f"the file has {analysis.error_count} error(s); fix them to run it"
    if summary_key in analysis.memo:
        return analysis.memo[summary_key]
    if analysis.path is not None:
        options.label = unsaved_label(analysis.text, analysis.path, options.label) or options.label
    try:
        planned = plan_for(analysis, options)
    except (PlanError, ValueError) as exc:
        answer: Any = str(exc)
    else:
        if summary_key is None:
            return planned, problems(planned, options), run_items(analysis), options
        answer = {**planned.summary(), "problems": problems(planned, options)}
    if summary_key is not None:
        analysis.memo[summary_key] = answer
    return answer


@on_snapshot
def item_at(snap: Snapshot, line: int) -> str | None:
    """The prompt / test written around the client's `line`."""
    from evalspec.run.plan.items import entries

    line, _ = snap.index.engine_point(line, 0)
    return next((item_id for _, item_id, span in entries(snap.analysis) if span.start_line <= line <= span.end_line),
                None)


def items_and_history(worker: Worker, doc: Doc, where: tuple[Path, Path, Path] | None) -> tuple[Any, Any]:
    """The run items and, given (output folder, file, workspace root), the file's earlier results when it
    has items (or the message of what reading them raised)."""
    from evalspec.ide.run_history import load_history
    from evalspec.ide.runs import run_items

    snap = worker.snapshot(doc)
    items = run_items(snap.analysis) if snap is not None else []
    if where is None or not items:
        return items, None
    try:
        return items, load_history(*where)
    except Exception as exc:
        return items, f"{type(exc).__name__}: {exc}"


def report(worker: Worker, doc: Doc | None, source: str, markdown: bool) -> tuple[str | None, str | None] | str:
    """(the HTML report's path, the Markdown report) of one results file or journal; None for what
    cannot be made (the results file remains); a string when the file is refused. The output folder
    may be someone else's: the file must be an own file (not a link, a FIFO or a device), and no eval
    file but the open document is read for it, whatever the run's journal names."""
    from evalspec.own_files import NotOwnFile, open_own

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
    analyses = OnlyThese({doc.path.resolve(): worker.analysis(doc)} if doc is not None and doc.path else {})
    try:
        html = build.write_report([path], path.with_name(f"{name}.report.html"), analyses=analyses)
        text = build.build_report([path], fmt="markdown-text", analyses=analyses) if markdown else None
    except Exception:  # a report that cannot be made never hides the results themselves
        log.warning("no report for %s", path.name, exc_info=True)
        return None, None
    return str(html), text


JOBS = {"plan": plan, "item_at": item_at, "items_and_history": items_and_history, "report": report}
