"""The write stage of an AgentV run: its rows into the run database, and the results file exported from it.

Each cell's row (AgentV's results row) is a record of the run database, `scores.result` (`not_run.row`
for a cell a cost cap kept from starting), packed against the run's dictionary (journal/packed_rows.py):
`record` makes the records a cell's row is written as. The results file, `<runLabel>_<start time>.jsonl`,
one row per (test, target) in the plan's order, is written once, when the run ends (or a stopped run
with `partial_results`), from the rows the database holds: the bytes stored, which are the row's JSON as
the results file has it. A killed run leaves its rows in the database; `--resume` finishes the run and
exports the same file (a resumed run takes over the file name of the run it finishes: its header names
it), the rows of the cells it resumed copied as they were stored.

Memory holds a byte a cell, by the cell's place in the plan (`AgentvTask.position`): which table holds
its row. (The rows were appended to the results file as cells finished, then the file rewritten in the
plan's order: the results written twice, and the database's copy as JSON a third time with WAL's two.)
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ...jsonio import dumps_bytes, loads
from ...providers.redact import redact_bytes
from ..events import Cell
from ..journal.packed_rows import DICTIONARY, pack, unpacker
from ..journal.records import CellScore, ExportHead, NotRun, Record
from ..journal.run_store import Journal
from .files import safe_timestamp, write_stream

_NONE, _SCORES, _NOT_RUN = 0, 1, 2  # where a cell's row is: nowhere yet, `scores`, `not_run`
_QUERY = {_SCORES: "SELECT result FROM scores WHERE item = ? AND model = ?",
          _NOT_RUN: "SELECT row FROM not_run WHERE item = ? AND model = ?"}
_BLOCK_QUERY = {_SCORES: "SELECT item, model, result FROM scores WHERE item IN ({})",
                _NOT_RUN: "SELECT item, model, row FROM not_run WHERE item IN ({})"}
_BLOCK = 256  # cells whose rows the export reads with one query


def results_name(run_label: str, started: datetime) -> str:
    """The results file of a run that starts now (the journal's header records it)."""
    return f"{run_label}_{safe_timestamp(started)}.jsonl"


class AgentvWriter:
    """The rows of one run, by the cell's place in the plan (`cells[n]` is cell n), kept in its database
    (`journal`), and the results file they are exported to."""

    def __init__(self, path: Path, cells: Sequence[Any], journal: Journal) -> None:
        self.path = path
        self._cells = cells  # the plan's tasks: `.cell` of each
        self._journal = journal
        self._where = array("b", [_NONE]) * len(cells)
        conn = journal.conn
        found = conn.execute("SELECT body FROM exports WHERE name = ?", (DICTIONARY,)).fetchone()
        self._dictionary: bytes | None = None if found is None else bytes(found[0])
        self._unpack: Callable[[str | bytes], bytes] | None = None
        self.packs = True  # False in a cell process (run/split.py): rows go to the run's process as they are

    def record(self, position: int, cell: Cell, row: dict[str, Any], *, score: float | None = None,
               verdict: str | None = None, not_run: str | None = None) -> list[Record]:
        """The records cell `position`'s row is written as: its score (or, `not_run` the reason, a cell a
        cost cap kept from starting), the row packed; before the first row packed, the dictionary."""
        data = redact_bytes(dumps_bytes(row))  # as the database's JSON columns are (database._json)
        if not self.packs:  # a cell process's: the run's process packs the row (Agentv.adopted, `adopt`)
            self._where[position] = _SCORES
            return [CellScore(cell, score, verdict, row, packed=data)]
        return self._packed(position, cell, row, data, score, verdict, not_run)

    def adopt(self, position: int, done: CellScore) -> list[Record]:
        """`record` of a row a cell process sent (its CellScore: the row, `packed` its JSON bytes as `record`
        encodes them, or None)."""
        data = done.packed if isinstance(done.packed, bytes) else redact_bytes(dumps_bytes(done.result))
        return self._packed(position, done.cell, done.result, data, done.score, done.verdict, None)

    def _packed(self, position: int, cell: Cell, row: dict[str, Any], data: bytes, score: float | None,
                verdict: str | None, not_run: str | None) -> list[Record]:
        out: list[Record] = []
        if self._dictionary is None and not row.get("error"):
            # the run's first row without an error: what the rows after it are packed against
            self._dictionary = data
            self._unpack = None
            out.append(ExportHead(DICTIONARY, data))
        # packed; before the dictionary, the JSON text (as database._json would encode it again)
        packed = pack(data, self._dictionary) if self._dictionary is not None else \
            data.decode("utf-8", "surrogatepass")
        if not_run is not None:
            out.append(NotRun(cell, not_run, row, packed=packed))
        else:
            out.append(CellScore(cell, score, verdict, row, packed=packed))
        self._where[position] = _NOT_RUN if not_run is not None else _SCORES
        return out

    def resumed(self, position: int) -> None:
        """Cell `position`'s row is the one the database has in `scores` (a resumed cell)."""
        self._where[position] = _SCORES

    def row(self, position: int) -> dict[str, Any] | None:
        """Cell `position`'s row, or None."""
        data = self._line(position)
        if data is None:
            return None
        found: dict[str, Any] = loads(data)
        return found

    def _line(self, position: int) -> bytes | None:
        where = self._where[position]
        if where == _NONE:
            return None
        cell = self._cells[position].cell
        found = self._journal.conn.execute(_QUERY[where], (cell.item, cell.model)).fetchone()
        if found is None or found[0] is None:
            raise OSError(f"the run database {self._journal.path} lost the row of {cell}")
        if self._unpack is None:
            self._unpack = unpacker(self._dictionary)
        return self._unpack(found[0])

    def _lines(self) -> Iterator[bytes]:
        """Every row in the plan's order, read `_BLOCK` cells at a time: one query for their tests' rows
        (a query a row was most of exporting a big run's file)."""
        where, total = self._where, len(self._where)
        cell_at = getattr(self._cells, "cell_at", None)  # AgentvTasks: the cell without making its task
        for start in range(0, total, _BLOCK):
            block = [(n, where[n]) for n in range(start, min(start + _BLOCK, total)) if where[n] != _NONE]
            cells = [cell_at(n) if cell_at is not None else self._cells[n].cell for n, _ in block]
            stored: dict[int, dict[tuple[str, str], Any]] = {}
            for table in (_SCORES, _NOT_RUN):
                items = {c.item for c, (_, w) in zip(cells, block, strict=True) if w == table}
                if items:
                    stored[table] = self._rows(table, items)
            for cell, (_, table) in zip(cells, block, strict=True):
                found = stored[table].get((cell.item, cell.model))
                if found is None:
                    raise OSError(f"the run database {self._journal.path} lost the row of {cell}")
                if self._unpack is None:
                    self._unpack = unpacker(self._dictionary)
                yield self._unpack(found) + b"\n"

    def _rows(self, table: int, items: set[str]) -> dict[tuple[str, str], Any]:
        """(item, model) → the stored row of every cell of `items` in `table` (`scores` / `not_run`)."""
        marks = ",".join("?" * len(items))
        query = _BLOCK_QUERY[table].format(marks)
        return {(item, model): row for item, model, row in self._journal.conn.execute(query, tuple(items))
                if row is not None}

    def write(self, *, cost: dict[str, Any] | None = None) -> list[Path]:
        """The results file in the plan's order, from the database's rows, and the cost file beside it
        (`cost`: what the run paid, cost/spend.py; cost/cost_file.py)."""
        write_stream(self.path, self._lines())  # a row at a time: the file is never one buffer in memory
        from ..cost.cost_file import write_cost

        cost_file = write_cost(self.path, cost)
        return [self.path] if cost_file is None else [self.path, cost_file]

    def write_partial(self, *, cost: dict[str, Any] | None = None) -> None:
        """A stopped run's file, for the cells that finished; nothing when it cannot be written (the
        rows stay in the database)."""
        with contextlib.suppress(Exception):
            self.write(cost=cost)

    def close(self) -> None:
        """Nothing is held open (the rows are read through the run's database connection)."""
