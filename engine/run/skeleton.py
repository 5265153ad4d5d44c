"""The run skeleton both formats share: journal, start, cells, the stages after them, finish, cleanup.

    plan (plan/plan_for.py) → generate (generate/answers.py) → score: functions, judges, scripts, embeddings
    (score/functions.py, score/judges.py, score/scripts.py, score/embeddings.py)
    → write (write/weval.py, write/agentv.py)

`RunSkeleton` drives a `FormatRun` (WevalRun, AgentvRun) through the same order of events: it opens the
journal (taking the run's lock; `--resume` reads what an earlier run has) once the format's check
passes (a cost cap that cannot be held), says RunStarted, the cleared-lock, plan and check notices, lets the format prepare
and run what comes before the cells (batch mode's submission and polling), runs every cell on the worker pool (pool.py)
with the events of the cells as they come, then what the format does after the cells (embeddings,
workspace teardown), writes the results, journals Done and says RunFinished. However the run ends
(finished, an exception, the consumer closing the stream), the format stops, a stopped run's partial
results are written when asked (`RunOptions.partial_results`), the journal closes (releasing the lock)
and the provider clients close.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from .events import Event, Notice, RunFinished, RunStarted, RunSummary
from .generate.calls import Calls
from .journal.records import Done, RunHeader
from .journal.run_store import Journal, JournalState, open_journal, read_header
from .options import RunOptions
from .pool import stream_cells

if TYPE_CHECKING:
    from .plan.plan_for import Plan


TaskT = TypeVar("TaskT")  # a format's task: WevalTask or AgentvTask


class FormatRun(Protocol[TaskT]):
    """What a format's run supplies to the skeleton, for its own kind of task. The skeleton sets `journal` and `state` before
    `opened()`; everything the format journals goes through `journal.write`."""

    @property
    def plan(self) -> Plan: ...

    @property
    def tasks(self) -> Sequence[TaskT]:
        """The plan's tasks (the plan's own list, typed as the format's)."""

    options: RunOptions
    folder: Path  # where results go
    journal_path: Path
    queue: asyncio.Queue[Event | None]  # the cells' events (Calls and the format emit into it)
    calls: Calls
    journal: Journal | None
    state: JournalState

    def check(self) -> list[Event]:
        """Before the journal opens: raises PlanError when the run cannot start (a `--max-cost` that an
        unpriced model cannot hold); notices to show after the plan's warnings."""

    def header(self) -> RunHeader:
        """The journal's first line for a fresh run."""

    def opened(self) -> None:
        """The journal is open and `state` holds what an earlier run has (empty unless resuming)."""

    def resumed_count(self) -> int:
        """Cells the journal already has whole (RunStarted's `resumed_cells`)."""

    def prepare(self) -> Iterator[Event]:
        """Before the first cell: bind judges and the like; notices to show."""

    async def cell(self, task: TaskT) -> None:
        """One task of the plan, start to finish: its events go to `queue`, its records to the journal."""

    def before_cells(self) -> AsyncIterator[Event]:
        """The stages that need the plan's cells before any runs (batch mode: run/generate/batch_stage.py)."""

    def workers(self, default: int) -> int:
        """How many cells run at once (`default`: twice the concurrency, at most the cells)."""

    def after_cells(self) -> AsyncIterator[Event]:
        """The stages that need every cell (embeddings) or end the cells' resources (workspaces)."""

    def write(self) -> list[Path]:
        """The results files; the paths written."""

    def summary(self, files: list[Path]) -> RunSummary: ...

    async def stop(self) -> None:
        """However the run ended: release what the format holds (journal records held back, workspaces,
        the results file)."""

    def write_partial(self) -> None:
        """A stopped run's results files for what finished. Never raises."""


