"""What each cell of a run leaves for its results files, in memory that does not grow with the run.

A cell's fields are the comparison file's pieces of it, as the file writes them: its answer, its
conversation and its coverage result, each encoded once, when it comes, as compact JSON (`piece`; a later
value of a field replaces the earlier one). The results files join those pieces (write/weval_results.py);
nothing is decoded or encoded again to write them. A value orjson refuses (a lone surrogate, an integer
past 64 bits) is kept in the standard encoder's ASCII form behind a NUL byte, which no JSON text holds:
the writer then writes that prompt's row whole with the standard encoder, as `dumps_bytes` of the row.

Up to `bound` cells are held as they are; past that, the held cells go to a temporary file together, a
block of deflated sections, one per field (`CellStore` says how; only each cell's block and position stay
in memory), and are read back while the results files are written, a section at a time. A 100,000-cell
run held ~3.5 KB a cell until the end; now a few dozen bytes.

The journal stays the run's record (resume, history, reports of unfinished runs); this file is only the
write stage's working copy, and it disappears when the store closes (it is unlinked from the start: a
killed run leaves nothing behind).
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Iterator, MutableMapping
from itertools import accumulate, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...jsonio import dumps_bytes, dumps_orjson
from ...spill_file import SpillFile

if TYPE_CHECKING:
    from ..plan.cell_index import CellIndex

DEFAULT_BOUND = 4096  # cells held in memory before they go to disk: a 2,000-prompt run never spills
# A run of more cells spills anyway: it holds fewer at a time (4,096 cells held were ~14 MB), at the price of
# reading back the few that were in flight when their turn came (answered, not yet scored).
SPILLING_BOUND = 512


def bound_for(cells: int) -> int:
    """The bound of a run of `cells` cells: none spilled when they all fit under DEFAULT_BOUND."""
    return DEFAULT_BOUND if cells <= DEFAULT_BOUND else min(DEFAULT_BOUND, SPILLING_BOUND)


FIELDS = ("response", "history", "coverage")  # a cell's fields, in the order its record holds them
RESPONSE, HISTORY, COVERAGE = range(3)
Fields = list[Any]  # each field's piece (bytes), None where the cell has none; whether its last came
ODD = b"\x00"  # before a piece in the standard encoder's form (`piece`)


def piece(value: Any) -> bytes:
    """`value` as the results files write it: compact JSON by orjson, else (a value it refuses) ODD and
    the standard encoder's text (`dumps_bytes`' fallback)."""
    try:
        return dumps_orjson(value)
    except TypeError:
        return ODD + dumps_bytes(value)


Section = tuple[int, "array[int]", list[int], bytes]  # (block, each cell's size, each one's start, the pieces)
# A block's sections are raw deflate at the lowest level: ~1 µs a cell to compress, a tenth of that to read
_WBITS, _LEVEL = -15, 1
_CACHED = 4  # blocks' sections kept decoded per field: cells read in the plan's order, spilled about in it


class CellStore:
    """Fields by (item, model). `folder`: where the temporary file goes when one is needed. `index`: the
    plan's cells (plan/cell_index.py): the spilled cells' places on disk are kept in an array by it.

    The held cells go to disk together, as a block: one deflated section per field, each the field's
    pieces of every cell of the block end to end, after their sizes (-1 where a cell has none). A cell's
    place is its block and its position there; reading a field reads and inflates that field's section
    of the block, kept for the next cells (`_CACHED` blocks a field), so writing a file's section reads
    each block of it about once. A cell spilled before all its fields came is read back whole when the
    next one comes, and goes to disk again with a later block."""

    def __init__(self, folder: Path, bound: int = DEFAULT_BOUND, index: CellIndex | None = None) -> None:
        self.folder = folder
        self.bound = max(1, bound)
        self._held: dict[tuple[str, str], Fields] = {}
        self._spilled: MutableMapping[tuple[str, str], int] = {}  # (item, model) → block << 32 | position
        if index is not None:
            from ..plan.cell_index import CellOffsets

            self._spilled = CellOffsets(index)
        self._file: SpillFile | None = None
        self._unfinished: set[tuple[str, str]] = set()  # cells spilled before their last field came
        self._blocks = array("Q")  # per block: its offset in the file, each section's size there
        # per field: the sections read last, newest last
        self._sections: list[list[Section]] = [[], [], []]
        self.most_held = 0  # the most cells held at once (tests check the bound)
        self.spilled_cells = 0

    def set(self, item: str, model: str, field: int, value: bytes, key: tuple[str, str] | None = None,
            field2: int = -1, value2: bytes | None = None, *, last: bool = False) -> None:
        """Record a field of a cell (`RESPONSE`, `HISTORY`, `COVERAGE`; replacing its earlier value) as its
        piece, and a second one with `field2`. `key`: `(item, model)` as an object the caller keeps anyway
        (a run's Cell), so the store does not hold a tuple of its own a cell. `last`: no more of the
        cell's fields will come (a cell is looked for on disk only when it went there before its last)."""
        if key is None:
            key = (item, model)
        cell = self._held.get(key)
        if cell is None:
            if self._unfinished and key in self._unfinished:
                cell = self._read(key) or [None, None, None, False]
            else:
                cell = [None, None, None, False]
            self._held[key] = cell
        # copies (`b"%b" % x` is the quickest): orjson's result holds a 4 KB allocation however short it is
        # (2,000 cells held were +20 MB)
        cell[field] = b"%b" % value
        if field2 >= 0:
            cell[field2] = None if value2 is None else b"%b" % value2
        if last:
            cell[3] = True
        if len(self._held) > self.most_held:
            self.most_held = len(self._held)
        if len(self._held) >= self.bound:
            self._spill()

    def get(self, key: tuple[str, str]) -> Fields | None:
        """The cell's pieces (`key`: its (item, model)), None for a cell never recorded."""
        held = self._held.get(key)
        if held is not None:
            return held
        where = self._spilled.get(key)
        if where is None:
            return None
        return [self._piece(where, field) for field in range(3)] + [key not in self._unfinished]

    def field(self, key: tuple[str, str], field: int) -> bytes | None:
        """One field's piece of the cell, None where it has none (or was never recorded)."""
        held = self._held.get(key)
        if held is not None:
            return held[field]
        where = self._spilled.get(key)
        return None if where is None else self._piece(where, field)

    def _piece(self, where: int, field: int) -> bytes | None:
        block, n = where >> 32, where & 0xFFFFFFFF
        for section in reversed(self._sections[field]):
            if section[0] == block:
                break
        else:
            section = self._section(block, field)
        _, sizes, starts, data = section
        return None if sizes[n] < 0 else data[starts[n]:starts[n + 1]]

    def _section(self, block: int, field: int) -> Section:
        """The field's section of the block, read and inflated, kept with the last few."""
        assert self._file is not None
        blocks = self._blocks
        offset = blocks[4 * block]
        for f in range(field):
            offset += blocks[4 * block + 1 + f]
        inflated = zlib.decompress(self._file.read(offset, blocks[4 * block + 1 + field]), _WBITS)
        count = int.from_bytes(inflated[:4], "little")
        sizes = array("i", inflated[4:4 + 4 * count])
        if sys.byteorder != "little":
            sizes.byteswap()
        return self._keep(block, field, sizes, inflated[4 + 4 * count:])

    def _keep(self, block: int, field: int, sizes: array[int], data: bytes) -> Section:
        """The section with each cell's start in it, kept as the newest of the field's sections."""
        starts = list(accumulate(map(max, sizes, repeat(0)), initial=0))  # (-1: no piece, none of the data)
        section = (block, sizes, starts, data)
        kept = self._sections[field]
        kept.append(section)
        if len(kept) > _CACHED:
            del kept[0]
        return section

    def recorded(self) -> Iterator[tuple[str, str]]:
        """Every cell recorded: those on disk, then those held."""
        yield from list(self._spilled)
        yield from list(self._held)

    def _read(self, key: tuple[str, str]) -> Fields | None:
        """A spilled cell taken back into memory (more of its fields came)."""
        where = self._spilled.get(key)
        if where is None:
            return None
        del self._spilled[key]
        self._unfinished.discard(key)
        return [self._piece(where, field) for field in range(3)] + [False]

    def _spill(self) -> None:
        if self._file is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._file = SpillFile(".evalspec-cells-", self.folder)
        block = len(self._blocks) // 4
        if len(self._held) >= 1 << 32 or block >= 1 << 31:
            raise ValueError("too many cells for the results' store")
        cells = list(self._held.values())
        offset = self._file.size
        self._blocks.append(offset)
        for field in range(3):
            sizes = array("i", [-1 if (p := cell[field]) is None else len(p) for cell in cells])
            data = b"".join([p for cell in cells if (p := cell[field]) is not None])
            raw = sizes.tobytes() if sys.byteorder == "little" else _swapped(sizes)
            deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS)
            section = deflate.compress(len(cells).to_bytes(4, "little") + raw)
            section += deflate.compress(data) + deflate.flush()
            self._file.append(section)
            self._blocks.append(len(section))
            self._keep(block, field, sizes, data)  # the cells still answering are read back from it
        unfinished = self._unfinished
        for n, (key, cell) in enumerate(self._held.items()):
            self._spilled[key] = block << 32 | n
            if not cell[3]:
                unfinished.add(key)
        self._file.flush()
        self.spilled_cells += len(self._held)
        self._held.clear()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._sections = [[], [], []]
        self._blocks = array("Q")
        self._spilled.clear()
        self._unfinished.clear()
        self._held.clear()


def _swapped(sizes: array[int]) -> bytes:
    copy = array("i", sizes)
    copy.byteswap()
    return copy.tobytes()
