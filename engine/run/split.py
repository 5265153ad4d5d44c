"""A run's cells over several processes (`--processes N`): how a big run uses more than one core.

Past a few hundred cells a second one Python process is CPU-bound (the calls' HTTP, the points, the rows:
docs/run-database.md), so a run of `MIN_CELLS` cells or more, on a machine with two cores or more, forks
cell processes as its cells start (the plan made, the database open, no call made yet). The cells are
shared out the way make's jobserver shares jobs: they are cut into chunks, never inside an item (a
prompt's key points and a test's trials stay in one process), whose numbers are written into a pipe
before the fork; each process reads the next number (4 bytes; a pipe's read is atomic) when it wants
more work, so the processes stay balanced whatever their speeds.

A cell process owns nothing. Its journal writes into a list (`Journal.divert`), sent back with its
events in frames (length-prefixed pickles of this engine's own records and events) over its own pipe;
the run's process — the database's one writer — writes them, so one lock and the same kill and resume
rules hold, and gives them to the format (`Format.adopted`), which takes each finished cell into its
results as a resumed one is, and returns the records to write. Each process makes its share of the
calls in flight (`Calls.share`).

A cell process dies with the run's (PR_SET_PDEATHSIG); what it had not sent is lost as an uncommitted
transaction is, and `--resume` asks for it again. One that ends before its cells fails the run with an
OSError (the CLI says so; `--resume` runs what it left).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import io
import operator
import os
import pickle
import signal
import sys
from array import array
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, cast

from ..item_processes import detach, other_threads
from .events import Event
from .journal.records import Usage
from .pool import stream_cell_batches

if TYPE_CHECKING:
    from .pipeline import Pipeline

# Fewer cells than this run in one process unless --processes asks: a fork and a second set of
# connections are ~20 ms, and a small run is not CPU-bound.
MIN_CELLS = 1_000
AUTO_MOST = 4  # processes at most when none are asked for: the run's process writes every cell's records
CHUNK = 16  # cells a chunk at least (a chunk ends where an item does)
# Chunk numbers written before the fork: 4 bytes each, within a pipe's smallest buffer (a page: Linux makes
# a user's pipes that small past its pipe-user-pages-soft), so the write never waits for a reader.
MAX_CHUNKS = 1_024
_F_SETPIPE_SZ = 1031  # (Linux; fcntl.F_SETPIPE_SZ from Python 3.10, not in every build's typeshed)


@dataclass(frozen=True, slots=True)
class Handed:
    """In a cell process's records: cell `position` of the plan is finished (its records came before);
    `payload`: what the format needs of it besides its records (Format.handed)."""

    position: int
    payload: Any = None


def processes(pipeline: Pipeline) -> tuple[int, str | None]:
    """How many processes run this run's cells, and a notice when --processes asked for more than it can."""
    run, options = pipeline.format, pipeline.options
    asked = options.processes
    if asked is not None and asked <= 1:
        return 1, None
    tasks = run.tasks
    if asked is None:
        if len(tasks) < MIN_CELLS or not sys.platform.startswith("linux"):
            return 1, None
        wanted = min(AUTO_MOST, len(os.sched_getaffinity(0)))
        if wanted <= 1:
            return 1, None
    else:
        wanted = asked
    # no more processes than calls in flight (each makes at least one at a time)
    wanted = min(wanted, pipeline.calls.concurrency, *options.provider_concurrency.values())
    why = _unsplit(pipeline, tasks)
    if why is None and wanted <= 1:
        why = "the concurrency is 1"
    if why is None:
        return wanted, None
    if asked is None:
        return 1, None
    return 1, f"--processes {asked}: this run's cells run in one process: {why}"


def _unsplit(pipeline: Pipeline, tasks: Any) -> str | None:
    """Why this run's cells cannot be shared out (None: they can)."""
    run, options = pipeline.format, pipeline.options
    if not sys.platform.startswith("linux"):
        return "cell processes are made on Linux only"
    if not hasattr(tasks, "items"):
        return "a plan made by hand"
    if other_threads():
        return "this process runs other threads (a fork copies only the one that forks)"
    if run.cost.budget.active:
        return "a cost cap admits each cell against the run's whole spend"
    if options.cache:
        return "the response cache is one file a run appends to"
    if options.batch or options.batch_models:
        return "batch mode sends every call through the batch APIs first"
    return run.unsplit()


def chunks(items: Sequence[int], size: int) -> list[int] | None:
    """Where each chunk of cells starts: at least `size` cells, cut only where the item changes. None
    when an item's cells are not side by side (a plan made so: its cells stay in one process)."""
    starts = [0]
    finished: set[int] = set()
    count = len(items)
    if count == 0:
        return starts
    last = items[0]
    for n in range(1, count):
        item = items[n]
        if item != last:
            finished.add(last)
            if item in finished:
                return None
            if n - starts[-1] >= size:
                starts.append(n)
            last = item
    return starts


