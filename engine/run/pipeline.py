"""The one cell pipeline: runs a format's declared stages over a plan, as a stream of events.

A format (weval_stages.py, agentv_stages.py) is a `Format` subclass whose `stages` declare, as data,
what runs before the cells (`before`: batch mode's generate), each cell's stages in order (`cell`:
generate, functions, judges, scripts, write …) and what runs after every cell (`after`: embeddings,
workspace teardown); the format's results are written by its `write`. A cell stage is

    async def stage(run: TheFormat, work: TheFormatsCellWork) -> Flow | None

(or a plain `def` when it never waits: no coroutine is made for it; it may also return a coroutine, which
is awaited) returning None to go on, `DONE` to end the cell (the stages after it are skipped), or, inside a
`Repeat`, `NEXT_ATTEMPT` to end this attempt. `Around(enter, stages)` runs `stages` inside an async
context manager (a workspace held, a cost reservation released however the cell ends; it yields DONE to
skip them); `Repeat(stages, count, stop)` runs them once per attempt (AgentV's trials). `admitted` (a
cost cap's admission) and `awaited` (the scores the stages before started, awaited together) are the
stages both formats share.

`Pipeline` is the engine: it owns what every run has (the output folder, the run database and its lock,
`--resume`'s state, the provider calls, the cost guard, the events' queue), says RunStarted and the
notices, runs `before`, every cell on the worker pool (pool.py; a big run's shared out with forked cell
processes, split.py, whose cells the format `adopted`) with the cells' events as they come, `after`, writes the results, records Done and says RunFinished. However the run ends (finished, an
exception, the consumer closing the stream) the format stops, a stopped run's partial results are
written when asked (`RunOptions.partial_results`), the database closes (releasing the lock) and the
provider clients close.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from ..own_files import own_folder
from . import split
from .cost.guard import CostGuard
from .events import Event, Notice, RunFinished, RunStarted, RunSummary
from .generate.calls import Calls
from .journal.records import Done, RunHeader
from .journal.run_store import Journal, JournalState, open_journal, read_header
from .options import RunOptions
from .pool import EventQueue, stream_cell_batches

if TYPE_CHECKING:
    from .plan.plan_for import Plan

TaskT = TypeVar("TaskT")


class Flow(enum.Enum):
    """What a cell stage returns to stop early (None: go on to the next stage)."""

    DONE = "done"  # the cell is finished: no later stage runs
    NEXT_ATTEMPT = "next attempt"  # inside a Repeat: this attempt is finished, the next one starts


DONE = Flow.DONE
NEXT_ATTEMPT = Flow.NEXT_ATTEMPT


@dataclass(eq=False)
class CellWork(Generic[TaskT]):
    """One cell in flight through its stages; a format subclasses it with what its stages hand on."""

    task: TaskT
    attempt: int = 0  # the attempt a Repeat is running
    entries: list[Any] = field(default_factory=list)  # the scored items' results, by their place
    waiting: list[tuple[int, Awaitable[Any]]] = field(default_factory=list)  # entries `awaited` fills
    together: bool = True  # `awaited` awaits them side by side (False: one after the other, in order)


Step = Callable[[Any, Any], Awaitable[Flow | None] | Flow | None]


@dataclass(frozen=True)
class Around:
    """`stages` run inside `enter(run, work)`, an async context manager yielding None, or DONE to skip them.
    `needed(run)`, when given, is asked once a run as its cells start (`cell_stages`): False, and every
    cell runs `stages` without entering (a context for nothing, such as no cost cap, was two coroutines a
    cell)."""

    enter: Callable[[Any, Any], contextlib.AbstractAsyncContextManager[Flow | None]]
    stages: tuple[Stage, ...]
    needed: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class Repeat:
    """`stages` once per attempt, `count(run, work)` attempts, until `stop(run, work)` after a whole one."""

    stages: tuple[Stage, ...]
    count: Callable[[Any, Any], int]
    stop: Callable[[Any, Any], bool]


Stage = Step | Around | Repeat
RunStage = Callable[[Any], AsyncIterator[Event]]  # before or after the cells: its events


@dataclass(frozen=True)
class Stages:
    """A format's declared stages (see the module's docstring)."""

    before: tuple[RunStage, ...]
    cell: tuple[Stage, ...]
    after: tuple[RunStage, ...]


async def run_stages(run: Format[Any, Any], stages: Sequence[Stage], work: CellWork[Any]) -> Flow | None:
    """`stages` in order on `work`; the Flow that stopped them, or None."""
    for stage in stages:
        if isinstance(stage, Around):
            async with stage.enter(run, work) as entered:
                flow = entered if entered is not None else await run_stages(run, stage.stages, work)
        elif isinstance(stage, Repeat):
            flow = None
            for attempt in range(stage.count(run, work)):
                work.attempt = attempt
                flow = await run_stages(run, stage.stages, work)
                if flow is DONE:
                    break
                if flow is None and stage.stop(run, work):
                    break
                flow = None
        else:
            got = stage(run, work)
            flow = got if got is None or type(got) is Flow else await got  # type: ignore[misc]
        if flow is not None:
            return flow
    return None


def cell_stages(run: Format[Any, Any], stages: Sequence[Stage]) -> tuple[Stage, ...]:
    """`stages` as this run's cells run them: each Around the run does not need (`Around.needed`) replaced
    by its own stages, in its place."""
    out: list[Stage] = []
    for stage in stages:
        if isinstance(stage, Around):
            inner = cell_stages(run, stage.stages)
            if stage.needed is not None and not stage.needed(run):
                out.extend(inner)
            else:
                out.append(Around(stage.enter, inner, stage.needed))
        elif isinstance(stage, Repeat):
            out.append(Repeat(cell_stages(run, stage.stages), stage.count, stage.stop))
        else:
            out.append(stage)
    return tuple(out)


# --- the stages both formats share ---------------------------------------------------------------

class admitted:
    """A cost cap admits the cell (reserving its estimate, released however it ends), or it is not run
    (`run.not_run`: never recorded, so `--resume` with a higher cap runs it). A class, not an
    asynccontextmanager: every cell enters it, and a generator-based one cost ~1 µs more a cell."""

    __slots__ = ("cell", "run", "work")

    def __init__(self, run: Format[Any, Any], work: CellWork[Any]) -> None:
        self.run = run
        self.work = work
        self.cell: Any = None  # set once admitted: released on the way out

    async def __aenter__(self) -> Flow | None:
        run, work = self.run, self.work
        why = run.cost.admit(work.task)
        if why is not None:
            run.not_run(work, why)
            return DONE
        self.cell = work.task.cell
        return None

    async def __aexit__(self, *exc: object) -> None:
        if self.cell is not None:
            self.run.cost.release(self.cell)


def capped(run: Format[Any, Any]) -> bool:
    """Whether a cost cap admits the cells (`admitted` is needed: Around.needed)."""
    return run.cost.budget.active


def awaited(run: Format[Any, Any], work: CellWork[Any]) -> Awaitable[None] | None:
    """The scores the stages before left waiting, into `work.entries` at their places: side by side, or
    one after the other in their places' order. None (nothing to wait for, no coroutine made) for most
    cells: every point was scored at once."""
    return _awaiting(work) if work.waiting else None


async def _awaiting(work: CellWork[Any]) -> None:
    waiting, work.waiting = sorted(work.waiting, key=lambda w: w[0]), []
    if work.together:
        for (i, _), got in zip(waiting, await asyncio.gather(*(w for _, w in waiting)), strict=True):
            work.entries[i] = got
    else:
        for i, scoring in waiting:
            work.entries[i] = await scoring


# --- a format ------------------------------------------------------------------------------------

PlanT = TypeVar("PlanT")
WorkT = TypeVar("WorkT", bound=CellWork[Any])


class Format(Generic[PlanT, WorkT]):
    """A format's part of a run: its declared `stages`, the state its stages share across the run (set
    up in `opened`, once the database is open) and the hooks the pipeline calls at each step."""

    stages: ClassVar[Stages]

    def __init__(self, pipeline: Pipeline) -> None:
        # What it shares with the pipeline, never the pipeline itself (a cycle is memory for the whole run
        # in a process with the collector off)
        self.plan: PlanT = pipeline.plan  # type: ignore[assignment]
        self.journal_path = pipeline.journal_path
        self.options = pipeline.options
        self.calls = pipeline.calls
        self.cost = pipeline.cost
        self.state = pipeline.state
        self.emit = pipeline.emit
        self.queue = pipeline.queue
        self.folder = pipeline.folder
        self._journal: Journal | None = None  # the pipeline opens it before `opened()`
        self.resumed_cells = 0

    # Before the pipeline exists: what the run's shared parts are made from.
    @classmethod
    def run_options(cls, plan: Any, options: RunOptions) -> RunOptions:
        return options

    @classmethod
    def database_name(cls, plan: Any) -> str:
        return f"{plan.results_base}.run.db"

    @classmethod
    def cost_guard(cls, plan: Any, options: RunOptions) -> CostGuard:
        return CostGuard(plan, options, plan.prices)

    @property
    def journal(self) -> Journal:
        assert self._journal is not None, "the run database is not open yet"
        return self._journal

    @property
    def tasks(self) -> Sequence[Any]:
        return self.plan.tasks  # type: ignore[attr-defined]

    def header(self) -> RunHeader:
        """The database's run row for a fresh run."""
        raise NotImplementedError

    def opened(self) -> None:
        """The database is open and `state` holds what an earlier run has (empty unless resuming)."""

    def resumed_count(self) -> int:
        """Cells the database already has whole (RunStarted's `resumed_cells`)."""
        return 0

    def prepare(self) -> Iterator[Event]:
        """Before the first cell: notices to show."""
        return iter(())

    def work(self, task: Any) -> WorkT:
        """A cell's work, before its first stage."""
        raise NotImplementedError

    def not_run(self, work: WorkT, why: str) -> None:
        """A cell a cost cap kept from starting."""
        raise NotImplementedError

    def workers(self, default: int) -> int:
        """How many cells run at once (`default`: twice the concurrency, at most the cells)."""
        return default

    def write(self) -> list[Path]:
        """The results files; the paths written."""
        raise NotImplementedError

    def summary(self, files: list[Path]) -> RunSummary:
        raise NotImplementedError

    async def stop(self) -> None:
        """However the run ended: release what the format holds."""

    def write_partial(self) -> None:
        """A stopped run's results files for what finished. Never raises."""

    # Cells in other processes (split.py).
    def unsplit(self) -> str | None:
        """Why this run's cells must stay in one process (None: they may be shared out)."""
        return "this format's cells run in one process"

    def forked(self) -> None:
        """In a cell process, before its first cell."""

    def handed(self, task: Any) -> Any:
        """In a cell process, once `task`'s cell is finished: what `adopted` needs of it besides its records."""
        return None

    def handed_run(self) -> Any:
        """In a cell process, once its cells are done: what the run's process adds up (`adopted_run`)."""
        return None

    def adopted_run(self, handed: Any) -> None:
        """A cell process's `handed_run`."""

    def adopted(self, records: list[Any]) -> list[Any]:
        """A cell process's records, in order, with a `split.Handed` after each cell it finished: each such
        cell taken into this process's results (from the Handed's payload, or as a resumed cell is; no
        event: the cell process's come with its records); the records to write into the database returned."""
        raise NotImplementedError


