"""Open documents: their latest text and version, their analyzer, and the analysis of each version.

Analysis is CPU-bound Python, so it runs on worker threads, never on the event loop: requests
(completion, hover…) keep flowing while a large file is checked, and a slow analysis of one document
does not hold up another's (up to `MAX_PARALLEL` documents at once; the threads are daemons, so even
an analysis that never ends cannot keep the server from exiting). The rules:

- didOpen starts an analysis at once; didChange starts one after a quiet period (the debounce), so a
  burst of keystrokes costs one analysis, not one per key.
- A request that needs positions (completion, hover…) does not wait for the debounce: it starts the
  analysis of the version it was asked about immediately and awaits it.
- An analysis whose version was superseded before it started, and that no request waits for, is
  skipped. One that finishes after a newer version arrived is kept for the requests that asked for it,
  but is never announced as fresh (so no diagnostics are published for a stale version).
- Each document has at most one analysis running at a time: `DocumentAnalyzer` keeps state between
  runs (the last format seen; later the previous tree, to re-analyse incrementally).
- Analyses read other files through `OpenDocumentsSource` (open documents first, then the disk) and
  record which (`Analysis.dependencies`). When one of those changes (its open text is edited, it is
  opened, saved or closed, or the client reports it changed on disk) the documents that read it are
  checked again, after the same debounce.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from evalspec.analysis import Analysis
from evalspec.detect import FileKind
from evalspec.incremental import DocumentAnalyzer
from evalspec.source import gc_paused
from evalspec.yielding import Abandoned, yield_point

from . import workers
from .bare_cr import BARE_CRS, dataset_crs
from .convert import path_of
from .freeing import free_later
from .open_files import OpenDocumentsSource

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_DEBOUNCE_S = 0.075
MAX_PARALLEL = 3  # documents analysed at the same time
UNFREEZE_UNDER = 256 * 1024  # characters of open documents under which closing one unfreezes the collector


def in_thread(fn: Callable[..., T], *args: Any, foreground: bool = False,
              stop: workers.Stop | None = None) -> asyncio.Future[T]:
    """Run `fn(*args)` on a worker thread (workers.py: daemon threads, reused); its result or exception
    comes back on the event loop. `foreground`: a request's work, which background work (analyses)
    gives way to.

    Daemon threads, not a ThreadPoolExecutor: its workers are joined at exit, so one analysis stuck on
    some pathological text would keep the server process alive after `exit`.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    # Background work waits until the result is back on the loop, not only until it is made.
    hold = workers.ForegroundHold() if foreground else None

    def settle(ok: bool, value: Any) -> None:
        if hold is not None:
            hold.release()
        if future.done():
            return
        if ok:
            future.set_result(value)
        elif isinstance(value, Abandoned):  # stopped on `stop`: nobody waits for it
            future.cancel()
        else:
            future.set_exception(value)

    def done(ok: bool, value: Any) -> None:
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            if hold is not None:
                hold.release()

    workers.run_in_worker(fn, args, done, foreground=foreground, stop=stop)
    return future


@dataclass(eq=False)
class Job:
    """The analysis of one version of one document."""

    version: int
    text: str
    future: asyncio.Future[Analysis | None]
    timer: asyncio.TimerHandle | None = None
    started: bool = False
    needed: int = 0  # requests waiting for exactly this version: it must run even if superseded
    slot: asyncio.Future[None] | None = None  # its place in the queue for an analysis slot (Slots)


class Slots:
    """`MAX_PARALLEL` analyses at a time, in the order asked for, except that one a request waits for
    goes first: after 10,000 documents were opened at once, a hover on the last one waited for the
    analyses of the 9,999 before it."""

    def __init__(self, n: int) -> None:
        self.free = n
        self._queue: deque[asyncio.Future[None]] = deque()
        self._urgent: deque[asyncio.Future[None]] = deque()  # a request waits for these; some are in both

    async def acquire(self, job: Job) -> None:
        if self.free > 0 and not self._queue and not self._urgent:
            self.free -= 1
            return
        job.slot = place = asyncio.get_running_loop().create_future()
        (self._urgent if job.needed else self._queue).append(place)
        try:
            await place
        except asyncio.CancelledError:
            if place.done() and not place.cancelled():  # given the slot, then cancelled: pass it on
                self.release()
            raise
        finally:
            job.slot = None

    def hurry(self, job: Job) -> None:
        """A request now waits for `job`: if it is queued for a slot, it goes to the front."""
        if job.slot is not None and not job.slot.done():
            self._urgent.append(job.slot)

    def release(self) -> None:
        for queue in (self._urgent, self._queue):
            while queue:
                place = queue.popleft()
                if not place.done():
                    place.set_result(None)
                    return
        self.free += 1


