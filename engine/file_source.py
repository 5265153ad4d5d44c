"""What an analysis may read besides the text it checks: other files and the environment.

`analyze` reads nothing by itself; its caller hands it a `FileSource`. The CLI passes `DiskSource`
(the files on disk, the process environment). The language server passes one that answers from the
editor's open documents first and the disk second, so an unsaved edit of a suite's tests file counts,
and it learns from `read` which files an analysis depended on, to check it again when one changes.

Every read is bounded and never raises: a missing, unreadable, non-UTF-8 or too large file is None.
"""

from __future__ import annotations

import glob as globlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

MAX_READ = 10 * 1024 * 1024  # no file an eval file refers to is read past this


class FileSource(Protocol):
    """Files and environment variables, as an analysis sees them."""

    @property
    def env(self) -> Mapping[str, str]: ...

    def read_text(self, path: Path, limit: int = MAX_READ) -> str | None:
        """The file's text; None when it is missing, unreadable, not UTF-8 or larger than `limit` bytes."""
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

    def mtime(self, path: Path) -> float | None:
        """When the file or folder last changed; None when it does not exist."""
        ...

    def resolve(self, path: Path) -> Path:
        """`path` absolute, with symlinks followed where they exist."""
        ...


class DiskSource:
    """The files on disk and an environment (the process's, unless given)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = dict(os.environ) if env is None else env

    @property
    def env(self) -> Mapping[str, str]:
        return self._env

    def read_text(self, path: Path, limit: int = MAX_READ) -> str | None:
        try:
            if path.stat().st_size > limit:
                return None
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

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

    def read_text(self, path: Path, limit: int = MAX_READ) -> str | None:
        self._note(path)
        return self.inner.read_text(path, limit)

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

    def mtime(self, path: Path) -> float | None:
        self._note(path)
        return self.inner.mtime(path)

    def resolve(self, path: Path) -> Path:
        self._note(path)
        return self.inner.resolve(path)
