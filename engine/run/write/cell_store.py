"""What each cell of a run leaves for its results files, in memory that does not grow with the run.

A cell's fields are the comparison file's pieces of it, as the file writes them: its answer, its
conversation and its coverage result, each encoded once, when it comes, as compact JSON (`piece`; a later
value of a field replaces the earlier one). The results files join those pieces (write/weval_results.py);
nothing is decoded or encoded again to write them. A value orjson refuses (a lone surrogate, an integer
past 64 bits) is kept in the standard encoder's ASCII form behind a NUL byte, which no JSON text holds:
the writer then writes that prompt's row whole with the standard encoder, as `dumps_bytes` of the row.

Up to `bound` cells are held as they are; past that, the held cells go to a temporary file (one record
per cell; only its offset and size stay in memory) and are read back, one prompt at a time, while the
results files are written. A 100,000-cell run held ~3.5 KB a cell until the end; now a few dozen bytes.

The journal stays the run's record (resume, history, reports of unfinished runs); this file is only the
write stage's working copy, and it disappears when the store closes (it is unlinked from the start: a
killed run leaves nothing behind). Each spilled cell is deflated with the run's first spilled cell as
the dictionary (cells differ in little but their texts: ~640 bytes of JSON became ~50).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, MutableMapping
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
Fields = list[bytes | None]  # each field's piece, None where the cell has none
_SIZES = struct.Struct("<3i")  # a spilled record's head: each field's size, -1 where it has none
ODD = b"\x00"  # before a piece in the standard encoder's form (`piece`)


def piece(value: Any) -> bytes:
    """`value` as the results files write it: compact JSON by orjson, else (a value it refuses) ODD and
    the standard encoder's text (`dumps_bytes`' fallback)."""
    try:
        return dumps_orjson(value)
    except TypeError:
        return ODD + dumps_bytes(value)

# Raw deflate with a 4 KB window and the least memory: 13 µs a cell to compress here, 1.5 µs to read
# (zlib's defaults took 100 µs a cell, most of it setting up 256 KB of state for a 640-byte record).
_WBITS, _LEVEL, _MEM = -12, 1, 1
_WINDOW, _BEHIND = 64 << 10, 4 << 10  # a read-ahead of the spilled cells, starting this far before the cell


class CellStore:
    """Fields by (item, model). `folder`: where the temporary file goes when one is needed. `index`: the
    plan's cells (plan/cell_index.py): the spilled cells' places on disk are kept in an array by it."""

    def __init__(self, folder: Path, bound: int = DEFAULT_BOUND, index: CellIndex | None = None) -> None:
        self.folder = folder
        self.bound = max(1, bound)
        self._held: dict[tuple[str, str], Fields] = {}
        self._spilled: MutableMapping[tuple[str, str], int] = {}  # (item, model) → offset << 32 | size
        if index is not None:
            from ..plan.cell_index import CellOffsets

            self._spilled = CellOffsets(index)
        self._file: SpillFile | None = None
        self._window = b""  # bytes of the file read ahead (`_bytes`), from offset `_window_at`
        self._window_at = 0
        self._last_end = -1  # where the last read that missed the window ended
        self._zdict = b""  # the first spilled cell's JSON: every spilled cell is deflated against it
        self.most_held = 0  # the most cells held at once (tests check the bound)
        self.spilled_cells = 0

    def set(self, item: str, model: str, field: int, value: bytes, key: tuple[str, str] | None = None,
            field2: int = -1, value2: bytes | None = None) -> None:
        """Record a field of a cell (`RESPONSE`, `HISTORY`, `COVERAGE`; replacing its earlier value) as its
        piece, and a second one with `field2`. `key`: `(item, model)` as an object the caller keeps anyway
        (a run's Cell), so the store does not hold a tuple of its own a cell."""
        if key is None:
            key = (item, model)
        cell = self._held.get(key)
        if cell is None:
            # a cell is looked for on disk only once some went there (a run of up to DEFAULT_BOUND cells never)
            cell = (self._read(key) if self._file is not None else None) or [None, None, None]
            self._held[key] = cell
        cell[field] = value
        if field2 >= 0:
            cell[field2] = value2
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
        inflate = zlib.decompressobj(_WBITS, zdict=self._zdict)
        record = inflate.decompress(self._bytes(where >> 32, where & 0xFFFFFFFF)) + inflate.flush()
        found: Fields = []
        at = _SIZES.size
        for size in _SIZES.unpack_from(record):
            if size < 0:
                found.append(None)
            else:
                found.append(record[at:at + size])
                at += size
        return found

    def _bytes(self, start: int, size: int) -> bytes:
        """The `size` bytes spilled at `start`. Reads that follow each other closely (the results files
        read every cell in the plan's order, about the order they were spilled in) are served from a
        window of the file read ahead; a read elsewhere reads only its record."""
        assert self._file is not None
        at = start - self._window_at
        if at >= 0 and at + size <= len(self._window):
            return self._window[at:at + size]
        near = 0 <= start - self._last_end < _WINDOW
        self._last_end = start + size
        if not near or size > _WINDOW // 2:
            return self._file.read(start, size)
        begin = max(0, start - _BEHIND)  # cells that finished a little out of order sit just before
        window = self._file.read(begin, _WINDOW)
        if len(window) < start - begin + size:  # the end of what is on disk (the rest is in a buffer)
            return self._file.read(start, size)
        self._window, self._window_at = window, begin
        return window[start - begin:start - begin + size]

    def recorded(self) -> Iterator[tuple[str, str]]:
        """Every cell recorded: those on disk, then those held."""
        yield from list(self._spilled)
        yield from list(self._held)

    def _read(self, key: tuple[str, str]) -> Fields | None:
        """A spilled cell taken back into memory (more of its fields came)."""
        found = self.get(key)
        if found is not None:
            del self._spilled[key]
        return found

    def _spill(self) -> None:
        if self._file is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._file = SpillFile(".evalspec-cells-", self.folder)
        for key, (first, second, third) in self._held.items():
            encoded = _SIZES.pack(-1 if first is None else len(first), -1 if second is None else len(second),
                                  -1 if third is None else len(third)) + (first or b"") + (second or b"") + (third or b"")
            if not self._zdict:
                self._zdict = encoded[-(1 << -_WBITS):]
            deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM, zdict=self._zdict)
            encoded = deflate.compress(encoded) + deflate.flush()
            if len(encoded) >= 1 << 32:
                raise ValueError("a cell's results are over 4 GB")
            self._spilled[key] = self._file.append(encoded) << 32 | len(encoded)
        self._file.flush()
        self.spilled_cells += len(self._held)
        self._held.clear()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._window = b""
        self._spilled.clear()
        self._held.clear()
