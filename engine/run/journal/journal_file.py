"""The run journal: every finished call and score, appended to a JSONL file as it arrives.

One record a line, written with a single `os.write` on a file opened O_APPEND, so a line reaches the
kernel the moment the result exists: Ctrl-C, SIGTERM or `kill -9` lose nothing already received (no
fsync: surviving a power cut is not the goal, surviving the process is). A line cut short by a kill is
skipped when the journal is read back, and the next write starts on a fresh line.

`--resume` reads the journal into a JournalState and the runner skips every call it already holds.
The records (one frozen dataclass per kind of line, and the short-keyed JSON each is written as) are in
journal/records.py; `Journal.write` is the one writer, `records()` / `load()` the one reader.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...appendlog import AppendLog, read_lines, read_records
from ...jsonio import dumps_bytes, loads
from ...own_files import open_own
from ..events import Cell
from .records import (
    CellScore,
    Done,
    Embedding,
    Failed,
    Generated,
    Judged,
    JudgeReply,
    KeyPoints,
    Record,
    RunHeader,
    Stopped,
    Usage,
    cell_ref,
    decode,
)
from .run_lock import RunLock, lock_path

__all__ = ["Journal", "JournalState", "cell_ref", "load", "mark_stopped", "open_journal", "read_header", "records",
           "run_header"]


class JournaledUsage:
    """A journal's usage records, read from its file again each time they are iterated: a resumed run sums
    them once (cost/spend.py), and as objects they were ~200 bytes a call for the whole run (a million in a
    judged 100,000-prompt run killed late). The first `count` usage lines of the file are the ones read when
    the journal was loaded: the run appends its own after them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0

    def append(self, record: Usage) -> None:
        self.count += 1  # read again from the file when iterated

    def __iter__(self) -> Iterator[Usage]:
        if not self.count:
            return iter(())
        read = (r for r in records(self.path, Usage) if isinstance(r, Usage))
        return itertools.islice(read, self.count)

    def __len__(self) -> int:
        return self.count


@dataclass
class JournalState:
    """What an earlier (interrupted) run already has, by cell: its records, the newest of each kind."""

    header: RunHeader | None = None
    turns: dict[Cell, dict[int, Generated]] = field(default_factory=dict)
    failures: dict[Cell, Failed] = field(default_factory=dict)
    judgements: dict[tuple[Cell, int, str], Judged | JudgeReply] = field(default_factory=dict)
    key_points: dict[str, KeyPoints] = field(default_factory=dict)
    embeddings: dict[str, list[float]] = field(default_factory=dict)
    scores: dict[Cell, CellScore] = field(default_factory=dict)
    # every call's, in order (cost/spend.py sums them); a loaded journal's are read from it (JournaledUsage)
    usage: list[Usage] | JournaledUsage = field(default_factory=list)
    done: bool = False
    stopped: str | None = None  # why the run was stopped before the end, when it says ("cancelled")
    stopped_cells: tuple[Cell, ...] = ()  # the cells whose calls were in flight when it was stopped
    headless: bool = False  # resumed from a journal that has records but lost its header (open_journal)

    @property
    def empty(self) -> bool:
        return not (self.turns or self.failures or self.scores or self.judgements)

    def forget(self, items: set[str]) -> None:
        """Drop what the journal holds for these items (their text changed since it was written)."""
        for cells in (self.turns, self.failures, self.scores):
            for cell in [c for c in cells if c.item in items]:
                del cells[cell]
        for key in [k for k in self.judgements if k[0].item in items]:
            del self.judgements[key]
        for item in items:
            self.key_points.pop(item, None)

    def add(self, record: Record) -> None:
        """Take one record into the state (a later record of the same key wins)."""
        if isinstance(record, Generated):
            self.turns.setdefault(record.cell, {})[record.turn] = record
            self.failures.pop(record.cell, None)  # a retried cell that got its answer
        elif isinstance(record, CellScore):
            self.scores[record.cell] = record
        elif isinstance(record, Judged | JudgeReply):
            self.judgements[record.key] = record
        elif isinstance(record, Usage):
            self.usage.append(record)
        elif isinstance(record, Failed):
            self.failures[record.cell] = record
        elif isinstance(record, KeyPoints):
            self.key_points[record.prompt_id] = record
        elif isinstance(record, Embedding):
            self.embeddings[record.key] = record.vector
        elif isinstance(record, RunHeader):
            self.header = record
        elif isinstance(record, Stopped):
            self.stopped, self.stopped_cells = record.why, record.cells
        elif isinstance(record, Done):
            self.done = True


