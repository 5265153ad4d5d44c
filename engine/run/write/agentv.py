"""The write stage of an AgentV run: the results file, one row per (test, target).

`<runLabel>_<start time>.jsonl`: a row is appended as each test finishes (a reader, or a run that is
killed, sees every finished test), and the file is rewritten in the plan's order when the run ends.
A resumed run takes over the file of the run it finishes (the journal's header names it) and writes
every row again, the resumed ones first as their cells come up.

The rows wait for that rewrite in the file they were appended to (a row is encoded once); memory holds
8 bytes a cell, where its row is in that file, by the cell's place in the plan (`AgentvTask.position`).
A 100,000-cell run held a dict entry, a key and an offset per cell (~20 MB), and encoded each row three
times; the rewrite copies bytes in the plan's order. (The rows also went to a temporary file of their
own, as many bytes again written to the disk as the results.)
"""

from __future__ import annotations

import contextlib
import os
import weakref
from array import array
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ...appendlog import AppendLog
from ...jsonio import dumps_bytes, loads
from ...own_files import open_own
from ...providers.redact import redact_bytes
from .files import safe_timestamp, write_stream


def results_name(run_label: str, started: datetime) -> str:
    """The results file of a run that starts now (the journal's header records it)."""
    return f"{run_label}_{safe_timestamp(started)}.jsonl"


class AgentvWriter:
    """The rows of one run, by the cell's place in the plan (`cells` of them), and the results file they
    go to: appended as they come, written in the plan's order at the end."""

    def __init__(self, path: Path, cells: int) -> None:
        self.path = path
        self._at = array("q", [-1]) * cells  # cell n's row: offset << 32 | size in the appended file, or -1
        self._log = AppendLog(path, fresh=True)
        self._size = 0  # of the appended file (this writer's: it starts it empty)
        # A descriptor reading it back, opened on the first read: it keeps reading the appended file
        # after the rewrite has replaced it (the run's summary and a stopped run's file read rows then).
        self._reader: int | None = None

    def keep(self, position: int, row: dict[str, Any]) -> None:
        """Cell `position`'s row, appended to the results file (a later row for the cell replaces it in
        the file written at the end)."""
        data = redact_bytes(dumps_bytes(row) + b"\n")
        if len(data) >= 1 << 32:
            raise ValueError("a row of the results is over 4 GB")
        self._log.write(data, redacted=True)
        self._at[position] = self._size << 32 | len(data)
        self._size += len(data)

    def row(self, position: int) -> dict[str, Any] | None:
        """Cell `position`'s row, or None."""
        data = self._line(position)
        if data is None:
            return None
        found: dict[str, Any] = loads(data)
        return found

    def _line(self, position: int) -> bytes | None:
        where = self._at[position]
        if where < 0:
            return None
        if self._reader is None:
            self._reader = open_own(self.path, os.O_RDONLY)
            weakref.finalize(self, os.close, self._reader)
        offset, size = where >> 32, where & 0xFFFFFFFF
        data = os.pread(self._reader, size, offset)
        while len(data) < size:  # pread may return less than asked
            more = os.pread(self._reader, size - len(data), offset + len(data))
            if not more:
                raise OSError(f"{self.path} was cut short while the run wrote it")
            data += more
        return data

    def _lines(self) -> Iterator[bytes]:
        for n in range(len(self._at)):
            data = self._line(n)
            if data is not None:
                yield data

    def write(self, *, cost: dict[str, Any] | None = None) -> list[Path]:
        """The rows again, in the plan's order, replacing the file they were appended to, and the cost
        file beside them (`cost`: what the run paid, cost/spend.py; cost/cost_file.py)."""
        # A row at a time, as the bytes appended: the file is never one buffer in memory. The new file
        # replaces the appended one once whole; the rows are read from the one this writer still holds.
        self._log.close()
        write_stream(self.path, self._lines())
        from ..cost.cost_file import write_cost

        cost_file = write_cost(self.path, cost)
        return [self.path] if cost_file is None else [self.path, cost_file]

    def write_partial(self, *, cost: dict[str, Any] | None = None) -> None:
        """A stopped run's file in order; its rows are in the file already, unordered, if this fails."""
        with contextlib.suppress(Exception):
            self.write(cost=cost)

    def close(self) -> None:
        """The appending ends; the rows stay readable (a stopped run's file is written after this, and a
        finished run's summary reads them)."""
        self._log.close()