# --- the engine ----------------------------------------------------------------------------------

class Pipeline:
    """One run of a plan through a format's stages."""

    def __init__(self, plan: Plan, options: RunOptions, fmt: type[Format[Any, Any]]) -> None:
        self.plan = plan
        self.options = options = fmt.run_options(plan, options)
        own_folder(options.output, plan.output_folder_parts)  # never a link planted below the output folder
        own_folder(options.output, (".cache",))  # where the response cache is kept (options.cache_path)
        self.folder = options.output.joinpath(*plan.output_folder_parts)
        self.journal_path = self.folder / fmt.database_name(plan)
        self.state = JournalState()
        self.queue: EventQueue[Event | None] = EventQueue()
        self.emit = self.queue.put_nowait
        self.calls = Calls(options, self.emit, concurrency=plan.concurrency)
        self.cost = fmt.cost_guard(plan, options)
        self.calls.spend = self.cost.spend
        self.journal: Journal | None = None
        self._cell_stages: tuple[Stage, ...] | None = None  # as this run's cells run them (cell_stages)
        self.format = fmt(self)

    async def cell(self, task: Any) -> None:
        stages = self._cell_stages if self._cell_stages is not None else self.format.stages.cell
        await run_stages(self.format, stages, self.format.work(task))

    async def events(self) -> AsyncIterator[Event]:
        run, plan, options = self.format, self.plan, self.options
        cap_warning = self.cost.check()  # raises PlanError when --max-cost cannot be held
        journal, state = open_journal(self.journal_path, resume=options.resume or options.retry_errors,
                                      header=run.header())
        self.journal = run._journal = journal
        self.state = run.state = state
        run.opened()
        finished = False
        try:
            summary = plan.summary()
            summary["resumed_cells"] = run.resumed_count()
            summary["output"] = str(self.folder)
            summary["journal"] = str(self.journal_path)
            yield RunStarted(summary)
            if journal.stale_pid:
                yield Notice(f"cleared the lock of an earlier run (PID {journal.stale_pid}) that is no "
                             "longer running", "info")
            if state.headless:
                yield Notice(f"--resume: the run database {self.journal_path} lost its run row (the run's header); "
                             "resuming from the rows it holds", "warning")
            elif (options.resume or options.retry_errors) and state.header is None:
                yield Notice(self._nothing_to_resume(), "warning")
            for warning in plan.warnings:
                yield Notice(warning, "warning")
            if cap_warning:
                yield Notice(cap_warning, "warning")
            for event in run.prepare():
                yield event
            for stage in run.stages.before:
                async for event in stage(run):
                    yield event
            tasks = run.tasks
            workers = run.workers(min(len(tasks), plan.concurrency * 2))
            self._cell_stages = cell_stages(run, run.stages.cell)  # (the stages before have run: batch mode's rounds)
            parts, why = split.processes(self)
            if why is not None:
                yield Notice(why, "info")
            elif parts > 1:
                yield Notice(f"the cells run in {parts} processes (--processes)", "info")
            cells = split.cell_batches(self, workers, parts) if parts > 1 else \
                stream_cell_batches(self.queue, tasks, self.cell, workers)
            async for ready in _committed_first(journal, self.queue, cells):
                for event in ready:
                    yield event
            for stage in run.stages.after:
                async for event in stage(run):
                    yield event
            files = run.write()
            finished = True
            journal.write(Done())
            yield RunFinished(run.summary(files))
        finally:
            try:
                await run.stop()
                if not finished and options.partial_results:
                    run.write_partial()
                journal.close()
            finally:  # closed whatever failed above (a full disk): no "Unclosed client session" after the error
                await self.calls.aclose()

    def _nothing_to_resume(self) -> str:
        """Why `--resume` starts a new run: no database of this run label; one of the same file under
        another label means the file changed in what the label hashes."""
        others = []
        for journal in sorted([*self.folder.glob("*.run.db"), *self.folder.glob("*.journal.jsonl")], key=_age):
            if journal == self.journal_path:  # this run's own, just opened
                continue
            head = read_header(journal)
            if head is not None and head.path and head.run_label and os.path.abspath(head.path) == \
                    os.path.abspath(self.plan.path):
                others.append(head.run_label)
        if others:
            return (f"--resume: no run labelled {self.journal_path.name.removesuffix('.run.db')} to resume: the "
                    f"file changed since run {others[-1]} (its items, points, models or settings), so this is a new "
                    "run and every call is made again (--cache reuses identical answers)")
        return ("--resume: no earlier run of this file in the output folder; this is a new run (in batch mode the "
                "batches an earlier run of this label created are looked for at the provider before any is sent)")


