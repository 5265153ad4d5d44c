"""Running from the editor, in the engine worker (which holds the analysis): a run's plan and the
report of its results (evalspec/ide/run_plan.py), the item at a line, the run items with the file's
earlier results; and the run commands' names (run.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import on_snapshot

if TYPE_CHECKING:
    from ..worker import Doc, Snapshot, Worker

RUN, PLAN, CANCEL, SHOW = "evalspec.run", "evalspec.plan", "evalspec.cancelRun", "evalspec.showResults"
NOT_EVAL = "this file is not a Weval blueprint or an AgentV eval file"


def plan(worker: Worker, doc: Doc, *args: Any) -> Any:
    """The run's plan, or why nothing can run (evalspec/ide/run_plan.plan)."""
    from evalspec.ide.run_plan import plan

    snap = worker.snapshot(doc)
    return NOT_EVAL if snap is None else plan(snap.analysis, *args)


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


def report(worker: Worker, doc: Doc | None, files: list[str], journal: str | None, markdown: bool) -> Any:
    """The last run's report (evalspec/ide/run_plan.report), reading no eval file but the open document."""
    from evalspec.ide.run_plan import report

    analyses = {doc.path.resolve(): worker.analysis(doc)} if doc is not None and doc.path else {}
    return report(files, journal, markdown, analyses)


JOBS = {"plan": plan, "item_at": item_at, "items_and_history": items_and_history, "report": report}
