"""Files evalspec keeps in an output folder and opens again (journals, the run lock, the response
cache, temporary files renamed into place): never opened through a link, never a FIFO or a device.

An output folder may come from someone else (a cloned repository's `results/`, an unpacked archive),
and the names evalspec gives its files there are predictable (the run label hashes the eval file's
path and items). A journal planted as a symlink to `~/.bashrc` had a resumed run append JSON lines to
it (double-quoted `$(…)` in an answer runs when bash reads the file), a lock planted the same way was
truncated to a PID, and a FIFO in a journal's place blocked the run for good. The last component is
opened with O_NOFOLLOW and O_NONBLOCK and checked on the open descriptor; the folders above it are the
user's choice (`-o` may well be a link) and are followed.
"""

from __future__ import annotations

import errno
import os
import stat

try:
    import fcntl
except ImportError:  # not on Windows, which has neither FIFOs to fear nor O_NONBLOCK to clear
    fcntl = None  # type: ignore[assignment]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotOwnFile(OSError):
    """A file evalspec would write or read back in its output folder is a link, a FIFO, a device or a
    folder: refused, with a message that says which and what to do."""


def open_own(path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
    """`os.open` for a file in an output folder: `path` itself must not be a symlink and must be a
    regular file once open (raises NotOwnFile otherwise; FileNotFoundError as os.open does)."""
    shown = os.fspath(path)
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotOwnFile(exc.errno, f"{shown} is a symbolic link; evalspec does not read or write its "
                                        "files through links in an output folder (remove the link)") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            raise NotOwnFile(exc.errno, _not_regular(shown)) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotOwnFile(errno.EINVAL, _not_regular(shown))
        # Blocking again: O_NONBLOCK was only for the open (a FIFO would have waited for a peer).
        if fcntl is not None:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_fresh(path: str | os.PathLike[str], mode: int = 0o644) -> int:
    """A new file at `path` for writing, whatever was there (a stale temporary file, or a link planted in
    its place, is removed first, never written through): O_EXCL refuses a link even when it dangles."""
    for _ in range(3):
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)
        except FileExistsError:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                raise NotOwnFile(errno.EISDIR, _not_regular(os.fspath(path))) from None
    raise NotOwnFile(errno.EEXIST, f"{os.fspath(path)} keeps coming back; another process is writing it")


def _not_regular(shown: str) -> str:
    return (f"{shown} is not a regular file (a folder, a FIFO, a device or a socket); evalspec keeps only "
            "regular files there (remove it)")
