"""What an analysis may read besides the text it checks: other files and the environment.

`analyze` reads nothing by itself; its caller hands it a `FileSource`. The CLI passes `DiskSource`
(the files on disk, the process environment). The language server passes one that answers from the
editor's open documents first and the disk second, so an unsaved edit of a suite's tests file counts,
and it learns from `read` which files an analysis depended on, to check it again when one changes.

Every read is bounded and never raises: a missing, unreadable, non-UTF-8 or too large file is None.
What an analysis keeps on disk instead of in memory (a big blueprint's prompts) goes to a scratch file
the source makes, in the temporary folder of the source's environment.
"""

from __future__ import annotations

import contextlib
import glob as globlib
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple, Protocol

from .spill_file import SpillFile

MAX_READ = 10 * 1024 * 1024  # no file an eval file refers to is read past this


class ReadRefused(OSError):
    """A read refused for where the opened file lies (outside the project, or one of several hard links
    to it); `str()` says why."""


def read_regular_bytes(path: str | os.PathLike[str], limit: int, *, inside: str | os.PathLike[str] | None = None
                       ) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes; None for anything else.

    A FIFO, a device (`/dev/zero`), a socket or a folder is refused without blocking: the path is
    opened non-blocking and checked on the open descriptor (`stat` then `read_text` blocked forever
    on a FIFO, whose size is 0, and would read `/dev/zero` until memory ran out). At most `limit` + 1
    bytes are read, so a file that grows meanwhile is refused too. Raises OSError when the path
    cannot be opened at all (callers say why).

    `inside`: the project's folder, for a file an eval file names. The file actually opened must lie
    in it and have no other name (one hard link): checked on the open descriptor, before a byte is
    read, so a path swapped for a symlink pointing out after the caller checked it is caught too (the
    check and the read are the same open). Raises ReadRefused otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            os.close(fd)
            return None
        if inside is not None:
            _confined(fd, path, info, inside)
        f = os.fdopen(fd, "rb")
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    with f:
        # what fstat said, and one byte more to see a file that grew meanwhile (a read of `limit` + 1
        # allocates that much up front: 32 MB for every file `check` or `run` reads)
        data = f.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += f.read(limit + 1 - len(data))
    return data if len(data) <= limit else None


