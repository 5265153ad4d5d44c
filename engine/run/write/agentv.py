"""The write stage of an AgentV run: the results file, one row per (test, target).

`<runLabel>_<start time>.jsonl`: a row is appended as each test finishes (a reader, or a run that is
killed, sees every finished test), and the file is rewritten in the plan's order when the run ends.
A resumed run takes over the file of the run it finishes (the journal's header names it) and writes
every row again, the resumed ones first as their cells come up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ...appendlog import AppendLog
from ...jsonio import dumps_bytes
from ..events import Cell
from . import cell_store
from .cell_store import CellStore
from .files import safe_timestamp, write_stream


def results_name(run_label: str, started: datetime) -> str:
    """The results file of a run that starts now (the journal's header records it)."""
    return f"{run_label}_{safe_timestamp(started)}.jsonl"


class AgentvWriter:
    """The rows of one run, by cell, and the results file they go to. Rows are held in a CellStore
    (write/cell_store.py): in memory up to its bound, then on disk until the file is written in order."""

    def __init__(self, path: Path, bound: int | None = None) -> None:
        self.path = path
        self._store = CellStore(path.parent, bound if bound is not None else cell_store.DEFAULT_BOUND)
        self._log = AppendLog(path, fresh=True)

    @property
    def rows(self) -> _Rows:
        """`rows.get(cell)`: a cell's row, or None."""
        return _Rows(self._store)

    def keep(self, cell: Cell, row: dict[str, Any]) -> None:
        """A cell's row (a later row for the cell replaces it)."""
        self._store.set(cell.item, cell.model, {"row": row})

    def append(self, cell: Cell) -> None:
        """Append the cell's row to the file, when it has one (a finished test)."""
        row = self.rows.get(cell)
        if row is not None:
            self._log.write(dumps_bytes(row) + b"\n")

    def write(self, order: Iterable[Cell], *, cost: dict[str, Any] | None = None) -> list[Path]:
        """The rows again, in the plan's order, replacing the file they were appended to, and the cost
        file beside them (`cost`: what the run paid, cost/spend.py; cost/cost_file.py)."""
        # A row at a time: the file is never one buffer (and a redacted copy of it) in memory.
        rows = self.rows
        write_stream(self.path, (dumps_bytes(row) + b"\n" for c in order if (row := rows.get(c)) is not None))
        from ..cost.cost_file import write_cost

        cost_file = write_cost(self.path, cost)
        return [self.path] if cost_file is None else [self.path, cost_file]

    def write_partial(self, order: Iterable[Cell], *, cost: dict[str, Any] | None = None) -> None:
        """A stopped run's file in order; its rows are in the file already, unordered, if this fails."""
        with contextlib.suppress(Exception):
            self.write(order, cost=cost)
        self._store.close()

    def close(self) -> None:
        """The appending ends; the rows stay readable (a stopped run's file is written after this, and a
        finished run's summary reads them). The store's file goes with the writer (write/cell_store.py)."""
        self._log.close()


class _Rows:
    def __init__(self, store: CellStore) -> None:
        self._store = store

    def get(self, cell: Cell) -> dict[str, Any] | None:
        fields = self._store.get(cell.item, cell.model)
        return None if fields is None else fields["row"]
