"""Worker threads, kept for reuse, each job marked as a request's (foreground) or background work.

Starting a thread makes the starter wait until the new thread runs (`Thread.start`), which on the event
loop meant waiting for the interpreter lock while analyses held it: a hover computed on a new thread
each time paid that on every request. Here an idle worker takes the job from a queue and the loop goes
on at once. A job never waits behind another: when no worker is idle, one more is started (a job stuck
on pathological text holds its own thread only), and a worker idle for `IDLE_S` ends.

Background work (analyses, answers built ahead, freeing) gives way at the engine's yield points while
a request's work is under way (`loop_watch.LoopWatch.give_way`): from when it is submitted, not only
while it runs. A worker woken for a request's job must win the interpreter lock from the analysis that
holds it; counted from the start only, an analysis ran on meanwhile and a hover on a small file waited
40-230 ms (at load 17) for its worker to start. A caller may hold the count longer (`begin_foreground`,
`end_foreground`): `documents.in_thread` holds it until the job's result is on the event loop.

A job may carry a `Stop`: once set (nobody waits for the job's result any more), the job ends at its next
yield point (the loop watch's hook calls `stop_if_requested`), so requests answered "still checking"
leave no computation behind them.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from evalspec.yielding import Abandoned, is_kept

log = logging.getLogger(__name__)

IDLE_S = 30.0

class Stop:
    """A job's stop request: set (on any thread) once nobody waits for the job's result; the job then
    stops at its next yield point (`stop_if_requested`), unless it is work a memo keeps."""

    __slots__ = ("requested",)

    def __init__(self) -> None:
        self.requested = False


_jobs: queue.SimpleQueue[tuple[Callable[[], None], bool, Stop | None]] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0  # idle workers not yet promised a job
_local = threading.local()
_foreground = 0  # foreground jobs running
_running = 0  # jobs running, of either kind (`state`)
_threads = 0  # worker threads alive
no_foreground = threading.Event()  # set while none runs: background work waits on it, without polling
no_foreground.set()


def submit(job: Callable[[], None], *, foreground: bool, stop: Stop | None = None) -> None:
    """Run `job()` on a worker thread (it must catch its own exceptions); it ends early, at a yield
    point, once `stop` is requested."""
    global _idle, _threads
    if foreground:
        begin_foreground()  # ended by the worker when the job is done
    with _lock:
        spawn = _idle == 0
        if spawn:
            _threads += 1
        else:
            _idle -= 1  # promised this job: it is in the queue before that worker looks
    _jobs.put((job, foreground, stop))
    if spawn:
        threading.Thread(target=_work, name="evalspec-worker", daemon=True).start()


def stop_if_requested() -> None:
    """At a yield point: end this thread's job if its stop was requested and no memo keeps its work."""
    stop: Stop | None = getattr(_local, "stop", None)
    if stop is not None and stop.requested and not is_kept():
        raise Abandoned()


def state() -> dict[str, int]:
    """Jobs running now and worker threads alive (the server's `evalspec/workers` request)."""
    with _lock:
        return {"running": _running, "foreground": _foreground, "threads": _threads, "idle": _idle}


def is_foreground() -> bool:
    """Whether this thread runs a request's work (the event loop's thread counts as one)."""
    return bool(getattr(_local, "foreground", False))


def foreground_running() -> bool:
    return _foreground > 0


def begin_foreground() -> None:
    """A request's work is under way (until `end_foreground`): background work gives way."""
    global _foreground
    with _lock:
        _foreground += 1
        no_foreground.clear()


def end_foreground() -> None:
    global _foreground
    with _lock:
        _foreground -= 1
        if _foreground == 0:
            no_foreground.set()


class ForegroundHold:
    """One count of a request's work (`begin_foreground`), ended exactly once: by `release()`, or when
    the hold is dropped unreleased. A result handed to an event loop that then closes without running
    its callbacks (pytest-asyncio closes its loop so) never reached the `release()` in that callback,
    and the count stayed up for good: every later background job waited on it at each yield point."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        begin_foreground()
        self._held = True

    def release(self) -> None:
        with _lock:
            held, self._held = self._held, False
        if held:
            end_foreground()

    def __del__(self) -> None:  # the callback holding it was dropped without running
        self.release()


@contextlib.contextmanager
def as_foreground() -> Iterator[None]:
    """This thread runs a request's work (counted by `submit` already)."""
    _local.foreground = True
    try:
        yield
    finally:
        _local.foreground = False


def _work() -> None:
    global _idle, _running, _threads
    while True:
        try:
            job, foreground, stop = _jobs.get(timeout=IDLE_S)
        except queue.Empty:
            with _lock:
                # Idle workers beyond the jobs promised: this one may go. When none is left over, a job
                # may have been promised to this very worker (it is about to be queued): stay.
                if _idle > 0:
                    _idle -= 1
                    _threads -= 1
                    return
            continue
        with _lock:
            _running += 1
        _local.stop = stop
        try:
            if foreground:
                with as_foreground():
                    job()
            else:
                job()
        except BaseException:  # a job reports its own failures; this keeps the worker alive regardless
            log.exception("a worker job failed")
        finally:
            _local.stop = None
            if foreground:
                end_foreground()
            with _lock:
                _running -= 1
        del job, stop
        with _lock:
            _idle += 1


def run_in_worker(fn: Callable[..., Any], args: tuple[Any, ...], done: Callable[[bool, Any], None], *,
                  foreground: bool, stop: Stop | None = None) -> None:
    """`fn(*args)` on a worker; `done(True, result)` or `done(False, exception)` on that worker (`Abandoned`
    when it stopped on `stop`)."""

    def job() -> None:
        try:
            result = fn(*args)
        except BaseException as exc:
            done(False, exc)
            return
        done(True, result)

    submit(job, foreground=foreground, stop=stop)