def records(path: Path, *kinds: type[Record]) -> Iterator[Record]:
    """The journal's records in order; only those of `kinds` when given (the others are not decoded).
    A line cut short by a kill, a line that does not read as its record, and a record type this
    evalspec does not know are skipped."""
    tags = {kind.TAG for kind in kinds}
    keep = None
    if tags:
        # The writer puts a record's tag first: a line of another kind is not even parsed (a report reading
        # the answers' usage skipped the header only after parsing its fingerprints, ~16 MB at 100,000 prompts)
        wanted = tuple(b'{"t":"' + tag.encode() + b'"' for tag in tags)
        keep = lambda line: line.startswith(wanted) or not line.startswith(b'{"t":"')  # noqa: E731
    for rec in read_records(path, keep):
        try:
            if tags and rec.get("t") not in tags:
                continue
            record = decode(rec)
        except (KeyError, TypeError, ValueError):
            continue
        if record is not None:
            yield record


def load(path: Path) -> JournalState:
    state = JournalState(usage=JournaledUsage(path))
    # Batch mode's records are read by run/generate/batch_journal.py, not kept in the state: a batch plan's
    # line holds up to 100,000 items (a million in a 100,000-prompt judged run), not even parsed here.
    batch = b'{"t":"batch'
    header = b'{"t":"' + RunHeader.TAG.encode() + b'"'
    for line in read_lines(path, lambda line: not line.startswith(batch)):
        try:
            if line.startswith(header):  # its fingerprints read one at a time (RunHeader.from_line)
                record: Record | None = RunHeader.from_line(line)
            else:
                rec = loads(line)
                record = decode(rec) if isinstance(rec, dict) else None
        except (KeyError, TypeError, ValueError):
            continue  # cut short by a kill, or a line that does not read as its record
        if record is not None:
            state.add(record)
    return state


# A header's line grows with the items run (their fingerprints: ~3.5 MB at 100,000 prompts); a first line
# longer than this is not a journal's.
HEADER_MAX_BYTES = 64 << 20


