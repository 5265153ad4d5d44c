"""Append-only JSONL files that survive a kill: the response cache and the AgentV results file as it grows
(an earlier evalspec's run journal is read with `read_records` too: run/journal/legacy_jsonl.py).

A process killed mid-write leaves a last line cut short. Readers skip lines that do not parse; the
next writer first finishes the torn line, so its own records start clean. No fsync: the goal is to
survive the process, not a power cut.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .jsonio import loads
from .own_files import open_own
from .providers.redact import redact_bytes


def read_records(path: Path, keep: Callable[[bytes], bool] | None = None) -> Iterator[dict[str, Any]]:
    """Every whole JSON object line of `path` (none when it does not exist). Read a line at a time: a
100,000-cell journal is ~80 MB. `keep`: only the lines it says yes to are parsed."""
    for line in read_lines(path, keep):
        try:
            rec = loads(line)
        except ValueError:
            continue  # cut short by a kill, or foreign junk
        if isinstance(rec, dict):
            yield rec


# No record is longer (a batch plan's part of 100,000 items is a few MB; an answer is capped at 8 MB by
# default). A longer line is skipped a piece at a time, never held: an output folder may come from someone
# else, and 3 GB of zeros without a newline (a few MB in a git clone) was read whole by `--resume` and by
# the editor looking for a file's earlier results.
LINE_MAX_BYTES = 64 << 20


def read_lines(path: Path, keep: Callable[[bytes], bool] | None = None) -> Iterator[bytes]:
    """`read_records`' lines before they are parsed (not blank; those `keep` says yes to; none longer than
    LINE_MAX_BYTES): for a reader that parses a long line in pieces (a batch plan's, batch_journal.py)."""
    try:
        f = os.fdopen(open_own(path, os.O_RDONLY), "rb")  # never through a planted link, never a FIFO
    except FileNotFoundError:
        return
    with f:
        while raw := f.readline(LINE_MAX_BYTES + 1):
            if len(raw) > LINE_MAX_BYTES and not raw.endswith(b"\n"):
                while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                continue
            for line in raw.splitlines():  # the lines `bytes.splitlines` makes of the whole file (\r too)
                if not line.strip() or (keep is not None and not keep(line)):
                    continue
                yield line


def _torn(path: Path) -> bool:
    try:
        with os.fdopen(open_own(path, os.O_RDONLY), "rb") as f:
            f.seek(0, os.SEEK_END)
            if not f.tell():
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except FileNotFoundError:
        return False


class AppendLog:
    """A file opened for appending whole lines (O_APPEND: each write lands at the end, in one call).

    Opened on the first write, so a cache that is only read never creates its file."""

    def __init__(self, path: Path, *, fresh: bool = False) -> None:
        self.path = path
        self._fresh = fresh  # truncate on the first open only
        self._fd: int | None = None

    def open(self) -> None:
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = not self._fresh and _torn(self.path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if self._fresh else 0)
        self._fd = open_own(self.path, flags, 0o600)  # a link planted in its place is refused, not appended to
        if torn:
            os.write(self._fd, b"\n")  # finish the line a kill cut short
        self._fresh = False

    def write(self, data: bytes, *, redacted: bool = False) -> None:
        """Append `data` whole, or raise (OSError). `os.write` may write part of it and return: at a
        file-size limit or on a full disk the first write is cut short without an error, and a journal
        went on with a header cut in half; the rest is written until done or the system refuses.
        `redacted`: the caller masked it already (providers/redact.py), as it is written."""
        self.open()
        if self._fd is not None:
            view = memoryview(data if redacted else redact_bytes(data))
            while view:
                view = view[os.write(self._fd, view):]

    def close(self) -> None:
        """Close the file; a later write opens it again (appending), so nothing is ever dropped."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
