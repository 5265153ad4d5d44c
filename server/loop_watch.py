"""Requests before background work: worker threads pause while the event loop has something to do.

Analyses and large answers run on worker threads; requests are read, dispatched and answered on the
event loop. They share the interpreter lock, which a waiting thread gets only after the holder's
switch interval, and on a loaded machine (more runnable threads than cores) a holder that the kernel
has taken off its CPU gives it back only when it runs again. With three busy workers, a request's few
milliseconds of work on the loop took up to a second of wall time (`bench/lsp_big.py --busy 4`).

So every long loop of the engine and of the answers' builders passes `evalspec.yielding.yield_point()`,
and the hook installed here pauses the worker that reaches it while the loop has work: it is running
callbacks (not waiting in its selector), or its selector has a ready file descriptor (a message read,
a worker's result handed over) or a timer due (a request's budget running out). The loop then runs
alone. The watch needs no lock and no help from the loop thread, which cannot run Python while a
worker holds the interpreter: it reads a flag the selector sets around its wait, polls the selector's
own descriptor and looks at the loop's earliest timer.

The watch also keeps `lag`: how late the loop has been lately (a stretch of work between two looks at
its selector, a due timer still waiting when the selector returned, a request read but not yet
handled), which the server takes off a request's budget
(`EvalspecServer.remaining_budget`): on a machine loaded enough that the loop is late by a few hundred
milliseconds, a request still waiting for an analysis answers "still checking" sooner, so that with the
lateness before it was read and after its answer was ready it still comes back within a second.

Bounded both ways: a worker checks at most once a millisecond, waits at most `MAX_PAUSE_S` at one
point, and does not wait at all once the loop has been busy for longer than `STUCK_AFTER_S` (then it
is blocked on something, such as a client that does not read its output, that the pause cannot
speed up).
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import sys
import threading
import time
from typing import Any

from evalspec.yielding import set_yield_hook

from . import workers

log = logging.getLogger(__name__)

CHECK_EVERY_S = 0.001  # a worker looks at the loop at most this often
MAX_PAUSE_S = 0.05  # the longest pause at one yield point
STUCK_AFTER_S = 0.5  # a loop busy for longer is blocked, not answering: workers carry on
_SLEEP_S = 0.002
LAG_HALF_LIFE_S = 2.0  # a lateness seen counts half as much this much later


class Lag:
    """The event loop's recent lateness: the worst seen, halving every `LAG_HALF_LIFE_S` since."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.at = time.perf_counter()

    def note(self, late: float) -> None:
        now = time.perf_counter()
        if late > self.recent(now):
            self.worst, self.at = late, now

    def recent(self, now: float | None = None) -> float:
        if self.worst <= 0.0:
            return 0.0
        now = time.perf_counter() if now is None else now
        return self.worst * 0.5 ** ((now - self.at) / LAG_HALF_LIFE_S)


class LoopWatch:
    """Whether `loop` has work, readable from any thread without the interpreter lock's help."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.loop_thread = threading.get_ident()
        self.waiting = False  # the loop is inside its selector's wait
        self.busy_since = time.perf_counter()
        self.next_check = 0.0
        self.pauses = 0  # how many times a worker gave way (for tests and logs)
        self.lag = Lag()
        # Set while the loop waits in its selector: a paused worker waits on it instead of waking every
        # few milliseconds to look, each time taking the interpreter lock back from the loop (on a
        # loaded machine such a worker, once off its CPU, held the loop for tens of milliseconds each).
        self.idle = threading.Event()
        selector: Any = getattr(loop, "_selector", None)
        self.fd: int | None = None
        if selector is not None and hasattr(selector, "fileno"):
            self.fd = selector.fileno()
            real = selector.select

            def watched_select(timeout: float | None = None) -> Any:
                stretch = time.perf_counter() - self.busy_since
                if stretch > 0.05:  # whatever arrived meanwhile waited up to this long to be looked at
                    self.lag.note(stretch)
                self.waiting = True
                self.idle.set()
                try:
                    return real(timeout)
                finally:
                    self.idle.clear()
                    self.waiting = False
                    self.busy_since = time.perf_counter()
                    self._note_late_timer()

            selector.select = watched_select

    @property
    def watching(self) -> bool:
        return self.fd is not None

    def _note_late_timer(self) -> None:
        """On the loop, as its selector returns: how long its earliest timer has been due."""
        try:
            late = self.loop.time() - self.loop._scheduled[0].when()  # type: ignore[attr-defined]
        except (AttributeError, IndexError):
            return
        if late > 0.01:
            self.lag.note(late)

    def loop_has_work(self) -> bool:
        if not self.waiting:
            return time.perf_counter() - self.busy_since < STUCK_AFTER_S
        try:  # a timer due: the loop wakes for it (a request's budget running out, a debounce)
            if self.loop._scheduled[0].when() <= self.loop.time():  # type: ignore[attr-defined]
                return True
        except (AttributeError, IndexError):  # no timers (or a loop that keeps them elsewhere)
            pass
        if self.fd is None:
            return False
        try:
            return bool(select.select([self.fd], [], [], 0)[0])  # an event ready: the loop is waking up
        except (OSError, ValueError):  # the selector is closed: the server is stopping
            return False

    def give_way(self) -> None:
        """The yield hook: on a worker thread, wait while the loop has work, and on a background worker
        (an analysis, answers built ahead) also while a request's work runs on another worker (bounded,
        see above). Waits are on events: a paused worker takes no interpreter lock until it may go on.
        A request's computation that nobody waits for any more stops here (`workers.Stop`)."""
        workers.stop_if_requested()
        now = time.perf_counter()
        if now < self.next_check or threading.get_ident() == self.loop_thread:
            return
        self.next_check = now + CHECK_EVERY_S
        deadline = now + MAX_PAUSE_S
        background = not workers.is_foreground()
        paused = False
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            if self.loop_has_work():
                if self.waiting:  # an event ready or a timer due: the loop is waking up
                    time.sleep(_SLEEP_S)
                else:
                    self.idle.wait(left)
            elif background and workers.foreground_running():
                workers.no_foreground.wait(left)
            else:
                break
            paused = True
        if paused:
            self.pauses += 1


