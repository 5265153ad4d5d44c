"""The run journal: every finished call and score, appended to a JSONL file as it arrives.

One record a line, written with a single `os.write` on a file opened O_APPEND, so a line reaches the
kernel the moment the result exists: Ctrl-C, SIGTERM or `kill -9` lose nothing already received (no
fsync: surviving a power cut is not the goal, surviving the process is). A line cut short by a kill is
skipped when the journal is read back, and the next write starts on a fresh line.

`--resume` reads the journal into a JournalState and the runner skips every call it already holds.
Records (short keys, since a big run writes tens of thousands of them):

    {"t": "run", ...header}                                   first line: what run this is
    {"t": "gen", "c": [item, model], "n": turn, "text", "u": [in, out], "ms", "cached"}
    {"t": "fail", "c": [...], "error", "kind"}                a cell with no answer
    {"t": "judge", "c": [...], "p": point, "j": judge, "s": score | null, "r": reflection, "e": error}
    {"t": "kp", "i": prompt id, "points": [...]} | {"t": "kp", "i": ..., "error": ...}
    {"t": "emb", "k": key, "v": [floats]}
    {"t": "score", "c": [...], "s": score | null, "v": verdict, "r": result object}
    {"t": "done"}                                             the run finished
    {"t": "stop", "why": "cancelled"}                         the user stopped it (the editor's Cancel)
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..appendlog import AppendLog, read_records
from ..jsonio import dumps_bytes
from .events import Cell
from .run_lock import RunLock, lock_path


@dataclass
class JournalState:
    """What an earlier (interrupted) run already has, by cell."""

    header: dict[str, Any] = field(default_factory=dict)
    turns: dict[Cell, dict[int, dict[str, Any]]] = field(default_factory=dict)
    failures: dict[Cell, dict[str, Any]] = field(default_factory=dict)
    judgements: dict[tuple[Cell, int, str], dict[str, Any]] = field(default_factory=dict)
    key_points: dict[str, dict[str, Any]] = field(default_factory=dict)
    embeddings: dict[str, list[float]] = field(default_factory=dict)
    scores: dict[Cell, dict[str, Any]] = field(default_factory=dict)
    done: bool = False
    stopped: str | None = None  # why the run was stopped before the end, when it says ("cancelled")

    @property
    def empty(self) -> bool:
        return not (self.turns or self.failures or self.scores or self.judgements)


def _cell(rec: dict[str, Any]) -> Cell:
    item, model = rec["c"]
    return Cell(str(item), str(model))


def load(path: Path) -> JournalState:
    state = JournalState()
    for rec in read_records(path):
        t = rec.get("t")
        try:
            if t == "run":
                state.header = rec
            elif t == "gen":
                cell = _cell(rec)
                state.turns.setdefault(cell, {})[int(rec.get("n", 0))] = rec
                state.failures.pop(cell, None)
            elif t == "fail":
                state.failures[_cell(rec)] = rec
            elif t == "judge":
                state.judgements[(_cell(rec), int(rec["p"]), str(rec["j"]))] = rec
            elif t == "kp":
                state.key_points[str(rec["i"])] = rec
            elif t == "emb":
                state.embeddings[str(rec["k"])] = [float(x) for x in rec["v"]]
            elif t == "score":
                state.scores[_cell(rec)] = rec
            elif t == "stop":
                state.stopped = str(rec.get("why") or "stopped")
            elif t == "done":
                state.done = True
        except (KeyError, TypeError, ValueError):
            continue
    return state


class Journal:
    """Append-only writer. Not thread-safe; a run writes from its one event loop."""

    def __init__(self, path: Path, *, fresh: bool, lock: RunLock | None = None) -> None:
        self.path = path
        self.lock = lock  # released when the journal closes
        self._log = AppendLog(path, fresh=fresh)
        self._log.open()  # the journal exists from the start of a run
        self.records = 0

    def write(self, record: dict[str, Any]) -> None:
        self._log.write(dumps_bytes(record) + b"\n")
        self.records += 1

    def write_many(self, records: list[dict[str, Any]]) -> None:
        """Several records in one system call (they arrive together, e.g. an answer and its score)."""
        if not records:
            return
        self._log.write(b"".join([dumps_bytes(r) + b"\n" for r in records]))
        self.records += len(records)

    def close(self) -> None:
        self._log.close()
        if self.lock is not None:
            self.lock.release()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_journal(path: Path, *, resume: bool, header: dict[str, Any]) -> tuple[Journal, JournalState]:
    """The run's journal: the existing one and what it holds when resuming, else a fresh one that starts
    with `header` (a previous journal is kept beside it as `.prev.jsonl`, not destroyed).

    Takes the run's lock first (run_lock.py), so a second run of the same label neither repeats the
    calls of the first nor renames its journal away: it raises RunLocked (a PlanError) naming the holder.
    """
    lock = RunLock(lock_path(path))
    lock.acquire(str(header.get("run_label") or path.name.removesuffix(".journal.jsonl")))
    try:
        if resume and path.exists():
            return Journal(path, fresh=False, lock=lock), load(path)
        if path.exists():
            with contextlib.suppress(OSError):
                path.replace(path.with_suffix(".prev.jsonl"))
        journal = Journal(path, fresh=True, lock=lock)
    except BaseException:
        lock.release()
        raise
    journal.write({"t": "run", "v": 1, **header})
    return journal, JournalState()


def mark_stopped(path: Path, why: str) -> None:
    """Append why a run stopped early to its (closed) journal, so a later reader can say so."""
    with Journal(path, fresh=False) as journal:
        journal.write({"t": "stop", "why": why})


def run_header(plan: Any, options: Any) -> dict[str, Any]:
    """What every journal's header says besides the format's own fields: the file (absolute, for an
    editor looking for its results: engine/ide/run_history.py), the selection, and the fingerprints
    of the items run (run/items.py)."""
    return {"path": os.path.abspath(plan.path), "select": list(options.select),
            "fp": dict(getattr(plan, "fingerprints", {}))}


def cell_ref(cell: Cell) -> list[str]:
    return [cell.item, cell.model]
