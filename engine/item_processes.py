"""A big file's items checked in several processes (`check` and `run` of a streamed parse).

A checker hands `shared` its items' ranges and what one process does with a range (`work`, giving a
picklable result per item and, last, a tail). The first range is read by the caller in this process as
it would read the whole list; the others are read at the same time by forked processes, whose results
come back, in order, over a pipe each (length-prefixed, deflated pickles, written as the process ends). So a
100,000-prompt blueprint's analysis takes the cores a run's cells will take next.

A process that meets what only a read of the whole list can say — a syntax finding, an item cut where a
line only looked like one (source.LazyItems.part raises `Unshared`), any exception — sends `Unshared`;
the caller reads the file again in one process, which gives the answer a serial read gives (such a file
is broken, and a run refuses it). What a process registered as a secret to mask is registered here too. A forked process dies with this one (PR_SET_PDEATHSIG) and is killed
and reaped however the read ends.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

MIN_ITEMS = 1_000  # fewer items are read in one process unless more are asked for (a fork is ~5 ms)
MIN_PART = 256  # items a process at least, when none are asked for
AUTO_MOST = 4  # processes at most when none are asked for
_BATCH = 512  # items' results a frame
_PR_SET_PDEATHSIG = 1
# Threads a fork may leave behind: the quickjs package starts an executor as it is imported, for its
# `Function`, which evalspec never calls (scoring/ makes a Context per thread, dropped in a child).
IDLE_THREADS = ("quickjs-worker-",)


class Unshared(Exception):
    """A part of the items cannot be read apart from the others: read the whole file in one process."""


def other_threads() -> bool:
    """Threads besides this one that a fork would leave behind, holding what they hold."""
    return any(t is not threading.main_thread() and not t.name.startswith(IDLE_THREADS)
               for t in threading.enumerate())


def parts(asked: int | None, count: int) -> int:
    """How many processes read `count` items: `asked` (--processes; at most one an item), else one per
    core up to AUTO_MOST for MIN_ITEMS items or more, MIN_PART items a process at least. One where a fork
    cannot be made safely (not Linux, other threads running)."""
    if (asked is not None and asked <= 1) or count < 2 or not sys.platform.startswith("linux") or other_threads():
        return 1
    if asked is not None:
        return min(asked, count)
    if count < MIN_ITEMS:
        return 1
    return max(1, min(AUTO_MOST, len(os.sched_getaffinity(0)), count // MIN_PART))


def detach(parent: int) -> None:
    """A forked process ends with `parent`; Ctrl-C is the parent's to handle (it kills this one)."""
    import ctypes

    with contextlib.suppress(ValueError):  # (not the main thread: none was set)
        signal.set_wakeup_fd(-1)  # (an event loop's: a signal here must not wake it)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


class Shared:
    """Forked processes reading ranges of items (`shared` makes one): `results()` gives their results in
    order, each process's tail last; `close()` kills and reaps what is left."""

    def __init__(self, ranges: list[tuple[int, int]], work: Callable[[int, int], Iterable[Any]]) -> None:
        self._children: list[tuple[int, int]] = []  # (pid, read end)
        try:
            for start, end in ranges:
                read, write = os.pipe()
                pid = os.fork()
                if pid == 0:  # never returns
                    os.close(read)
                    for _, fd in self._children:
                        os.close(fd)
                    _child(work, start, end, write)
                os.close(write)
                self._children.append((pid, read))
        except BaseException:
            self.close()
            raise

    def results(self) -> Iterator[Any]:
        """Every process's results, in the order of the ranges; raises Unshared when one could not read its own."""
        for pid, fd in self._children:
            ended = False
            with os.fdopen(os.dup(fd), "rb") as stream:
                while True:
                    head = stream.read(4)
                    if len(head) < 4:
                        break
                    batch = pickle.loads(zlib.decompress(stream.read(int.from_bytes(head, "little"))))
                    if type(batch) is dict:  # the process's last frame: the secrets it was given
                        _registered(batch["secrets"])
                        ended = True
                        break
                    if isinstance(batch, Unshared):
                        raise batch
                    yield from batch
            if not ended:
                raise Unshared(f"a process reading items (PID {pid}) ended before they did")

    def close(self) -> None:
        for pid, fd in self._children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                os.close(fd)
        self._children = []

    def __enter__(self) -> Shared:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shared(ranges: list[tuple[int, int]], work: Callable[[int, int], Iterable[Any]]) -> Shared:
    """`work` of each of `ranges` in a forked process of its own (the caller reads the range before them)."""
    return Shared(ranges, work)


def _child(work: Callable[[int, int], Iterable[Any]], start: int, end: int, out: int) -> NoReturn:
    code = 1
    try:
        detach(os.getppid())
        from .providers import redact

        secrets = redact.registered()
        frames: list[bytes] = []
        batch: list[Any] = []
        try:
            for result in work(start, end):
                batch.append(result)
                if len(batch) >= _BATCH:
                    frames.append(_frame(batch))
                    batch = []
            frames.append(_frame(batch))
            frames.append(_frame({"secrets": [s for s in redact.registered() if s not in secrets]}))
        except Exception as exc:  # (what it says goes with the serial read, which meets it again)
            frames = [_frame(Unshared(f"{type(exc).__name__}: {exc}"))]
        for frame in frames:
            _write(out, len(frame).to_bytes(4, "little"))
            _write(out, frame)
        code = 0
    finally:
        os._exit(code)


def _frame(value: Any) -> bytes:
    """A pickle, deflated: the frames wait in the process's memory until it is read (a 100,000-prompt
    blueprint's other half is ~45 MB of records, ~5 MB deflated)."""
    return zlib.compress(pickle.dumps(value, pickle.HIGHEST_PROTOCOL), 1)


def _registered(secrets: list[str]) -> None:
    """Values another process's read registered as secrets (a `${{ …_API_KEY }}` in a test): masked here too."""
    if secrets:
        from .providers.redact import register_secret

        for value in secrets:
            register_secret(value)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