class _Feed:
    """The chunks' numbers in a pipe, written before the fork; each process reads the next one."""

    def __init__(self, count: int) -> None:
        self.fd, write = os.pipe()
        try:
            data = memoryview(array("I", range(count)).tobytes())
            while data:
                data = data[os.write(write, data):]
        finally:
            os.close(write)

    def take(self) -> int | None:
        got = os.read(self.fd, 4)
        return int.from_bytes(got, sys.byteorder) if len(got) == 4 else None


def _fed(tasks: Any, starts: list[int], feed: _Feed) -> Iterator[tuple[int, Any]]:
    """The cells of the chunks this process reads from the feed, each as (its position, its task)."""
    total = len(tasks)
    while (k := feed.take()) is not None:
        end = starts[k + 1] if k + 1 < len(starts) else total
        for n in range(starts[k], end):
            yield n, tasks[n]


def cell_batches(pipeline: Pipeline, workers: int, parts: int) -> AsyncIterator[list[Event]]:
    """The run's cells over `parts` processes (this one and parts − 1 forked), as pool.py's stream of
    event lists; the forked processes' events among them, after their records are written."""
    tasks = cast(Any, pipeline.format.tasks)
    starts = chunks(tasks.items(), max(CHUNK, -(-len(tasks) // MAX_CHUNKS)))
    if starts is None:
        return stream_cell_batches(pipeline.queue, tasks, pipeline.cell, workers)
    # What the cells' first calls import (aiohttp: ~60 ms), imported once here rather than in every process
    from ..providers.aiohttp_session import load_aiohttp

    load_aiohttp()
    feed = _Feed(len(starts))
    share = max(1, -(-workers // parts))
    children: list[_CellProcess] = []
    try:
        for part in range(1, parts):
            read, write = os.pipe()
            with contextlib.suppress(OSError):  # room for a busy run's process to read a while later
                fcntl.fcntl(write, _F_SETPIPE_SZ, 1 << 20)
            try:
                pid = os.fork()
            except OSError:  # (no memory or processes left: the cells go to the processes there are)
                os.close(read)
                os.close(write)
                break
            if pid == 0:  # the cell process: never returns
                os.close(read)
                for child in children:
                    os.close(child.fd)
                _child(pipeline, tasks, starts, feed, write, part, parts, share)
            os.close(write)
            children.append(_CellProcess(pid, read, pipeline))
    except BaseException:
        for child in children:
            child.stop()
        os.close(feed.fd)
        raise
    if not children:  # (no fork could be made: every cell here, as one process runs them)
        os.close(feed.fd)
        return stream_cell_batches(pipeline.queue, tasks, pipeline.cell, workers)
    pipeline.calls.share(0, parts)

    async def cell(pair: tuple[int, Any]) -> None:
        await pipeline.cell(pair[1])

    return _closing(stream_cell_batches(pipeline.queue, _fed(tasks, starts, feed), cell, share,
                                        also=[c.finished() for c in children]), children, feed)


async def _closing(batches: AsyncIterator[list[Event]], children: list[_CellProcess],
                   feed: _Feed) -> AsyncIterator[list[Event]]:
    """`batches`; however they end, the cell processes are stopped (killed unless they finished) and reaped."""
    try:
        async with contextlib.aclosing(batches):  # type: ignore[type-var]
            async for batch in batches:
                yield batch
    finally:
        for child in children:
            child.stop()
        os.close(feed.fd)


class _CellProcess:
    """A forked cell process, seen from the run's: its frames read as they come (the loop's reader)."""

    def __init__(self, pid: int, fd: int, pipeline: Pipeline) -> None:
        self.pid, self.fd, self.pipeline = pid, fd, pipeline
        self.buffer = bytearray()
        self.summary: dict[str, Any] | None = None
        self.ended: asyncio.Future[None] | None = None
        self.reaped = False

    async def finished(self) -> None:
        """Reads the process's frames until it ends; raises OSError when it ended before its cells did."""
        loop = asyncio.get_running_loop()
        self.ended = loop.create_future()
        os.set_blocking(self.fd, False)
        loop.add_reader(self.fd, self._readable)
        try:
            await self.ended
        finally:
            loop.remove_reader(self.fd)
        summary, run = self.summary or {}, self.pipeline.format
        run.calls.calls += summary.get("calls", 0)
        run.calls.cached += summary.get("cached", 0)
        run.resumed_cells += summary.get("resumed", 0)
        if summary.get("format") is not None:
            run.adopted_run(summary["format"])

    def _readable(self) -> None:
        assert self.ended is not None
        if self.ended.done():
            return
        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return
        except OSError as exc:
            self.ended.set_exception(exc)
            return
        try:
            if not data:
                self._reap()
                if self.summary is None or "error" in self.summary:
                    why = (self.summary or {}).get("error") or f"exit status {self._status}"
                    self.ended.set_exception(OSError(
                        f"a cell process of the run (PID {self.pid}) ended before its cells did ({why}); "
                        "--resume runs what it left"))
                else:
                    self.ended.set_result(None)
                return
            self.buffer += data
            self._frames()
        except Exception as exc:
            self.ended.set_exception(exc)

    def _frames(self) -> None:
        buffer, at = self.buffer, 0
        pipeline = self.pipeline
        journal, queue, run = pipeline.journal, pipeline.queue, pipeline.format
        assert journal is not None
        while len(buffer) - at >= 4:
            size = int.from_bytes(buffer[at:at + 4], "little")
            if len(buffer) - at - 4 < size:
                break
            records, events, end = pickle.loads(memoryview(buffer)[at + 4:at + 4 + size])
            at += 4 + size
            if records:
                # what the other process's calls cost, in this run's spend (its rows have their own per cell)
                pipeline.cost.spend.restore((r for r in records if type(r) is Usage), cells=False)
                kept = run.adopted(records)
                if kept:
                    journal.write(*kept)
            for event in events:
                queue.put_nowait(event)
            if end is not None:
                self.summary = end
        del buffer[:at]

    _status: int | str = "unknown"

    def _reap(self) -> None:
        if self.reaped:
            return
        self.reaped = True
        with contextlib.suppress(ChildProcessError):
            _, status = os.waitpid(self.pid, 0)
            self._status = os.waitstatus_to_exitcode(status)

    def stop(self) -> None:
        """Killed unless it ended, then reaped; its pipe closed."""
        if not self.reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()
        with contextlib.suppress(OSError):
            os.close(self.fd)


# --- the frames --------------------------------------------------------------------------------------
# The records and events are frozen dataclasses with slots, which pickle by default through Python-level
# __getstate__/__setstate__ (dataclasses.fields() each time): ~340 k instructions a cell, a fifth of the
# cell's own work. Pickled as (class, field values) instead, they are made again by their __init__.
_TABLE: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _table() -> dict[type, Callable[[Any], tuple[Any, ...]]]:
    if not _TABLE:
        from .events import Cell, Event
        from .journal import records

        kinds: set[type] = {Handed, *(c for c in vars(records).values() if isinstance(c, type) and dataclasses.is_dataclass(c)
                           and c.__module__ == records.__name__)}
        todo: list[type] = [Event]
        while todo:
            event = todo.pop()
            kinds.add(event)
            todo.extend(event.__subclasses__())
        for kind in kinds:
            _TABLE[kind] = _reducer(kind)
        _TABLE[Cell] = lambda cell: (Cell, (cell.item, cell.model))  # (a NamedTuple: copyreg's NEWOBJ else)
    return _TABLE


def _reducer(kind: type) -> Callable[[Any], tuple[Any, ...]]:
    names = [f.name for f in dataclasses.fields(kind)]
    if not names:
        return lambda obj: (kind, ())
    if len(names) == 1:
        name = names[0]
        return lambda obj: (kind, (getattr(obj, name),))
    values = operator.attrgetter(*names)
    return lambda obj: (kind, values(obj))


# --- the cell process ------------------------------------------------------------------------------

def _child(pipeline: Pipeline, tasks: Any, starts: list[int], feed: _Feed, out: int, part: int, parts: int,
           workers: int) -> NoReturn:
    code = 1
    try:
        detach(os.getppid())
        pipeline.calls.share(part, parts)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        code = loop.run_until_complete(_cells(pipeline, tasks, starts, feed, out, workers))
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            _send(out, [], [], {"error": f"{type(exc).__name__}: {exc}"})
    finally:
        os._exit(code)


async def _cells(pipeline: Pipeline, tasks: Any, starts: list[int], feed: _Feed, out: int, workers: int) -> int:
    sent: list[Any] = []
    assert pipeline.journal is not None
    pipeline.journal.divert(sent)
    run, queue = pipeline.format, pipeline.queue
    run.forked()
    while not queue.empty():  # (nothing is queued as the cells start; the run's process reports what was)
        queue.get_nowait()

    async def cell(pair: tuple[int, Any]) -> None:
        await pipeline.cell(pair[1])
        sent.append(Handed(pair[0], run.handed(pair[1])))

    try:
        async with contextlib.aclosing(stream_cell_batches(queue, _fed(tasks, starts, feed), cell, workers)) \
                as batches:
            async for batch in batches:
                _send(out, sent, batch, None)
                sent.clear()
        _send(out, sent, [], {"calls": pipeline.calls.calls, "cached": pipeline.calls.cached,
                              "resumed": run.resumed_cells, "format": run.handed_run()})
    finally:
        await pipeline.calls.aclose()
    return 0


def _send(out: int, records: list[Any], events: list[Any], end: dict[str, Any] | None) -> None:
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _table()
    pickler.dump((records, events, end))
    view = buffer.getbuffer()
    view[:4] = (len(view) - 4).to_bytes(4, "little")
    while view:
        view = view[os.write(out, view):]