def read_header(path: Path, *, fingerprints: bool = True) -> RunHeader | None:
    """A journal's header, reading only its first line (an editor looks at every journal of a folder);
    None for a file that is not a journal. `fingerprints=False`: the header without them (`fp` empty),
    read without making them (a report wants the file's path, not 100,000 fingerprints)."""
    try:
        with os.fdopen(open_own(path, os.O_RDONLY), "rb") as f:  # not through a link, never a FIFO
            if not fingerprints:
                rec = _header_without_fingerprints(f)
            else:
                first = f.readline(HEADER_MAX_BYTES)
                if not first.endswith(b"\n") and len(first) >= HEADER_MAX_BYTES:
                    return None
                return RunHeader.from_line(first)  # its fingerprints read one at a time
    except (OSError, KeyError, TypeError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(rec, dict) or rec.get("t") != RunHeader.TAG:
        return None
    try:
        return RunHeader.from_json(rec)
    except (KeyError, TypeError, ValueError):
        return None


class Journal:
    """Append-only writer. Not thread-safe; a run writes from its one event loop."""

    def __init__(self, path: Path, *, fresh: bool, lock: RunLock | None = None) -> None:
        self.path = path
        self.lock = lock  # released when the journal closes
        self._log = AppendLog(path, fresh=fresh)
        self._log.open()  # the journal exists from the start of a run
        self.records = 0

    def write(self, *records: Record) -> None:
        """Append records; several go out in one system call (they arrive together, e.g. an answer and
        its score), so a kill keeps all of them or none."""
        if not records:
            return
        if len(records) == 1:
            self._log.write(_line(records[0]))
        else:
            self._log.write(b"".join([_line(r) for r in records]))
        self.records += len(records)

    def close(self) -> None:
        self._log.close()
        if self.lock is not None:
            self.lock.release()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _line(record: Record) -> bytes:
    """A record's journal line: its JSON, or the line it encodes itself (a batch plan's items, one at a time)."""
    own = getattr(record, "json_line", None)
    if own is not None:
        line: bytes = own()
        return line
    return dumps_bytes(record.to_json()) + b"\n"


def open_journal(path: Path, *, resume: bool, header: RunHeader) -> tuple[Journal, JournalState]:
    """The run's journal: the existing one and what it holds when resuming, else a fresh one that starts
    with `header` (a previous journal is kept beside it as `.prev.jsonl`, not destroyed).

    Takes the run's lock first (journal/run_lock.py), so a second run of the same label neither repeats the
    calls of the first nor renames its journal away: it raises RunLocked (a PlanError) naming the holder.
    """
    lock = RunLock(lock_path(path))
    lock.acquire(header.run_label or path.name.removesuffix(".journal.jsonl"))
    try:
        if resume and path.exists():
            state = load(path)
            journal = Journal(path, fresh=False, lock=lock)
            if state.header is None and _has_lines(path):
                # Its first line lost (a full disk, a copy cut short): the records it holds still count,
                # and this run's header is written after them, so a later --resume reads one.
                state.headless = True
                journal.write(header)
                return journal, state
            changed = _changed_items(state.header, header)
            if changed and state.header is not None:
                # A Weval run label hashes ids and points, not prompt texts: a reworded prompt resumed
                # the old run and kept the old prompt's answer. Its records are dropped (it is run
                # again), and the header is written again with the new fingerprints, so a later resume
                # keeps the new answer.
                state.forget(changed)
                state.header = dataclasses.replace(state.header, fp={**state.header.fp, **{
                    item: header.fp[item] for item in changed}})
                journal.write(state.header)
            elif state.header is not None and _same(state.header.fp, header.fp):
                # the journal's fingerprints are the plan's: one copy of them for the run, not two
                state.header = dataclasses.replace(state.header, fp=header.fp)
            return journal, state
        if path.exists():
            with contextlib.suppress(OSError):
                path.replace(path.with_suffix(".prev.jsonl"))
        journal = Journal(path, fresh=True, lock=lock)
    except BaseException:
        lock.release()
        raise
    journal.write(header)
    return journal, JournalState()


def _has_lines(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _changed_items(old: RunHeader | None, new: RunHeader) -> set[str]:
    """The items whose text differs between the journal's header and this run's (both fingerprinted)."""
    if old is None or not old.fp or not new.fp:
        return set()  # a journal from before fingerprints: nothing to compare
    from ..plan.items import Fingerprints

    if isinstance(new.fp, Fingerprints):
        return new.fp.changed(old.fp)
    return {item for item, fp in new.fp.items() if item in old.fp and old.fp[item] != fp}


def _same(old: Mapping[str, str], new: Mapping[str, str]) -> bool:
    from ..plan.items import Fingerprints

    return isinstance(new, Fingerprints) and isinstance(old, Fingerprints) and new.same(old)


def _header_without_fingerprints(f: Any) -> dict[str, Any] | None:
    """The first line's object as `read_header` parses it, its "fp" entries read one at a time and dropped."""
    from ...json_stream import JsonReader

    reader = JsonReader(f)
    if reader.peek() != "{":
        return None
    rec: dict[str, Any] = {}
    for key in reader.entries():
        if key == "fp" and reader.peek() == "{":
            for _ in reader.entries():
                reader.value()
            rec[key] = {}
        else:
            rec[key] = reader.value()
    return rec


def mark_stopped(path: Path, why: str, cells: Iterable[tuple[str, str]] = ()) -> None:
    """Append why a run stopped early to its (closed) journal, and the (item, model) cells whose calls
    were in flight then, so a later reader can say so."""
    with Journal(path, fresh=False) as journal:
        journal.write(Stopped(why, tuple(Cell(item, model) for item, model in cells)))


def run_header(plan: Any, options: Any) -> dict[str, Any]:
    """What every journal's header says besides the format's own fields (RunHeader's path, select and
    fp): the file (absolute, for an editor looking for its results: engine/ide/run_history.py), the
    selection, and the fingerprints of the items run (run/plan/items.py)."""
    from ..plan.items import Fingerprints

    fp = getattr(plan, "fingerprints", {})
    # The plan's Fingerprints as they are (a dict of them was ~15 MB at 100,000 prompts; RunHeader.json_line
    # writes them one at a time)
    return {"path": os.path.abspath(plan.path), "select": tuple(options.select),
            "fp": fp if isinstance(fp, Fingerprints) else dict(fp.items())}
