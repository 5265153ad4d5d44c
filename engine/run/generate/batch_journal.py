"""Batch mode's view of the run database: what was planned, uploaded, created and ended, by part.

A part is one provider batch: a row of the database's `batches` table and its `batch_items`, written by
these records (journal/records.py), in this order:

    BatchPlanned       before anything is sent: which request of the batch (custom_id) is which cell and
                       slot (the generated turn's number, or "judge:<point>:<judge>" for a judge's call)
    BatchFileUploaded  OpenAI: the input file, once uploaded (`file_id`)
    BatchCreated       the moment the provider answers (`batch_id`)
    BatchEnded         the batch ended: its status, result files (`status`)
    BatchCancelled     the user cancelled it, after Ctrl-C (`cancelled`)

`--resume` reads them back (`load_parts`): a part with a batch id is polled, never sent again; a part
planned but without an id is looked for at the provider (metadata key, or the list) before anything
is sent; the answers of an ended part are read again from its result files.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from ..events import Cell
from ..journal.records import (
    BatchCancelled,
    BatchCreated,
    BatchEnded,
    BatchFileUploaded,
    BatchPlanned,
)

Slot = tuple[Cell, int | str]  # a cell and its generated turn's number, or a judge call's place


def slot_key(cell: Cell | tuple[str, str], turn: int | str) -> tuple[int, int]:
    """A slot as 128 bits of its BLAKE2b digest (two signed 64-bit numbers): what a journal's parts are
    looked up by (JournaledBatches). Two slots that differ share it with odds of ~10^-26 in a
    million-request run: it stands for the slot itself."""
    item, model = cell
    kind = "i" if isinstance(turn, int) else "s"  # turn 0 and "0" differ
    text = f"{len(item)}:{item}{len(model)}:{model}{kind}{turn}"  # lengths first: no two slots read alike
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return int.from_bytes(digest[:8], "little", signed=True), int.from_bytes(digest[8:], "little", signed=True)


def numbered(custom_id: str) -> tuple[str, int] | None:
    """A custom id the stage makes, `r<n>` or `<tag>-r<n>`, as (prefix, n); None for any other."""
    head, r, digits = custom_id.rpartition("r")
    if not r or not digits.isdigit() or not digits.isascii() or (digits[0] == "0" and digits != "0"):
        return None
    if head and not head.endswith("-"):
        return None
    return head, int(digits)


class PartItems(Mapping[str, Slot]):
    """A part's custom_id → slot mapping, kept as two lists (its cells, its slots' turns: objects the run
    shares) instead of a dict of tuples: a 100,000-prompt judged run has a million of them. The stage
    names a model's requests `r0`, `r1`, … in order (Anthropic: `<tag>-r0`, …, `prefix`), so a part's ids
    are `r<first>`, `r<first + 1>`, …;
    a journal whose ids are not (another naming) keeps them in a list beside. A part read back from the
    journal keeps its ids alone (`add_id`): which slot each is, the requests that ask for it say
    (JournaledBatches)."""

    __slots__ = ("_ids", "_where", "cells", "count", "first", "prefix", "turns")

    def __init__(self, first: int = 0, *, slots: bool = True, prefix: str = "") -> None:
        self.first = first
        self.prefix = prefix  # the part's tag before each `r<n>` (Anthropic: batch_parts.tag_of), or ""
        self.count = 0
        self.cells: list[Cell] | None = [] if slots else None
        self.turns: list[int | str] | None = [] if slots else None
        self._ids: list[str] | None = None  # the custom ids, when they are not r<first + i>
        self._where: dict[str, int] | None = None

    def add(self, custom_id: str, cell: Cell, turn: int | str) -> None:
        assert self.cells is not None and self.turns is not None
        self.add_id(custom_id)
        self.cells.append(cell)
        self.turns.append(turn)

    def add_id(self, custom_id: str) -> None:
        if self._ids is None and custom_id != f"{self.prefix}r{self.first + self.count}":
            self._ids = [f"{self.prefix}r{self.first + i}" for i in range(self.count)]
            self._where = {cid: i for i, cid in enumerate(self._ids)}
        if self._ids is not None:
            assert self._where is not None
            self._where[custom_id] = len(self._ids)
            self._ids.append(custom_id)
        self.count += 1

    def index(self, custom_id: str) -> int | None:
        """The position of `custom_id` in the part, None when it is not one of its ids."""
        if self._where is not None:
            return self._where.get(custom_id)
        named = numbered(custom_id)
        if named is None or named[0] != self.prefix:
            return None
        i = named[1] - self.first
        return i if 0 <= i < self.count else None

    def custom_id(self, i: int) -> str:
        return self._ids[i] if self._ids is not None else f"{self.prefix}r{self.first + i}"

    def slot(self, i: int) -> Slot:
        assert self.cells is not None and self.turns is not None, "a journaled part's slots are not kept"
        return self.cells[i], self.turns[i]

    def slots(self) -> Iterator[Slot]:
        assert self.cells is not None and self.turns is not None, "a journaled part's slots are not kept"
        return zip(self.cells, self.turns, strict=True)

    def __getitem__(self, custom_id: str) -> Slot:
        i = self.index(custom_id)
        if i is None:
            raise KeyError(custom_id)
        return self.slot(i)

    def __iter__(self) -> Iterator[str]:
        return (self.custom_id(i) for i in range(self.count))

    def __len__(self) -> int:
        return self.count


@dataclass
class BatchPart:
    key: str
    model: str  # the model id as the plan names it (custom models: their id; AgentV: the target's name)
    items: PartItems  # custom_id → (cell, generated turn or judge call)
    planned_at: float
    file_id: str | None = None
    batch_id: str | None = None
    ended: dict[str, Any] | None = None  # the final BatchStatus.to_json()
    cancelled: bool = False

    @property
    def open(self) -> bool:
        """Created at the provider and not known to have ended."""
        return self.batch_id is not None and self.ended is None


class _Planned(Sequence[tuple[str, Cell, int | str]]):
    """A part's items as BatchPlanned reads them, (custom_id, cell, turn), made one at a time."""

    def __init__(self, items: PartItems) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> tuple[str, Cell, int | str]: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[str, Cell, int | str]]: ...

    def __getitem__(self, i: int | slice) -> tuple[str, Cell, int | str] | Sequence[tuple[str, Cell, int | str]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        cell, turn = self.items.slot(i)
        return self.items.custom_id(i), cell, turn


def planned(part: BatchPart) -> BatchPlanned:
    return BatchPlanned(part.key, part.model, part.planned_at, _Planned(part.items))


Keys = tuple["array[int]", "array[int]", "array[int]"]  # a part's slot keys (high, low 64 bits) and items, sorted


def load_parts(path: Path, keys: dict[str, Keys] | None = None) -> dict[str, BatchPart]:
    """Every part the run database at `path` knows, by key, in the order they were planned: its ids and
    states, not its slots. `keys` (JournaledBatches) gets each part's items' slot keys and places, sorted by
    key. A journal of an earlier evalspec is read as it was written (its records, in order)."""
    from ..journal import database as db
    from ..journal.run_store import records

    parts: dict[str, BatchPart] = {}
    if path.name.endswith(".journal.jsonl") and not db.is_database(path):
        for record in records(path, BatchPlanned, BatchFileUploaded, BatchCreated, BatchEnded, BatchCancelled):
            if isinstance(record, BatchPlanned):
                parts[record.key] = _part(record.key, record.model, record.planned_at,
                                          ((cid, cell.item, cell.model, slot) for cid, cell, slot in record.items), keys)
                continue
            part = parts.get(getattr(record, "key", ""))
            if part is None:
                continue
            if isinstance(record, BatchFileUploaded):
                part.file_id = record.file_id
            elif isinstance(record, BatchCreated):
                part.batch_id = record.batch_id
            elif isinstance(record, BatchEnded):
                part.ended = dict(record.status)
            elif isinstance(record, BatchCancelled):
                part.cancelled = True
        return parts
    try:
        with db.reading(path) as conn:
            for key, model, at, file_id, batch_id, status, cancelled in db.batch_rows(conn):
                part = _part(key, model, at, db.batch_item_rows(conn, key), keys)
                part.file_id, part.batch_id, part.ended, part.cancelled = file_id, batch_id, status, cancelled
                parts[key] = part
    except (FileNotFoundError, db.NotADatabase):
        return {}
    return parts


def _part(key: str, model: str, planned_at: float, raw_items: Iterator[Any],
          keys: dict[str, Keys] | None) -> BatchPart:
    """A part from its fields and its items (read as they come: no Cell, no tuple an item)."""
    items: PartItems | None = None
    highs, lows = array("q"), array("q")
    for cid, item, cell_model, turn in raw_items:
        if items is None:
            named = numbered(str(cid))
            items = PartItems(named[1], slots=False, prefix=named[0]) if named else PartItems(0, slots=False)
        if keys is not None:
            high, low = slot_key((str(item), str(cell_model)), turn if isinstance(turn, str) else int(turn))
            highs.append(high)
            lows.append(low)
        items.add_id(str(cid))
    if items is None:
        items = PartItems(0, slots=False)
    if keys is not None:
        # Sorted by the high 64 bits (JournaledBatches.find compares the low ones among equal highs): a
        # permutation, not a tuple an item.
        order = sorted(range(len(highs)), key=highs.__getitem__)
        keys[key] = (array("q", (highs[i] for i in order)), array("q", (lows[i] for i in order)), array("q", order))
    return BatchPart(key, model, items, planned_at)


class JournaledBatches:
    """The parts an earlier run of the journal planned (`--resume`), and which part and item each of their
    slots is: per part, sorted arrays of its items' slot keys (`slot_key`, 128 bits) and places, 24 bytes
    an item and no object (a million Cells and tuples read back were ~120 MB; the parts' arrays merged
    into one left ~60 MB more of the heap behind them). A lookup searches each part (a 100,000-prompt
    judged run has 16)."""

    def __init__(self, path: Path | None = None) -> None:
        self.parts: dict[str, BatchPart] = {}
        self._keys: dict[str, Keys] = {}  # by part
        if path is None:
            return
        self.parts = load_parts(path, self._keys)

    def find(self, slot: Slot) -> tuple[BatchPart, int] | None:
        """The part that holds `slot` and its place in it, None when no journaled part does. A slot in more
        than one part (planned by a run that never learnt whether its batch was created, then planned
        again and created by the next): the created one, whose answer is the one to collect."""
        if not self._keys:
            return None
        high, low = slot_key(*slot)
        found: tuple[BatchPart, int] | None = None
        for part in self.parts.values():
            highs, lows, places = self._keys[part.key]
            i = bisect_left(highs, high)
            while i < len(highs) and highs[i] == high:
                if lows[i] == low:
                    found = part, places[i]
                    if part.batch_id is not None:
                        return found
                i += 1
        return found

    def __contains__(self, slot: object) -> bool:
        return isinstance(slot, tuple) and len(slot) == 2 and self.find(slot) is not None

    def __len__(self) -> int:
        return sum(len(highs) for highs, _, _ in self._keys.values())


def journaled_batches(path: Path, resume: bool) -> JournaledBatches:
    """The journal's parts when the run resumes, else none."""
    return JournaledBatches(path if resume else None)