STALL_S = 0.3  # with INFO logging: a loop busy this long without looking at its input is logged


def _log_stalls(watch: LoopWatch) -> None:
    """With INFO logging (`--log-file`), on a thread of its own, two kinds of stall:

    - a stretch of `STALL_S` or more in which the loop did not look at its input, with where the loop
      and every other thread are;
    - this thread itself woken `STALL_S` late: no thread of the process could run Python meanwhile. It
      logs how much CPU each thread used in that gap (Linux): one thread near the gap held the
      interpreter lock (a long C call); the process as a whole near zero got no CPU from the system.

    A request answered late says where its time went (server.py's request log); this says what held
    the loop."""
    logged = 0.0
    before = time.perf_counter(), _thread_cpu()
    while _installed is watch:
        time.sleep(0.1)
        now = time.perf_counter(), _thread_cpu()
        gap = now[0] - before[0] - 0.1
        if gap >= STALL_S:
            names = {t.native_id: t.name for t in threading.enumerate()}
            used = sorted(((cpu - before[1].get(tid, 0.0), names.get(tid, str(tid))) for tid, cpu in now[1].items()),
                          reverse=True)
            log.info(f"no thread of the server ran Python for {gap * 1000:.0f} ms; CPU used meanwhile: "
                     + (", ".join(f"{name} {ms * 1000:.0f} ms" for ms, name in used if ms > 0) or "none")
                     + (" (per-thread CPU is read from /proc)" if not now[1] else ""))
        before = now
        since = watch.busy_since
        if watch.waiting or since == logged or now[0] - since < STALL_S:
            continue
        logged = since
        frames = sys._current_frames()
        idents = {t.ident: t.name for t in threading.enumerate()}
        loop_frame = frames.pop(watch.loop_thread, None)
        others = "; ".join(f"{idents.get(ident, ident)} at {_where(frame, 1)}" for ident, frame in frames.items()
                           if ident != threading.get_ident())
        # Code locations only (no document text): logged whole, past the log's cut of long values.
        log.info(f"the event loop has run {(time.perf_counter() - since) * 1000:.0f} ms without looking at its "
                 f"input; it is at {_where(loop_frame, 6) if loop_frame is not None else '?'}; other threads: "
                 f"{others or 'none'}")


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _thread_cpu() -> dict[int, float]:
    """Seconds of CPU each thread of this process has used (Linux's /proc; empty elsewhere)."""
    out: dict[int, float] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return out


def _where(frame: Any, depth: int) -> str:
    """`file.py:line function < caller …`, innermost first."""
    out: list[str] = []
    while frame is not None and len(out) < depth:
        out.append(f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno} {frame.f_code.co_name}")
        frame = frame.f_back
    return " < ".join(out)


_installed: LoopWatch | None = None


def install(loop: asyncio.AbstractEventLoop) -> LoopWatch | None:
    """Watch `loop` (once; called on the loop's thread) and make its watch the engine's yield hook.
    None if the loop has no selector to watch (workers then never pause)."""
    global _installed
    if _installed is not None and _installed.loop is loop:
        return _installed
    watch = LoopWatch(loop)
    if not watch.watching:
        log.info("the event loop has no selector to watch: workers will not give way to requests")
        return None
    _installed = watch
    set_yield_hook(watch.give_way)
    if log.isEnabledFor(logging.INFO):
        threading.Thread(target=_log_stalls, args=(watch,), name="evalspec-stall-log", daemon=True).start()
    return watch


def installed() -> LoopWatch | None:
    return _installed


def uninstall() -> None:
    """No watch, no hook (for tests that install one on a loop of their own)."""
    global _installed
    _installed = None
    set_yield_hook(None)
