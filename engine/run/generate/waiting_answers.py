"""The answers a run's batches gave, on disk until their cells take them.

Batch mode asks every answer, and then every judge, before the cells run (generate/batch_stage.py): when
the last phase ends, a 100,000-prompt judged blueprint has a million answers waiting (~7 KB a prompt
held as objects). Here each answer is appended to an unlinked temporary file (spill_file.py) as it is
read from its batch's results, as the provider's JSON body (marshal: every JSON value comes back as it
was, so the chat provider's parser reads what it would have read), with which of the stage's request
shapes it answers (the provider, the priced model). Memory keeps one number per cell: where its newest
answer is; each answer on disk starts with where the cell's one before it is, so a cell's answers are a
chain read back when the cell takes the first of them. Only the cells being taken keep their answers in
memory (`OPEN_BOUND` at most; the oldest go back to disk past it).

A later answer for the same slot replaces the earlier one, as in the dict this stands for; an answer is
taken once (`pop`), and can be looked at before (`peek`: a conversation's next request, a judge's).
"""

from __future__ import annotations

import marshal
import struct
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from ...spill_file import SpillFile
from ..events import Cell

if TYPE_CHECKING:
    from ..plan.cell_index import CellIndex

OPEN_BOUND = 1024  # cells whose answers are held while they are taken (a run's workers take ~64 at a time)
# Before each answer on disk: where the cell's answer before it is (offset, size; size 0: none).
_LINK = struct.Struct("<QI")

Turn = int | str
Waiting = tuple[int, dict[str, Any]]  # (the stage's request shape number, the answer's JSON body)


class WaitingAnswers:
    def __init__(self, index: CellIndex | None = None) -> None:
        self._file: SpillFile | None = None
        # cell → offset << 32 | size of its newest answer on disk; in an array by the cell's place when
        # given the plan's cells (`index`: plan/cell_index.py; a dict was ~16 MB at 200,000 cells)
        self._last: MutableMapping[tuple[str, str], int] = {}
        if index is not None:
            from ..plan.cell_index import CellOffsets

            self._last = CellOffsets(index)
        self._open: dict[Cell, dict[Turn, bytes]] = {}  # cells being taken: their answers (marshal), by turn
        self.put_count = 0
        self.taken = 0

    def put(self, cell: Cell, turn: Turn, shape: int, body: dict[str, Any]) -> None:
        data = marshal.dumps((turn, shape, body))
        self.put_count += 1
        opened = self._open.get(cell)
        if opened is not None:
            opened[turn] = data
            return
        self._append(cell, data)

    def peek(self, cell: Cell, turn: Turn) -> Waiting | None:
        """The answer for `cell`'s `turn`, left waiting."""
        opened = self._open.get(cell)
        if opened is not None:
            data = opened.get(turn)
            if data is None:
                return None
            _, shape, body = _decode(data)
            return shape, body
        for data in self._chain(cell):
            got = _decode(data)
            if got[0] == turn:
                return got[1], got[2]
        return None

    def pop(self, cell: Cell, turn: Turn) -> Waiting | None:
        """The answer for `cell`'s `turn`, taken (None the second time)."""
        opened = self._open.get(cell)
        if opened is None:
            if cell not in self._last:
                return None
            opened = {}
            for data in self._chain(cell):  # newest first: an answer replaced later is not kept
                opened.setdefault(_decode(data)[0], data)
            del self._last[cell]
            self._open[cell] = opened
            while len(self._open) > OPEN_BOUND:
                self._close(next(iter(self._open)))
        data = opened.pop(turn, b"")
        if not opened:
            del self._open[cell]
        if not data:
            return None
        self.taken += 1
        _, shape, body = _decode(data)
        return shape, body

    def __len__(self) -> int:
        """Cells with an answer waiting."""
        return len(self._last) + len(self._open)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._last.clear()
        self._open.clear()

    # --- on disk ----------------------------------------------------------------------------------
    def _append(self, cell: Cell, data: bytes) -> None:
        if self._file is None:
            self._file = SpillFile(".evalspec-answers-")
        where = self._last.get(cell, 0)
        record = _LINK.pack(where >> 32, where & 0xFFFFFFFF) + data
        if len(record) >= 1 << 32:
            raise ValueError("a batch answer over 4 GB")
        self._last[cell] = self._file.append(record) << 32 | len(record)

    def _chain(self, cell: Cell) -> list[bytes]:
        """The cell's answers on disk, newest first."""
        out: list[bytes] = []
        where = self._last.get(cell, 0)
        while where & 0xFFFFFFFF:
            assert self._file is not None
            record = self._file.read(where >> 32, where & 0xFFFFFFFF)
            offset, size = _LINK.unpack_from(record)
            out.append(record[_LINK.size:])
            where = offset << 32 | size
        return out

    def _close(self, cell: Cell) -> None:
        """A cell taken in part goes back to disk with what it has not taken (past OPEN_BOUND)."""
        for data in self._open.pop(cell).values():
            self._append(cell, data)


def _decode(data: bytes) -> tuple[Turn, int, dict[str, Any]]:
    turn, shape, body = marshal.loads(data)
    return turn, shape, body