def _age(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # renamed or removed meanwhile (another run of the folder)
        return 0.0


# Put on the cells' queue when the journal commits while events wait for it (never yielded).
_COMMITTED = Notice("the run database committed")
# The shortest time between two commits made because no other event was waiting: every 10 ms, a
# 2,000-prompt run wrote 9.2-11 MB (its results are 2.1 MB); with none, 6.0 MB.
IDLE_COMMIT = 0.2


async def _committed_first(journal: Journal, queue: EventQueue[Event | None],
                           cells: AsyncIterator[list[Event]]) -> AsyncIterator[list[Event]]:
    """The cells' events (taken from the queue a list at a time: pool.stream_cell_batches), each once what
    the journal had been told before it is committed, in lists: an event waits until every record written
    before it was taken from the queue is committed (at most journal/run_store.py's COMMIT_EVERY), and
    those after it wait behind it. So what the run reports done (the display, the editor's lenses,
    `--json`) survives a kill. When no other event is waiting (the last of a list, the queue empty) the
    journal commits at once (at most every IDLE_COMMIT seconds): a run whose answers come one at a time
    reports each as it comes, and one the editor cancels has reported every answer it keeps."""
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
            async for batch in cells:
                ready: list[Event] = []
                last = len(batch) - 1
                for n, event in enumerate(batch):
                    if event is _COMMITTED:
                        woken = False
                    elif not held and not journal.pending:
                        ready.append(event)
                        continue
                    else:
                        held.append((journal.records, event))
                    if held and n == last and queue.empty():  # nothing else to report: commit now, or once
                        # IDLE_COMMIT has passed
                        journal.commit_within(IDLE_COMMIT - (time.monotonic() - journal.committed_at))
                    kept = journal.committed_records
                    while held and held[0][0] <= kept:
                        ready.append(held.popleft()[1])
                if ready:
                    yield ready
        journal.commit()
        if held:
            yield [event for _, event in held]
            held.clear()
    finally:
        journal.on_commit = None
        if woken:  # put after the cells' last event: taken off the queue, which later stages read
            kept_events: list[Event | None] = []
            while not queue.empty():
                if (item := queue.get_nowait()) is not _COMMITTED:
                    kept_events.append(item)
            for item in kept_events:
                queue.put_nowait(item)
