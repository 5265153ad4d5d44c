"""The engine worker processes (evalspec/ide/worker.py) as the LSP process sees them.

A document stays on one worker (the one with the fewest documents when first asked), moving only when
its worker has been busy with another document's job past `stall_s`. Before a job the worker is sent
the open texts it has not got, the closings, and the document's run board. `call` answers (status,
value); past its budget a job is LATE ("still checking") and cancelled in the worker if not started.
A worker that dies or is busy past the timeout (then killed) is replaced at once by the spare, a
worker in standby given the open texts (once checked, or before any check; never one that stopped a
worker) and analysing them while idle; `on_restart` tells the server. A worker past its memory bound,
or holding no analysis but still bloated, is replaced the same way between jobs, silently.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalspec.ide import wire

log = logging.getLogger(__name__)

LATE, STALE, GONE, ERROR, OK = "late", "stale", "gone", "error", "ok"
BACKLOG = 4 << 20  # bytes waiting in a worker's pipe past which no more is sent for requests
READY = 0  # the job id of what a worker says once its engine is loaded (jobs count from 1)
GIVE_UP_AFTER = 3  # workers in a row that died before answering anything: no more are started
RECYCLE_OVER = 16 << 20  # a worker holding no analysis and this much bigger than when it had loaded is replaced
Text = tuple[int, str, bool, Path | None]  # an open document: version, text, whether the spare may hold it, path


@dataclass(eq=False)
class Job:
    id: int
    uri: str | None
    version: int | None
    future: asyncio.Future[tuple[str, Any]]
    sent: float = field(default_factory=time.monotonic)


class WorkerProcess:
    def __init__(self, slot: int) -> None:
        self.slot = slot
        self.proc: subprocess.Popen[bytes] | None = None
        self.pipe: asyncio.WriteTransport | None = None  # to its stdin
        self.started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.ready: asyncio.Future[bool] = asyncio.get_running_loop().create_future()  # True: it has loaded the analysis
        self.loaded: asyncio.Future[bool] = asyncio.get_running_loop().create_future()  # True: all it loads
        self.jobs: dict[int, Job] = {}  # sent and not answered, in the order sent
        self.texts: dict[str, int] = {}  # uri -> the version it has
        self.boards: dict[str, int] = {}  # uri -> the run board generation it has
        self.context: Any = None
        self.heard = time.monotonic()
        self.answered = 0
        self.rss = self.loaded_rss = 0
        self.analysed: dict[str, int] = {}  # in standby: uri -> the version it has analysed
        self.retiring = False  # replaced on purpose: its end is no failure
        self.launched = False  # its process started (or starting)

    def send(self, message: Any) -> None:
        assert self.pipe is not None
        self.pipe.write(wire.frame(message))

    def busy_for(self, now: float) -> float:
        """How long it has been on its current job (loading the engine first is not counted)."""
        if not self.jobs or not self.ready.done():
            return 0.0
        return now - max(self.heard, next(iter(self.jobs.values())).sent)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()


class EngineWorkers:
    def __init__(self, command: list[str], count: int, *, texts: Callable[[], dict[str, Text]],
                 on_restart: Callable[[str, Job | None], None]) -> None:
        self.command = command
        self.count = count
        self.texts = texts  # uri -> (version, text, whether the spare may hold it, path) of every open document
        self.on_restart = on_restart  # (why, the job it died on) after a worker was replaced
        self.timeout_s = 30.0
        self.board_s = 0.0  # what sending the last run board took (pickling it: a run's lenses refresh by it)
        self.stall_s = 1.0
        self.assigned: dict[str, int] = {}  # uri -> slot
        self.spare: WorkerProcess | None = None  # in standby: the checked texts, analysed when idle
        self.memory_bytes = 2048 << 20
        self.context: Any = None
        self.workers: list[WorkerProcess] = []
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._failures = 0
        self._replaced = 0.0  # when a worker was last replaced
        self._watch: asyncio.TimerHandle | None = None
        self._closed = False

    def start(self) -> None:
        """The first worker starts in the background (requests wait for it); the spare and the others
        once it has loaded all it loads: processes loading the engine at once on two cores slow the
        first answer (`_keep_spare`)."""
        self.workers = [WorkerProcess(slot) for slot in range(self.count)]
        self._launch(self.workers[0])
        self._watch = asyncio.get_running_loop().call_later(0.5, self._watchdog)

    def _spawn(self, slot: int) -> WorkerProcess:
        worker = WorkerProcess(slot)
        self._launch(worker)
        return worker

    def _launch(self, worker: WorkerProcess) -> None:
        if not worker.launched:
            worker.launched = True
            task = asyncio.ensure_future(self._run(worker))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _successor(self, slot: int) -> WorkerProcess:
        """A worker for `slot`: the spare out of standby, keeping the analyses of the documents of this
        slot and of any other whose worker is dead too; else (no spare, or one past the memory bound
        itself) a new process, and the slot's documents go to a worker that has analysed them."""
        worker, self.spare, self._replaced = self.spare, None, time.monotonic()
        if worker is None or worker.proc is None or worker.proc.poll() is not None or worker.rss > self.memory_bytes:
            if worker is not None:
                worker.retiring = True
                worker.kill()
            for uri in [u for u, s in self.assigned.items() if s == slot]:
                holder = next((w for w in self.workers if uri in w.analysed and w.proc and w.proc.poll() is None), None)
                if holder is not None:
                    self.assigned[uri] = holder.slot
            return self._spawn(slot)
        worker.slot = slot
        alive = {w.slot for w in self.workers if w.proc is not None and w.proc.poll() is None} - {slot}
        with contextlib.suppress(Exception):
            worker.send(("standby", False))
            for uri in [u for u in worker.texts if self.assigned.get(u) in alive]:
                worker.send(("close", uri))  # a live worker's document: the text comes back with the next sync
                del worker.texts[uri]
                worker.analysed.pop(uri, None)
        return worker

    async def _run(self, worker: WorkerProcess) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        try:
            worker.proc = proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert proc.stdin is not None and proc.stdout is not None
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proc.stdout)
            worker.pipe, _ = await loop.connect_write_pipe(asyncio.Protocol, proc.stdin)
        except OSError as exc:
            worker.started.set_exception(exc)
            settle(worker.ready, worker.loaded)
            log.error("could not start an engine worker: %s", exc)
            return
        worker.started.set_result(None)
        try:
            while True:
                _, job_id, status, value, rss = await wire.read_async(reader)
                worker.heard, worker.rss = time.monotonic(), rss
                if job_id == READY and status == "loaded":  # all it loads: `rss` its size then
                    worker.loaded_rss = rss
                    if not worker.loaded.done():
                        worker.loaded.set_result(True)
                        loop.call_soon(self._keep_spare)
                    continue
                if job_id == READY:  # started, analysed a text in standby or closed one: `value` what it has analysed
                    worker.analysed = value or {}
                    if not worker.ready.done():
                        worker.loaded_rss = rss
                        worker.ready.set_result(True)
                    elif (not worker.analysed and not worker.jobs and worker.loaded.done()
                          and rss > worker.loaded_rss + RECYCLE_OVER):  # (its size once loaded is known)
                        log.info("engine worker %d holds no analysis and uses %d MB: replaced", worker.slot, rss >> 20)
                        self._replace(worker, "memory")  # the allocator does not give it all back
                    continue
                worker.answered += 1
                self._failures = 0
                job = worker.jobs.pop(job_id, None)
                if job is not None and not job.future.done():
                    job.future.set_result((status, value))
                    loop.call_soon(self._keep_spare)  # a check done: the spare gets that text at once
                if not worker.jobs and rss > self.memory_bytes and not worker.retiring:
                    log.info("engine worker %d uses %d MB: replaced", worker.slot, rss >> 20)
                    self._replace(worker, "memory")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:
            log.exception("reading from an engine worker failed")
        settle(worker.ready, worker.loaded)
        worker.kill()
        while (code := proc.poll()) is None:
            await asyncio.sleep(0.01)
        if not worker.retiring:
            self._died(worker, code)

    def _replace(self, worker: WorkerProcess, why: str) -> None:
        worker.retiring = True
        if self.workers and worker.slot >= 0 and self.workers[worker.slot] is worker:
            self.workers[worker.slot] = self._successor(worker.slot)
        elif worker is self.spare:
            self.spare = None  # another starts once the workers are idle
        with contextlib.suppress(Exception):
            assert worker.pipe is not None
            worker.pipe.close()  # it exits when it has read everything
        settle(*(job.future for job in worker.jobs.values()), value=(GONE, None))
        self.on_restart(why, None)

    def _died(self, worker: WorkerProcess, code: int | None) -> None:
        culprit = next(iter(worker.jobs.values()), None)
        settle(*(job.future for job in worker.jobs.values()), value=(GONE, None))
        worker.jobs.clear()
        if worker.answered == 0 and (worker.slot >= 0 or not worker.ready.result()):
            self._failures += 1  # a worker that died before answering anything, a spare before loading
        if not self.workers or worker.slot < 0 or self.workers[worker.slot] is not worker:
            return  # shut down, or the spare (another starts once the workers are idle)
        if self._failures >= GIVE_UP_AFTER:
            log.error("engine workers keep failing to start (exit code %s): no more are started", code)
            self.on_restart(f"gave up (exit code {code})", culprit)
            return
        why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        log.warning("engine worker %d stopped (%s): replaced", worker.slot, why)
        self.workers[worker.slot] = self._successor(worker.slot)
        self.on_restart(why, culprit)

    def _watchdog(self) -> None:
        now, texts = time.monotonic(), self.texts()
        for worker in self.workers:
            if worker.busy_for(now) > self.timeout_s and not worker.retiring:
                log.warning("engine worker %d has not answered for %.0f s: killed", worker.slot, worker.busy_for(now))
                worker.kill()  # _run sees it end and replaces it
            with contextlib.suppress(Exception):  # a closed document's analysis goes now, not at the next job
                self._close_gone(worker, texts)
        self._keep_spare()
        self._watch = asyncio.get_running_loop().call_later(0.5, self._watchdog)

    def _keep_spare(self) -> None:
        """Start the spare (and the workers not started yet) once the started workers have loaded all
        they load, and not in the 2 s after one was replaced; give it the texts it may hold (checked, or
        never checked yet) once it has read what it was sent."""
        if self._closed or not self.workers or self._failures >= GIVE_UP_AFTER:
            return
        spare = self.spare
        if spare is None or (spare.started.done() and (spare.proc is None or spare.proc.poll() is not None)):
            if all(w.loaded.done() for w in self.workers if w.launched) and time.monotonic() > self._replaced + 2:
                self.spare = self._spawn(-1)
                for worker in self.workers:  # the others with it: a document given to a worker still to
                    self._launch(worker)  # start waits for its engine, and VS Code does not ask for an outline again
            return
        if not spare.ready.done() or spare.pipe is None or spare.pipe.get_write_buffer_size():
            return
        with contextlib.suppress(Exception):
            if spare.context is None:
                spare.send(("standby", True))
            self._sync_texts(spare, self.texts(), spare=True)

    def worker_of(self, uri: str | None) -> WorkerProcess:
        if uri is None:
            return self.workers[0]
        slot = self.assigned.get(uri)
        now = time.monotonic()
        if slot is not None:
            worker = self.workers[slot]
            running = next(iter(worker.jobs.values()), None)
            if running is None or running.uri == uri or worker.busy_for(now) < self.stall_s:
                return worker
        free = [w for w in self.workers if w.busy_for(now) < self.stall_s] or self.workers
        load = collections.Counter(self.assigned.values())
        best = min(free, key=lambda w: (load[w.slot], w.slot))
        if slot is not None and slot != best.slot:
            log.info("%s moves from engine worker %d (busy) to %d", uri.rsplit("/", 1)[-1], slot, best.slot)
            old = self.workers[slot]
            for job in old.jobs.values():  # asked there, answered there without the document: ask again
                if job.uri == uri and not job.future.done():
                    job.future.set_result((LATE, None))
            if uri in old.texts:
                with contextlib.suppress(Exception):
                    old.send(("close", uri))  # its analysis there goes (the text comes back with the next sync)
                del old.texts[uri]
        self.assigned[uri] = best.slot
        return best

    async def call(self, name: str, uri: str | None, version: int | None, *args: Any,
                   budget: float | None = None, board: tuple[int, Any] | None = None,
                   slot: int | None = None) -> tuple[str, Any]:
        """The worker's (status, value) for job `name` about document `uri` at `version` (any when None);
        (LATE, None) past `budget` seconds. `slot`: that worker rather than the document's."""
        if not self.workers:
            return GONE, None
        worker = self.worker_of(uri) if slot is None else self.workers[slot]
        if self._failures >= GIVE_UP_AFTER:
            return ERROR, "the engine worker cannot start (see the server's log)"
        if slot is not None and not worker.launched:
            return GONE, None
        self._launch(worker)
        if not worker.started.done():
            try:
                await asyncio.wait_for(asyncio.shield(worker.started), budget)
            except TimeoutError:
                return LATE, None
        if worker.started.exception() is not None or worker.proc is None or worker.proc.poll() is not None:
            return GONE, None
        while worker.pipe is not None and worker.pipe.get_write_buffer_size() > BACKLOG:
            # The worker is behind on texts: a request is "late" at once; a check waits its turn.
            if budget is not None:
                return LATE, None
            await asyncio.sleep(0.05)
        self._sync(worker, uri, board)
        job = Job(next(self._ids), uri, version, asyncio.get_running_loop().create_future())
        worker.jobs[job.id] = job
        worker.send(("job", job.id, name, uri, version, args))
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), budget)
        except TimeoutError:
            with contextlib.suppress(Exception):
                worker.send(("cancel", job.id))  # skipped there if it has not started
            return LATE, None

    def _sync(self, worker: WorkerProcess, uri: str | None, board: tuple[int, Any] | None) -> None:
        texts = self.texts()
        for gone in [u for u in self.assigned if u not in texts]:
            del self.assigned[gone]
        self._sync_texts(worker, texts)
        if uri is not None and board is not None and worker.boards.get(uri) != board[0] and uri in texts:
            started = time.perf_counter()
            worker.send(("board", uri, board[1]))
            self.board_s = time.perf_counter() - started
            worker.boards[uri] = board[0]

    def _sync_texts(self, worker: WorkerProcess, texts: dict[str, Text], spare: bool = False) -> None:
        if worker.context is not self.context:
            worker.send(("init", self.context))
            worker.context = self.context
        self._close_gone(worker, texts)
        for doc_uri, (version, text, checked, path) in texts.items():
            if worker.texts.get(doc_uri) != version and (checked or not spare):
                worker.send(("text", doc_uri, path, version, text))
                worker.texts[doc_uri] = version

    @staticmethod
    def _close_gone(worker: WorkerProcess, texts: dict[str, Any]) -> None:
        for closed in [u for u in worker.texts if u not in texts]:
            worker.send(("close", closed))
            del worker.texts[closed]
            worker.boards.pop(closed, None)

    def state(self) -> dict[str, Any]:
        """Per worker {"pid", "jobs", "rss", "assigned": its documents}; the spare's pid and what it
        has analysed ([uri, version] pairs)."""
        spare = self.spare
        return {"workers": [{"pid": w.proc.pid if w.proc else None, "jobs": len(w.jobs), "rss": w.rss,
                             "assigned": sorted(u for u, s in self.assigned.items() if s == w.slot)}
                            for w in self.workers],
                "spare": {"pid": spare.proc.pid if spare and spare.proc else None,
                          "analysed": sorted(spare.analysed.items()) if spare else []}}

    def shutdown(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
        self._closed = True
        workers, self.workers = self.workers + ([self.spare] if self.spare else []), []
        self.spare = None
        for worker in workers:
            worker.retiring = True
            with contextlib.suppress(Exception):
                assert worker.pipe is not None
                worker.pipe.close()
            worker.kill()


def settle(*futures: asyncio.Future[Any], value: Any = False) -> None:
    """Give each future not done yet `value`."""
    for future in futures:
        if not future.done():
            future.set_result(value)


def worker_command(log_level: str, log_file: str | None) -> list[str]:
    return [sys.executable, "-m", "evalspec_lsp.worker", log_level, log_file or ""]
