"""Bytes appended to an unlinked temporary file and read back by offset: what a big run keeps on disk
instead of in memory (a big suite's tests, agentv/test_store.py; a run's results past the cells it holds,
run/write/cell_store.py; a big comparison file's entries while its report is made, report/spool.py).
`MemorySpill` is the same in memory, for records small enough to keep (a big blueprint's prompts, deflated:
weval/prompt_store.py).

Appends are buffered up to FLUSH_AT bytes and written with pwrite; a read of bytes still in the buffer
is served from it. A record never straddles the buffer and the file (a flush writes the whole buffer).
The file is unlinked from the start, so a killed process leaves nothing behind, and its descriptor is
closed by `close()` or when the object is collected.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from pathlib import Path

FLUSH_AT = 1 << 20  # bytes buffered before they are written


class SpillFile:
    def __init__(self, prefix: str, folder: Path | None = None) -> None:
        with tempfile.TemporaryFile(dir=folder, prefix=prefix) as f:  # unlinked already
            self._fd = os.dup(f.fileno())
        self._finalizer = weakref.finalize(self, os.close, self._fd)
        self._pending = bytearray()
        self._written = 0  # bytes on disk (the rest is in _pending)

    @property
    def size(self) -> int:
        """Bytes appended so far: the offset of the next record."""
        return self._written + len(self._pending)

    def append(self, data: bytes | bytearray) -> int:
        """Appends `data`; its offset."""
        start = self.size
        self._pending += data
        if len(self._pending) >= FLUSH_AT:
            self.flush()
        return start

    def flush(self) -> None:
        view = memoryview(self._pending)
        done = 0
        while done < len(view):
            done += os.pwrite(self._fd, view[done:], self._written + done)
        view.release()
        self._written += len(self._pending)
        self._pending = bytearray()

    def read(self, start: int, size: int) -> bytes:
        """The `size` bytes appended at `start`."""
        if start >= self._written:
            return bytes(self._pending[start - self._written:start - self._written + size])
        return os.pread(self._fd, size, start)

    def close(self) -> None:
        self._finalizer()


class MemorySpill:
    """`SpillFile`'s interface over one bytearray in this process's memory."""

    def __init__(self) -> None:
        self._data = bytearray()

    @property
    def size(self) -> int:
        return len(self._data)

    def append(self, data: bytes | bytearray) -> int:
        start = len(self._data)
        self._data += data
        return start

    def flush(self) -> None:
        pass

    def read(self, start: int, size: int) -> bytes:
        return bytes(self._data[start:start + size])

    def close(self) -> None:
        self._data = bytearray()
