"""One run at a time per run label: a lock file beside the journal (`<label>.journal.lock`).

Without it, four `--resume` runs started together each read the same journal and repeated the same
calls (7,236 calls where 1,794 were needed), and two fresh runs renamed each other's journal to `.prev`.

The lock is an OS file lock (`flock`), so the kernel drops it the moment its holder dies, `kill -9`
included: a lock left by a killed run is never in the way, and the PID it recorded is reported as
cleared. The file holds the holder's PID, which a refused run names. Where `flock` does not exist
(Windows) the recorded PID decides, best effort: one that no longer runs counts as stale.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from ...own_files import open_own
from ..plan.error import PlanError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


class RunLocked(PlanError):
    """Another process is running the same run (same output folder, same run label)."""

    def __init__(self, message: str, holder: int | None) -> None:
        super().__init__(message)
        self.holder = holder


def lock_path(journal: Path) -> Path:
    return journal.with_suffix(".lock")


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _holder(fd: int) -> int | None:
    """The PID of the process holding the lock. The holder writes it just after it took the lock, so a
    run refused in between reads nothing, or the PID a killed earlier holder left: read again for a
    moment (up to 0.5 s) until it names a live process."""
    for _ in range(50):
        pid = _read_pid(fd)
        if pid is not None and pid != os.getpid() and _alive(pid):
            return pid
        time.sleep(0.01)
    return _read_pid(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


class RunLock:
    """Held from the moment a run opens its journal until it closes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.stale_pid: int | None = None  # the PID a killed earlier holder left in the file

    def acquire(self, label: str) -> None:
        """Take the lock or raise RunLocked naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(20):  # a holder may unlink the file between our open and our lock: open again
            # Never through a link planted in its place: it was truncated to our PID.
            fd = open_own(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                got = self._lock(fd)
            except BaseException:
                os.close(fd)
                raise
            if not got:
                holder = _holder(fd)
                os.close(fd)
                who = f"PID {holder}" if holder else "another process"
                raise RunLocked(
                    f"run {label} is already running ({who}; lock {self.path}): wait for it to finish or "
                    "stop it first; a run that was stopped continues with --resume", holder)
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            previous = _read_pid(fd)
            self.stale_pid = previous if previous and previous != os.getpid() else None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
            self._fd = fd
            return
        raise RunLocked(f"run {label}: could not take the lock {self.path}", None)

    @staticmethod
    def _lock(fd: int) -> bool:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True
        # No flock: the PID in the file decides (a dead holder's lock is stale).
        holder = _read_pid(fd)
        return holder is None or holder == os.getpid() or not _alive(holder)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # Unlinked while still held, so a run that opened it meanwhile sees the inode change and retries.
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(fd)
