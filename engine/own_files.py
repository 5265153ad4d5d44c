"""Files evalspec keeps in an output folder and opens again (journals, the run lock, the response
cache, temporary files renamed into place): never opened through a link, never a FIFO or a device.

An output folder may come from someone else (a cloned repository's `results/`, an unpacked archive) and
the names evalspec gives its files there are predictable, so a planted link or FIFO in their place must
not be written through or block a run. The last component is opened with O_NOFOLLOW and O_NONBLOCK and
checked on the open descriptor; the folders above it are the user's choice (`-o` may well be a link)
and are followed.
"""

from __future__ import annotations

import errno
import hashlib
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


def check_own(path: str | os.PathLike[str]) -> bool:
    """Whether a regular file is at `path` (False: nothing there), read with lstat, without opening it;
    NotOwnFile for a link, a FIFO, a device or a folder. For a file another library holds POSIX locks on
    in this process (SQLite's): closing any descriptor of it would drop them."""
    shown = os.fspath(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise NotOwnFile(errno.ELOOP, f"{shown} is a symbolic link; evalspec does not read or write its files "
                                      "through links in an output folder (remove the link)")
    if not stat.S_ISREG(info.st_mode):
        raise NotOwnFile(errno.EINVAL, _not_regular(shown))
    return True


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


MAX_NAME_BYTES = 200  # most file systems allow 255 bytes a name: room for `.json` and a temporary suffix


def bounded_file_part(name: str, *, digest_of: str | None = None) -> str:
    """`name` when a file may be called that; else its start (at most MAX_NAME_BYTES bytes in all) and a
    digest of the whole, so that two long ids never share a file. A 5,000-character prompt id, or 300
    emoji, stopped the run's artefacts with 'File name too long'; a NUL was no file name at all.
    `digest_of`: the id `name` was made from by replacing characters; always digested, so that the ids
    `a/b` and `a_b` do not share one file either."""
    encoded = name.encode("utf-8", "surrogatepass")
    if digest_of is None and len(encoded) <= MAX_NAME_BYTES and "\x00" not in name:
        return name
    source = encoded if digest_of is None else digest_of.encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(source).hexdigest()[:16]
    head = encoded[:MAX_NAME_BYTES - len(digest) - 1].decode("utf-8", "ignore").replace("\x00", "_")
    return f"{head}~{digest}"


def folder_name(name: str) -> str:
    """A name from an eval file (an AgentV suite's `name`) as one folder of an output folder: as is, unless
    it could leave it (`../../x`, `a/b`, `..`) or is no file name (bounded_file_part). A suite named
    `../../x` wrote its results two folders above the output folder."""
    if "/" in name or "\\" in name or name in ("", ".", "..") or name.startswith("."):
        safe = name.replace("/", "_").replace("\\", "_").replace(".", "_") or "_"
        return bounded_file_part(safe, digest_of=name)
    return bounded_file_part(name)


def own_folder(output: os.PathLike[str] | str, parts: tuple[str, ...]) -> None:
    """Refuse (NotOwnFile) a folder evalspec makes below the output folder (`live/blueprints/<id>`,
    `agentv/<suite>`) that exists as a symlink: a planted `out/live` linked to the home folder had the
    run's journal, results and `report.html` written there. The output folder itself may be a link
    (`-o` is the user's choice)."""
    folder = os.fspath(output)
    for part in parts:
        folder = os.path.join(folder, part)
        if os.path.islink(folder):
            raise NotOwnFile(errno.ELOOP, f"{folder} is a symbolic link; evalspec does not write its results "
                                          "through links inside an output folder (remove the link)")


def _not_regular(shown: str) -> str:
    return (f"{shown} is not a regular file (a folder, a FIFO, a device or a socket); evalspec keeps only "
            "regular files there (remove it)")