def opened_path(fd: int, path: str | os.PathLike[str], info: os.stat_result) -> str:
    """The real path of the file open on `fd`: the kernel's (/proc/self/fd), else the path with its
    links followed, provided it still names the same file (a swap meanwhile raises ReadRefused)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    real = os.path.realpath(path)
    now = os.stat(real)
    if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
        raise ReadRefused(f"{os.fspath(path)} changed while it was opened")
    return real


def is_within(real: str, root: str) -> bool:
    """Is the real path `real` the folder `root` (also real) or under it?"""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _confined(fd: int, path: str | os.PathLike[str], info: os.stat_result, inside: str | os.PathLike[str]) -> None:
    real = opened_path(fd, path, info)
    root = os.path.realpath(inside)
    if not is_within(real, root):
        raise ReadRefused(f"{os.fspath(path)} leads to {real}, outside the project ({root})")
    if info.st_nlink > 1:
        raise ReadRefused(f"{os.fspath(path)} has {info.st_nlink} hard links: its other names may lie outside "
                          "the project")


class FolderEntry(NamedTuple):
    """One entry of a folder listing."""

    name: str
    is_file: bool  # a file, or a link to one
    is_dir: bool  # a folder, or a link to one
    is_link: bool


class FileSource(Protocol):
    """Files and environment variables, as an analysis sees them."""

    @property
    def env(self) -> Mapping[str, str]: ...

    def read_text(self, path: Path, limit: int = MAX_READ, *, inside: Path | None = None) -> str | None:
        """The file's text; None when it is missing, unreadable, not UTF-8 or larger than `limit` bytes,
        or, with `inside` (the project's folder), when the file opened is outside it or hard-linked
        (read_regular_bytes)."""
        ...

    def links(self, path: Path) -> int:
        """How many hard links the regular file at `path` has (1 for anything else or nothing)."""
        ...

    def size(self, path: Path) -> int | None:
        """The file's size in bytes (UTF-8 for an open document), None when there is no such file."""
        ...

    def exists(self, path: Path) -> bool: ...

    def is_file(self, path: Path) -> bool: ...

    def is_dir(self, path: Path) -> bool: ...

    def glob(self, folder: Path, pattern: str) -> list[str]:
        """Paths relative to `folder` matching `pattern` (`**` included), sorted, files and folders."""
        ...

    def list_folder(self, folder: Path, limit: int) -> list[FolderEntry]:
        """At most `limit` entries of `folder`, in the order the folder lists them (none when it cannot
        be listed). Links are not followed to list them, only to say what they point at."""
        ...

    def mtime(self, path: Path) -> float | None:
        """When the file or folder last changed; None when it does not exist."""
        ...

    def resolve(self, path: Path) -> Path:
        """`path` absolute, with symlinks followed where they exist."""
        ...

    def scratch_file(self, prefix: str) -> SpillFile:
        """A new unlinked temporary file for what the analysis keeps on disk rather than in memory (a
        streamed check's prompts past weval/prompt_store.DEFAULT_BOUND); closed by its holder."""
        ...


def expand_home(reference: str, env: Mapping[str, str]) -> Path:
    """`~` and `~/…` under the HOME of `env` (the source's environment, not the process's, which
    `Path.expanduser` would read); anything else, `~user` included, as written."""
    home = env.get("HOME")
    if home and (reference == "~" or reference.startswith("~/")):
        return Path(home + reference[1:])
    return Path(reference)


class DiskSource:
    """The files on disk and an environment (the process's, unless given)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = dict(os.environ) if env is None else env

    @property
    def env(self) -> Mapping[str, str]:
        return self._env

    def read_text(self, path: Path, limit: int = MAX_READ, *, inside: Path | None = None) -> str | None:
        try:
            data = read_regular_bytes(path, limit, inside=inside)
            return data.decode("utf-8") if data is not None else None
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    def links(self, path: Path) -> int:
        try:
            info = path.stat()
        except (OSError, ValueError):
            return 1
        return info.st_nlink if stat.S_ISREG(info.st_mode) else 1

    def size(self, path: Path) -> int | None:
        try:
            return path.stat().st_size if path.is_file() else None
        except (OSError, ValueError):
            return None

    def exists(self, path: Path) -> bool:
        try:
            return path.exists()
        except (OSError, ValueError):
            return False

    def is_file(self, path: Path) -> bool:
        try:
            return path.is_file()
        except (OSError, ValueError):
            return False

    def is_dir(self, path: Path) -> bool:
        try:
            return path.is_dir()
        except (OSError, ValueError):
            return False

    def glob(self, folder: Path, pattern: str) -> list[str]:
        try:
            return sorted(globlib.glob(pattern, root_dir=folder, recursive=True))
        except (OSError, ValueError):
            return []

    def list_folder(self, folder: Path, limit: int) -> list[FolderEntry]:
        out: list[FolderEntry] = []
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    if len(out) >= limit:
                        break
                    out.append(FolderEntry(entry.name, _entry_is(entry.is_file), _entry_is(entry.is_dir),
                                           _entry_is(entry.is_symlink)))
        except (OSError, ValueError):
            pass
        return out

    def mtime(self, path: Path) -> float | None:
        try:
            return path.stat().st_mtime
        except (OSError, ValueError):
            return None

    def resolve(self, path: Path) -> Path:
        try:
            return path.resolve()
        except (OSError, RuntimeError, ValueError):  # a symlink loop
            return Path(os.path.abspath(path))

    def scratch_file(self, prefix: str) -> SpillFile:
        # The environment's temporary folder, as tempfile would pick it (TMPDIR, TEMP, TMP), but from
        # this source's environment; none set (or none a folder): the system's.
        folder = next((Path(v) for v in (self._env.get(k) for k in ("TMPDIR", "TEMP", "TMP"))
                       if v and os.path.isdir(v)), None)
        return SpillFile(prefix, folder)


class RecordingSource:
    """A source that notes every path asked about (read, listed or tested), so the caller knows what an
    analysis depended on."""

    def __init__(self, inner: FileSource) -> None:
        self.inner = inner
        self.paths: set[Path] = set()

    @property
    def env(self) -> Mapping[str, str]:
        return self.inner.env

    def _note(self, path: Path) -> None:
        self.paths.add(Path(os.path.abspath(path)))

    def read_text(self, path: Path, limit: int = MAX_READ, *, inside: Path | None = None) -> str | None:
        self._note(path)
        return self.inner.read_text(path, limit, inside=inside)

    def links(self, path: Path) -> int:
        self._note(path)
        return self.inner.links(path)

    def size(self, path: Path) -> int | None:
        self._note(path)
        return self.inner.size(path)

    def exists(self, path: Path) -> bool:
        self._note(path)
        return self.inner.exists(path)

    def is_file(self, path: Path) -> bool:
        self._note(path)
        return self.inner.is_file(path)

    def is_dir(self, path: Path) -> bool:
        self._note(path)
        return self.inner.is_dir(path)

    def glob(self, folder: Path, pattern: str) -> list[str]:
        self._note(folder)
        found = self.inner.glob(folder, pattern)
        for rel in found:
            self._note(folder / rel)
        return found

    def list_folder(self, folder: Path, limit: int) -> list[FolderEntry]:
        self._note(folder)  # a file added to or removed from it changes what a glob finds
        return self.inner.list_folder(folder, limit)

    def mtime(self, path: Path) -> float | None:
        self._note(path)
        return self.inner.mtime(path)

    def resolve(self, path: Path) -> Path:
        self._note(path)
        return self.inner.resolve(path)

    def scratch_file(self, prefix: str) -> SpillFile:
        return self.inner.scratch_file(prefix)  # the analysis's own bytes: no dependency


def _entry_is(test: Callable[[], bool]) -> bool:
    try:
        return test()
    except OSError:  # a broken link, an entry removed meanwhile
        return False
