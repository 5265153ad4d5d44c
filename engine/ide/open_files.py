"""The files an analysis reads, as the editor has them: open documents first, the disk second.

A suite's external tests file that is open with unsaved edits is checked as it stands in the editor,
and one that exists only as an unsaved buffer exists. The language server's engine workers analyse
through it (worker.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ..file_source import MAX_READ, DiskSource, FolderEntry
from ..spill_file import SpillFile


class OpenDocumentsSource:
    """A FileSource: `open_text(path)` (the editor's text of an open document, or None), then `disk`."""

    def __init__(self, open_text: Callable[[Path], str | None], disk: DiskSource | None = None) -> None:
        self._open_text = open_text
        self.disk = disk if disk is not None else DiskSource()

    @property
    def env(self) -> Mapping[str, str]:
        return self.disk.env

    def _open(self, path: Path) -> str | None:
        return self._open_text(Path(os.path.abspath(path)))

    def read_text(self, path: Path, limit: int = MAX_READ, *, inside: Path | None = None) -> str | None:
        text = self._open(path)
        if text is not None:  # the editor's buffer: the checks of where it lies were made on its path
            return text if len(text) <= limit and _utf8_size(text) <= limit else None
        return self.disk.read_text(path, limit, inside=inside)

    def links(self, path: Path) -> int:
        return self.disk.links(path)

    def size(self, path: Path) -> int | None:
        text = self._open(path)
        return _utf8_size(text) if text is not None else self.disk.size(path)

    def exists(self, path: Path) -> bool:
        return self._open(path) is not None or self.disk.exists(path)

    def is_file(self, path: Path) -> bool:
        return self._open(path) is not None or self.disk.is_file(path)

    def is_dir(self, path: Path) -> bool:
        return self.disk.is_dir(path)

    def glob(self, folder: Path, pattern: str) -> list[str]:
        return self.disk.glob(folder, pattern)  # an unsaved new buffer is found by name, not by pattern

    def list_folder(self, folder: Path, limit: int) -> list[FolderEntry]:
        return self.disk.list_folder(folder, limit)  # as glob: an unsaved new buffer is not in the listing

    def mtime(self, path: Path) -> float | None:
        return self.disk.mtime(path)

    def resolve(self, path: Path) -> Path:
        if self._open(path) is not None and not self.disk.exists(path):
            return Path(os.path.abspath(path))  # an unsaved buffer: nothing on disk to follow
        return self.disk.resolve(path)

    def scratch_file(self, prefix: str) -> SpillFile:
        return self.disk.scratch_file(prefix)


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