def _age(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # renamed or removed meanwhile (another run of the folder)
        return 0.0


def _nothing_to_resume(run: FormatRun[TaskT]) -> str:
    """Why `--resume` starts a new run: no journal of this run label; one of the same file under another
    label means the file changed in what the label hashes (the attack run's resume after an edit asked
    every prompt again without a word)."""
    others = []
    for journal in sorted([*run.folder.glob("*.run.db"), *run.folder.glob("*.journal.jsonl")], key=_age):
        if journal == run.journal_path:  # this run's own, just opened
            continue
        head = read_header(journal)
        if head is not None and head.path and head.run_label and os.path.abspath(head.path) == \
                os.path.abspath(run.plan.path):
            others.append(head.run_label)
    if others:
        return (f"--resume: no run labelled {run.journal_path.name.removesuffix('.run.db')} to resume: the "
                f"file changed since run {others[-1]} (its items, points, models or settings), so this is a new "
                "run and every call is made again (--cache reuses identical answers)")
    return ("--resume: no earlier run of this file in the output folder; this is a new run (in batch mode the "
            "batches an earlier run of this label created are looked for at the provider before any is sent)")


class RunSkeleton(Generic[TaskT]):
    def __init__(self, run: FormatRun[TaskT]) -> None:
        self.run = run

    async def events(self) -> AsyncIterator[Event]:
        run, plan, options = self.run, self.run.plan, self.run.options
        notices = run.check()
        journal, run.state = open_journal(run.journal_path, resume=options.resume or options.retry_errors,
                                          header=run.header())
        run.journal = journal
        run.opened()
        finished = False
        try:
            summary = plan.summary()
            summary["resumed_cells"] = run.resumed_count()
            summary["output"] = str(run.folder)
            summary["journal"] = str(run.journal_path)
            yield RunStarted(summary)
            if journal.stale_pid:
                yield Notice(f"cleared the lock of an earlier run (PID {journal.stale_pid}) that is no "
                             "longer running", "info")
            if run.state.headless:
                yield Notice(f"--resume: the run database {run.journal_path} lost its run row (the run's header); "
                             "resuming from the rows it holds", "warning")
            elif (options.resume or options.retry_errors) and run.state.header is None:
                yield Notice(_nothing_to_resume(run), "warning")
            for warning in plan.warnings:
                yield Notice(warning, "warning")
            for event in notices:
                yield event
            for event in run.prepare():
                yield event
            async for event in run.before_cells():
                yield event
            workers = run.workers(min(len(run.tasks), plan.concurrency * 2))
            async for event in _committed_first(journal, run.queue,
                                                stream_cells(run.queue, run.tasks, run.cell, workers)):
                yield event
            async for event in run.after_cells():
                yield event
            files = run.write()
            finished = True
            journal.write(Done())
            yield RunFinished(run.summary(files))
        finally:
            await run.stop()
            if not finished and options.partial_results:
                run.write_partial()
            journal.close()
            await run.calls.aclose()


# Put on the cells' queue when the journal commits while events wait for it (never yielded).
_COMMITTED = Notice("the run database committed")
# The shortest time between two commits made because no other event was waiting: every 10 ms, a
# 2,000-prompt run wrote 9.2-11 MB (its results are 2.1 MB); with none, 6.0 MB.
IDLE_COMMIT = 0.2


async def _committed_first(journal: Journal, queue: asyncio.Queue[Event | None],
                           cells: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """The cells' events, each once what the journal had been told before it is committed: an event
    waits until every record written before it was taken from the queue is committed (at most
    journal/run_store.py's COMMIT_EVERY), and those after it wait behind it. So what the run reports
    done (the display, the editor's lenses, `--json`) survives a kill. When no other event is waiting
    the journal commits at once (at most every IDLE_COMMIT seconds): a run whose answers come one at a
    time reports each as it comes, and one the editor cancels has reported every answer it keeps."""
    held: collections.deque[tuple[int, Event]] = collections.deque()  # (records written before it, event)
    woken = False  # a _COMMITTED is on the queue

    def committed() -> None:
        nonlocal woken
        if held and not woken:
            woken = True
            queue.put_nowait(_COMMITTED)  # wakes the loop below

    journal.on_commit = committed
    try:
        async with contextlib.aclosing(cells):  # type: ignore[type-var]
            async for event in cells:
                if event is _COMMITTED:
                    woken = False
                elif not held and not journal.pending:
                    yield event
                    continue
                else:
                    held.append((journal.records, event))
                if held and queue.empty() and time.monotonic() - journal.committed_at >= IDLE_COMMIT:
                    journal.commit()
                kept = journal.committed_records
                while held and held[0][0] <= kept:
                    yield held.popleft()[1]
        journal.commit()
        while held:
            yield held.popleft()[1]
    finally:
        journal.on_commit = None
        if woken:  # put after the cells' last event: taken off the queue, which later stages read
            kept_events: list[Event | None] = []
            while not queue.empty():
                if (item := queue.get_nowait()) is not _COMMITTED:
                    kept_events.append(item)
            for item in kept_events:
                queue.put_nowait(item)
