"""Batch mode's view of the run journal: what was planned, uploaded, created and ended, by part.

A part is one provider batch. Its records (journal/records.py), in the order they are written:

    BatchPlanned       {"t": "batch_plan", "k": key, "m": model, "at": unix time,
                        "items": [[custom_id, item, model, slot], …]}
                       before anything is sent: which request of the batch is which cell (slot: the
                       generated turn's number, or "judge:<point>:<judge>" for a judge's call)
    BatchFileUploaded  {"t": "batch_file", "k": key, "f": file id}       OpenAI: the input file, once uploaded
    BatchCreated       {"t": "batch", "k": key, "id": batch id}          the moment the provider answers
    BatchEnded         {"t": "batch_end", "k": key, "s": status}         the batch ended (status, result files)
    BatchCancelled     {"t": "batch_cancel", "k": key}                   the user cancelled it (Ctrl-C)

`--resume` reads them back (`load_parts`): a part with a batch id is polled, never sent again; a part
planned but without an id is looked for at the provider (metadata key, or the list) before anything
is sent; the answers of an ended part are read again from its result files.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..events import Cell
from ..journal.journal_file import records
from ..journal.records import BatchCancelled, BatchCreated, BatchEnded, BatchFileUploaded, BatchPlanned

Slot = tuple[Cell, int | str]  # a cell and its generated turn's number, or a judge call's place
slot_hash = hash  # what JournaledBatches sorts slots by (a test makes every slot hash alike)


class PartItems(Mapping[str, Slot]):
    """A part's custom_id → slot mapping, kept as two lists (its cells, its slots' turns: objects the run
    shares) instead of a dict of tuples: a 100,000-prompt judged run has a million of them. The stage
    names a model's requests `r0`, `r1`, … in order, so a part's ids are `r<first>`, `r<first + 1>`, …;
    a journal whose ids are not (another naming) keeps them in a list beside."""

    __slots__ = ("_ids", "_where", "cells", "first", "turns")

    def __init__(self, first: int = 0) -> None:
        self.first = first
        self.cells: list[Cell] = []
        self.turns: list[int | str] = []
        self._ids: list[str] | None = None  # the custom ids, when they are not r<first + i>
        self._where: dict[str, int] | None = None

    def add(self, custom_id: str, cell: Cell, turn: int | str) -> None:
        if self._ids is None and custom_id != f"r{self.first + len(self.cells)}":
            self._ids = [f"r{self.first + i}" for i in range(len(self.cells))]
            self._where = {cid: i for i, cid in enumerate(self._ids)}
        if self._ids is not None:
            assert self._where is not None
            self._where[custom_id] = len(self._ids)
            self._ids.append(custom_id)
        self.cells.append(cell)
        self.turns.append(turn)

    def index(self, custom_id: str) -> int | None:
        """The position of `custom_id` in the part, None when it is not one of its ids."""
        if self._where is not None:
            return self._where.get(custom_id)
        if custom_id[:1] != "r" or not custom_id[1:].isdigit():
            return None
        i = int(custom_id[1:]) - self.first
        return i if 0 <= i < len(self.cells) and custom_id == f"r{self.first + i}" else None

    def custom_id(self, i: int) -> str:
        return self._ids[i] if self._ids is not None else f"r{self.first + i}"

    def slot(self, i: int) -> Slot:
        return self.cells[i], self.turns[i]

    def slots(self) -> Iterator[Slot]:
        return zip(self.cells, self.turns, strict=True)

    def __getitem__(self, custom_id: str) -> Slot:
        i = self.index(custom_id)
        if i is None:
            raise KeyError(custom_id)
        return self.cells[i], self.turns[i]

    def __iter__(self) -> Iterator[str]:
        return (self.custom_id(i) for i in range(len(self.cells)))

    def __len__(self) -> int:
        return len(self.cells)


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


def planned(part: BatchPart) -> BatchPlanned:
    items = part.items
    return BatchPlanned(part.key, part.model, part.planned_at,
                        tuple((items.custom_id(i), cell, turn) for i, (cell, turn) in enumerate(items.slots())))


def load_parts(path: Path) -> dict[str, BatchPart]:
    """Every part the journal at `path` knows, by key, in the order they were planned."""
    parts: dict[str, BatchPart] = {}
    if not path.exists():
        return parts
    # A cell is in many parts (its answers, each judge's calls): one object each, not one per record, and one
    # string per slot's turn (a 10,000-prompt judged run journals 102,500 items: ~40 MB unshared).
    shared: dict[Any, Any] = {}
    for record in records(path):
        if isinstance(record, BatchPlanned):
            first = record.items[0][0] if record.items else "r0"
            items = PartItems(int(first[1:]) if first[:1] == "r" and first[1:].isdigit() else 0)
            for cid, cell, slot in record.items:
                cell = shared.get(cell) or shared.setdefault(cell, Cell(shared.setdefault(cell.item, cell.item),
                                                                        shared.setdefault(cell.model, cell.model)))
                items.add(cid, cell, shared.setdefault(slot, slot))
            parts[record.key] = BatchPart(record.key, record.model, items, record.planned_at)
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


class JournaledBatches:
    """The parts an earlier run of the journal planned (`--resume`), and which part and item each of their
    slots is. The lookup is a sorted array of the slots' hashes beside the parts' item numbers (16 bytes
    an item, not a dict of a million tuples); a hash found is checked against the part's item, so two
    slots that hash alike are still told apart."""

    def __init__(self, parts: Mapping[str, BatchPart] | None = None) -> None:
        self.parts: dict[str, BatchPart] = dict(parts or {})
        self._parts = list(self.parts.values())
        self._hashes = array("q")
        self._where = array("q")  # part number << 32 | item number, in the order of _hashes
        runs: list[tuple[array[int], array[int]]] = []
        for n, part in enumerate(self._parts):
            # Sorted a part at a time (a part holds at most the provider's 50,000 or 100,000 requests), merged below.
            pairs = sorted((slot_hash(slot), n << 32 | i) for i, slot in enumerate(part.items.slots()))
            runs.append((array("q", (h for h, _ in pairs)), array("q", (w for _, w in pairs))))
            del pairs
        for h, w in heapq.merge(*(zip(*run, strict=True) for run in runs)):
            self._hashes.append(h)
            self._where.append(w)

    def find(self, slot: Slot) -> tuple[BatchPart, int] | None:
        """The part that holds `slot` and its place in it, None when no journaled part does. A slot in more
        than one part (planned by a run that never learnt whether its batch was created, then planned
        again and created by the next): the created one, whose answer is the one to collect."""
        h = slot_hash(slot)
        hashes = self._hashes
        i = bisect_left(hashes, h)
        found: tuple[BatchPart, int] | None = None
        while i < len(hashes) and hashes[i] == h:
            where = self._where[i]
            part = self._parts[where >> 32]
            if part.items.slot(where & 0xFFFFFFFF) == slot:
                found = part, where & 0xFFFFFFFF
                if part.batch_id is not None:
                    break
            i += 1
        return found

    def __contains__(self, slot: object) -> bool:
        return isinstance(slot, tuple) and self.find(slot) is not None

    def __len__(self) -> int:
        return len(self._hashes)

    def __iter__(self) -> Iterator[Slot]:
        for part in self._parts:
            yield from part.items.slots()


def journaled_batches(path: Path, resume: bool) -> JournaledBatches:
    """The journal's parts when the run resumes, else none."""
    return JournaledBatches(load_parts(path) if resume else None)