@dataclass(eq=False)
class DocumentState:
    uri: str
    path: Path | None
    analyzer: DocumentAnalyzer
    version: int
    text: str
    analysis: Analysis | None = None
    analysis_version: int | None = None
    jobs: dict[int, Job] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    rechecks: int = 0  # analyses started because a file this document reads changed

    @property
    def is_eval_file(self) -> bool:
        return self.analysis is not None and self.analysis.kind is not FileKind.NONE

    @property
    def fresh(self) -> bool:
        return self.analysis_version == self.version


class Documents:
    def __init__(self, on_fresh: Callable[[DocumentState], None],
                 on_error: Callable[[DocumentState, Exception], None], *,
                 debounce_s: float = DEFAULT_DEBOUNCE_S,
                 analyzer: Callable[[Path | None], DocumentAnalyzer] | None = None,
                 prepare: Callable[[DocumentState, Analysis], None] | None = None) -> None:
        self.on_fresh = on_fresh  # called on the event loop when the current version has been analysed
        # Called on the analysis thread with each new analysis: what every client asks for next (its
        # diagnostics) is derived there, in the analysis's memo, rather than on the event loop.
        self.prepare = prepare
        self.on_error = on_error  # called when an analysis raised; the server keeps serving
        self.debounce_s = debounce_s
        self.files = OpenDocumentsSource(self._open_text)
        self._new_analyzer = analyzer or (lambda path: DocumentAnalyzer(path, source=self.files))
        self._states: dict[str, DocumentState] = {}
        # Indexes, so that one message costs the same with 10,000 documents open as with one (a scan of
        # every document per edit and per file an analysis read made opening 10,000 take minutes):
        # the first open document at each absolute path, and the URIs whose last analysis read a path.
        self._at_path: dict[str, DocumentState] = {}
        self._readers: dict[str, set[str]] = {}
        self._read_by: dict[str, frozenset[str]] = {}  # uri -> the paths indexed for it
        self._opened: dict[str, int] = {}  # uri -> when it opened, to keep re-checks in that order
        self._opening = itertools.count()
        # A few documents at once, not one: they contend for the GIL, but a small file is no longer
        # queued behind a large one; a bound keeps memory flat.
        self._slots = Slots(MAX_PARALLEL)
        self._tasks: set[asyncio.Task[None]] = set()

    def get(self, uri: str) -> DocumentState | None:
        return self._states.get(uri)

    def open_uris(self) -> list[str]:
        return list(self._states)

    def by_path(self, path: Path) -> DocumentState | None:
        state = self._at_path.get(os.path.abspath(path))  # one dict read: the analysis thread asks too
        if state is not None and state.path == path:
            return state
        for state in list(self._states.values()):  # a path spelt otherwise (rare): a snapshot scan
            if state.path == path:
                return state
        return None

    def _open_text(self, path: Path) -> str | None:
        """The editor's text of the open document at `path` (absolute), for the analysis thread."""
        state = self._at_path.get(str(path))
        return state.text if state is not None else None

    def _index_path(self, state: DocumentState) -> None:
        if state.path is not None:
            self._at_path.setdefault(os.path.abspath(state.path), state)

    def _unindex(self, state: DocumentState) -> None:
        if state.path is not None:
            key = os.path.abspath(state.path)
            if self._at_path.get(key) is state:
                del self._at_path[key]
                for other in self._states.values():  # another URI for the same file takes its place
                    if other.path is not None and os.path.abspath(other.path) == key:
                        self._at_path[key] = other
                        break
        self._index_reads(state, None)

    def _index_reads(self, state: DocumentState, analysis: Analysis | None) -> None:
        """Note which paths the document's current analysis read (none when it is closed)."""
        old = self._read_by.pop(state.uri, frozenset())
        new = frozenset(str(p) for p in analysis.dependencies) if analysis is not None else frozenset()
        for p in old - new:
            readers = self._readers.get(p)
            if readers is not None:
                readers.discard(state.uri)
                if not readers:
                    del self._readers[p]
        for p in new - old:
            self._readers.setdefault(p, set()).add(state.uri)
        if new:
            self._read_by[state.uri] = new

    # --- notifications ------------------------------------------------------------------------------

    def open(self, uri: str, version: int, text: str) -> DocumentState:
        path = path_of(uri)
        state = DocumentState(uri, path, self._new_analyzer(path), version, text)
        previous = self._states.get(uri)
        if previous is not None:  # opened again without a close
            self._unindex(previous)
        self._states[uri] = state
        if previous is None:
            self._opened[uri] = next(self._opening)
        self._index_path(state)
        self._update(state, version, text, delay=0.0)
        self.files_changed([path], besides=uri)  # its buffer now stands in for the file on disk
        return state

    def change(self, uri: str, version: int, text: str) -> None:
        state = self._states.get(uri)
        if state is None:  # a change for a document we were never told about: treat it as an open
            self.open(uri, version, text)
            return
        self._update(state, version, text, delay=self.debounce_s)
        self.files_changed([state.path], besides=uri)

    def close(self, uri: str) -> DocumentState | None:
        state = self._states.pop(uri, None)
        if sum(len(s.text) for s in self._states.values()) <= UNFREEZE_UNDER:
            # Let the collector see what closed documents left in cycles. Not while a large document
            # stays open: its analysis, unfrozen, would be scanned by the next full collection, one C
            # call holding the GIL for a second; the cycles wait until the large documents close.
            gc.unfreeze()
        if state is not None:
            self._unindex(state)
            self._opened.pop(uri, None)
            self._drop_unstarted(state)
            self.files_changed([state.path])  # readers of its buffer go back to the file on disk
        return state

    def files_changed(self, paths: Iterable[Path | None], *, besides: str | None = None) -> list[str]:
        """Check again every open document whose last analysis read one of `paths` (other than the
        document `besides`); their URIs."""
        changed = {os.path.abspath(p) for p in paths if p is not None}
        readers = {uri for p in changed for uri in self._readers.get(p, ())}
        again = []
        for uri in sorted(readers, key=lambda u: self._opened.get(u, 0)):  # in the order they opened
            state = self._states.get(uri)
            if state is None:
                continue
            if state.uri == besides or state.analysis is None:
                continue
            if any(str(p) in changed for p in state.analysis.dependencies):
                state.rechecks += 1
                self._update(state, state.version, state.text, delay=self.debounce_s)
                again.append(state.uri)
        return again

    def shutdown(self) -> None:
        for state in self._states.values():
            self._drop_unstarted(state)

    # --- awaiting analyses --------------------------------------------------------------------------

    async def current(self, uri: str) -> tuple[int, Analysis] | None:
        """The document's version now and its analysis, started at once if the debounce holds it back.

        For requests that carry positions: the analysis matches the text those positions refer to,
        even if the client sends more changes meanwhile.
        """
        state = self._states.get(uri)
        if state is None:
            return None
        version = state.version
        if state.fresh and state.analysis is not None:
            return version, state.analysis
        job = state.jobs.get(version) or self._new_job(state, version, state.text)
        job.needed += 1
        try:
            self._start(state, job)
            self._slots.hurry(job)
            analysis = await asyncio.shield(job.future)
        finally:
            job.needed -= 1
        return (version, analysis) if analysis is not None else None

    async def settled(self, uri: str) -> Analysis | None:
        """The analysis of the latest version, after the debounce (for pulled diagnostics).

        Follows newer versions as they arrive, so the answer is never for a text the client has left.
        """
        while True:
            state = self._states.get(uri)
            if state is None:
                return None
            if state.fresh:
                return state.analysis
            job = state.jobs.get(state.version)
            if job is None:  # the last run of this version failed: try again
                job = self._new_job(state, state.version, state.text)
                self._start(state, job)
            await asyncio.shield(job.future)

    # --- scheduling ---------------------------------------------------------------------------------

    def _update(self, state: DocumentState, version: int, text: str, delay: float) -> None:
        state.version, state.text = version, text
        self._drop_unstarted(state)
        job = self._new_job(state, version, text)
        if delay <= 0:
            self._start(state, job)
        else:
            job.timer = asyncio.get_running_loop().call_later(delay, self._start, state, job)

    def _new_job(self, state: DocumentState, version: int, text: str) -> Job:
        job = Job(version, text, asyncio.get_running_loop().create_future())
        state.jobs[version] = job
        return job

    def _drop_unstarted(self, state: DocumentState) -> None:
        """Superseded before the debounce ran out: nobody needs these (a request would have started them)."""
        for version, job in list(state.jobs.items()):
            if not job.started:
                if job.timer is not None:
                    job.timer.cancel()
                del state.jobs[version]
                if not job.future.done():
                    job.future.set_result(None)

    def _start(self, state: DocumentState, job: Job) -> None:
        if job.started:
            return
        job.started = True
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        task = asyncio.get_running_loop().create_task(self._run(state, job))
        self._tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._tasks.discard)

    async def _run(self, state: DocumentState, job: Job) -> None:
        try:
            async with state.lock:
                await self._slots.acquire(job)
                try:
                    result = await in_thread(self._analyse, state, job)
                finally:
                    self._slots.release()
        except BaseException as exc:
            if state.jobs.get(job.version) is job:
                del state.jobs[job.version]
            if not job.future.done():
                if isinstance(exc, asyncio.CancelledError):
                    job.future.cancel()
                else:
                    job.future.set_exception(exc)
                    job.future.exception()  # retrieved here, so an unawaited failure is not reported twice
            if not isinstance(exc, Exception):
                raise
            self.on_error(state, exc)
            return
        if result is not None and (state.analysis_version is None or job.version >= state.analysis_version):
            if self._states.get(state.uri) is state:
                self._index_reads(state, result)
            old, state.analysis, state.analysis_version = state.analysis, result, job.version
            if old is not None and old is not result:
                free_later(old)  # a large one freed here would hold the event loop for up to 2 s
            del old
        if state.jobs.get(job.version) is job:
            del state.jobs[job.version]
        if result is not None and job.version == state.version and self._states.get(state.uri) is state:
            try:
                self.on_fresh(state)  # publish before waking the requests: notification, then responses
            except Exception:
                log.exception("publishing the analysis of %s failed", state.uri)
        if not job.future.done():
            job.future.set_result(result)

    def _analyse(self, state: DocumentState, job: Job) -> Analysis | None:
        """On the worker thread. Skips the work when the text is already out of date and unwanted."""
        if job.version != state.version and job.needed == 0:
            return None
        # The message that started this analysis (a 4 MB didOpen) is often followed by a request the
        # loop is reading now: it goes first (yielding.py), before the parse's first yield point.
        yield_point()
        # An analysis leaves a large, long-lived, acyclic tree behind (a million objects for a
        # 50,000-line blueprint). Left to the cyclic collector, the next full pass would rescan it
        # for 0.3-0.7 s inside some later request; frozen, it is skipped, and reference counting
        # still frees it when the next analysis replaces it. Frozen before the collector comes back
        # on, so not even the young generation is scanned once (0.2-0.3 s after an edit that moves
        # every prompt of such a file). Thawed again on close (below).
        with gc_paused():
            result = state.analyzer.analyze(job.text)  # bare CRs read as line breaks there (line_breaks.py)
            # found here, not on the event loop (where server.index reads it)
            result.memo[BARE_CRS] = dataset_crs(job.text, state.path)
            if self.prepare is not None:
                try:
                    self.prepare(state, result)
                except Exception:  # the analysis stands; whoever needs the prepared data derives it later
                    log.exception("preparing the analysis of %s failed", state.uri)
            gc.freeze()
        return result
