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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..events import Cell
from ..journal.journal_file import records
from ..journal.records import BatchCancelled, BatchCreated, BatchEnded, BatchFileUploaded, BatchPlanned


@dataclass
class BatchPart:
    key: str
    model: str  # the model id as the plan names it (custom models: their id; AgentV: the target's name)
    items: dict[str, tuple[Cell, int | str]]  # custom_id → (cell, generated turn or judge call)
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
    return BatchPlanned(part.key, part.model, part.planned_at,
                        tuple((cid, cell, slot) for cid, (cell, slot) in part.items.items()))


def load_parts(path: Path) -> dict[str, BatchPart]:
    """Every part the journal at `path` knows, by key, in the order they were planned."""
    parts: dict[str, BatchPart] = {}
    if not path.exists():
        return parts
    # A cell is in many parts (its answers, each judge's calls) and custom ids repeat from part to part: one
    # object each, not one per record (a 10,000-prompt judged run journals 102,500 items: ~40 MB unshared).
    shared: dict[Any, Any] = {}
    for record in records(path):
        if isinstance(record, BatchPlanned):
            items: dict[str, tuple[Cell, int | str]] = {}
            for cid, cell, slot in record.items:
                cell = shared.get(cell) or shared.setdefault(cell, Cell(shared.setdefault(cell.item, cell.item),
                                                                        shared.setdefault(cell.model, cell.model)))
                items[shared.setdefault(cid, cid)] = (cell, shared.setdefault(slot, slot))
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
