"""A run's store as the runner sees it: `open_journal` (the writer, with the run's lock), `load` (what an
earlier run has, as a JournalState), `read_header`, `records`, `mark_stopped`.

The store is the run database (journal/database.py: one SQLite file a run, `<run label>.run.db`).
`Journal.write` is its one writer: each call is one transaction, so records that belong together (an
answer and its score and usage) are kept by a kill all together or not at all, and a call counts as
finished the moment its transaction commits. `--resume` reads the database into a JournalState and the
runner skips every call it already holds. A journal of an earlier evalspec (`….journal.jsonl`,
journal/legacy_jsonl.py) is read as it is by `load`/`read_header`/`records`, and copied into a new
database when its run is resumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..events import Cell
from . import database as db
from . import legacy_jsonl
from .database import NotADatabase, RunLocked
from .records import (
    BatchCancelled,
    BatchCreated,
    BatchEnded,
    BatchFileUploaded,
    BatchPlanned,
    CellScore,
    Done,
    Embedding,
    Failed,
    Generated,
    Judged,
    JudgeReply,
    KeyPoints,
    Record,
    ResultsName,
    RunHeader,
    Stopped,
    Usage,
    cell_ref,
)

__all__ = ["Journal", "JournalState", "NotADatabase", "RunLocked", "cell_ref", "load", "mark_stopped", "open_journal",
           "read_header", "records", "run_header"]


class JournaledUsage:
    """A database's usage rows, read from it again each time they are iterated: a resumed run sums them
    once (cost/spend.py), and as objects they were ~200 bytes a call for the whole run (a million in a
    judged 100,000-prompt run killed late). The first `count` rows are the ones there when the run was
    loaded: the run adds its own after them."""

    def __init__(self, path: Path, count: int = 0) -> None:
        self.path = path
        self.count = count

    def append(self, record: Usage) -> None:
        self.count += 1  # read again from the database when iterated

    def __iter__(self) -> Iterator[Usage]:
        if not self.count:
            return iter(())
        return self._read()

    def _read(self) -> Iterator[Usage]:
        with db.reading(self.path) as conn:
            yield from db.usage(conn, self.count)

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
    # Set when `scores` hold their results as stored (an AgentV resume, db.stored_scores): reads one back
    _unpack: Callable[[str | bytes], bytes] | None = field(default=None, repr=False, compare=False)

    def result(self, done: CellScore) -> dict[str, Any]:
        """A score's result: as loaded, or read back from what the database stored."""
        if self._unpack is None or done.packed is None or done.result:
            return done.result
        from ...jsonio import loads

        value = loads(self._unpack(done.packed))
        return value if isinstance(value, dict) else {}

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
        elif isinstance(record, ResultsName) and self.header is not None:
            self.header = dataclasses.replace(self.header, results=record.name)
        elif isinstance(record, Stopped):
            self.stopped, self.stopped_cells = record.why, record.cells
        elif isinstance(record, Done):
            self.done = True




def _is_database(path: Path) -> bool:
    return not path.name.endswith(legacy_jsonl.SUFFIX) or db.is_database(path)


def _state(conn: sqlite3.Connection, path: Path, *, stored: bool = False) -> JournalState:
    """`stored`: the scores' results as the database stores them (JournalState.result reads one)."""
    state = JournalState(header=db.header(conn))
    for generated in db.answers(conn):
        state.turns.setdefault(generated.cell, {})[generated.turn] = generated
    for failed in db.failures(conn):
        state.failures[failed.cell] = failed
    for judged in db.judgements(conn):
        state.judgements[judged.key] = judged
    for points in db.key_points(conn):
        state.key_points[points.prompt_id] = points
    for embedding in db.embeddings(conn):
        state.embeddings[embedding.key] = embedding.vector
    if stored:
        state._unpack = db.rows_unpacker(conn)
    for score in db.stored_scores(conn) if stored else db.scores(conn):
        state.scores[score.cell] = score
    state.usage = JournaledUsage(path, conn.execute("SELECT count(*) FROM usage").fetchone()[0])
    state.done, state.stopped = db.finished(conn)
    state.stopped_cells = db.stopped_cells(conn)
    return state


def load(path: Path) -> JournalState:
    """What the run database (or an earlier evalspec's journal) at `path` holds. Raises OSError when it
    cannot be read, NotADatabase when the file is not one."""
    if not _is_database(path):
        state = JournalState()
        legacy_jsonl.load_into(path, state)
        return state
    with db.reading(path) as conn:
        return _state(conn, path)


def read_header(path: Path, *, fingerprints: bool = True) -> RunHeader | None:
    """A run's header (what run it is: kind, file, label, items); None for a file that is not a run's
    database or journal. `fingerprints=False`: without the items' fingerprints (`fp` empty)."""
    if not _is_database(path):
        return legacy_jsonl.read_header(path, fingerprints=fingerprints)
    try:
        with db.reading(path) as conn:
            return db.header(conn, fingerprints=fingerprints)
    except (OSError, NotADatabase, sqlite3.Error, ValueError, TypeError):
        return None


def wall_time(path: Path) -> tuple[float, ...] | None:
    """How long each process ran the run, in seconds, in order (the run's wall time is their sum); None
    when the file does not say (an earlier evalspec's journal or database, not a run database)."""
    if not _is_database(path):
        return None
    try:
        with db.reading(path) as conn:
            return db.wall_time(conn)
    except (OSError, NotADatabase, sqlite3.Error, ValueError, TypeError):
        return None


def records(path: Path, *kinds: type[Record]) -> Iterator[Record]:
    """The run's records in the order they were written (the header first, Done/Stopped last); only those
    of `kinds` when given."""
    if not _is_database(path):
        yield from legacy_jsonl.records(path, *kinds)
        return
    wanted: set[type[Any]] = set(kinds)
    with db.reading(path) as conn:
        if not wanted or RunHeader in wanted:
            head = db.header(conn)
            if head is not None:
                yield head
        rows = wanted - {RunHeader, Done, Stopped}
        if rows or not wanted:
            yield from db.in_order(conn, rows)
        done, stopped = db.finished(conn)
        if done and (not wanted or Done in wanted):
            yield Done()
        if stopped is not None and (not wanted or Stopped in wanted):
            yield Stopped(stopped, db.stopped_cells(conn))


# How long a write may wait for the transaction that commits it: the writes of that moment (answers,
# scores, usage of the cells finishing together) go out in one commit. Each commit writes every page it
# touched to the WAL: committing each cell's write alone wrote ~26 KB a cell, 25 times the cell's data
# (52 MB for a 2,000-prompt run whose results are 2.1 MB); every 50 ms, 7.1-7.7 MB; every 0.5 s, 6.0 MB.
# What a run reports done waits for the commit (`on_commit`, run/pipeline.py), which also commits when
# the run has nothing else to report, at most every pipeline.IDLE_COMMIT seconds.
COMMIT_EVERY = 0.5
# Records that commit at once: what must be on disk before the run does something outside (a batch
# planned before it is sent, its id the moment the provider returns it, the results file's name before the
# file is written) or that ends a run.
_AT_ONCE = frozenset({RunHeader, Done, Stopped, BatchPlanned, BatchFileUploaded, BatchCreated, BatchEnded,
                      BatchCancelled, ResultsName})  # by exact type: records are final dataclasses


class Journal:
    """The run database's one writer. Not thread-safe; a run writes from its one event loop.

    A write joins the open transaction, which commits COMMIT_EVERY seconds after it began (on the run's
    event loop; at once without one), at once for the records in _AT_ONCE, and when the journal closes. A
    call counts as finished when the transaction holding its answer commits: a kill in between loses that
    answer (at most COMMIT_EVERY seconds of them) and `--resume` asks for it again; a committed one is
    never asked for again. A write or commit that fails rolls its transaction back and breaks the journal:
    every later write raises, so no record outlives one it depends on. `pending` says a transaction is
    open, `committed_records` how many records are kept; `on_commit`, when set, is called after each
    commit (the pipeline holds back the events that report what is not committed yet)."""

    def __init__(self, path: Path, conn: sqlite3.Connection, *, locked: bool = True,
                 stale_pid: int | None = None) -> None:
        self.path = path
        self.conn = conn
        self.locked = locked  # the lock is released when the journal closes
        self.stale_pid = stale_pid  # the PID a killed earlier holder left in the lock
        self.records = 0  # written (committed or not)
        self._uncommitted = 0
        self.commits = 0
        self._open = False  # a transaction is open: the writes since the last commit
        self._timer: asyncio.TimerHandle | None = None
        self.session: int | None = None  # this process's row in `sessions` (its wall time), once started
        self.on_commit: Callable[[], None] | None = None
        self.committed_at = 0.0  # time.monotonic() of the last commit
        # The failures table may hold a row (a resumed run's, or one written since): an answer then
        # deletes its cell's. A fresh run's is empty until a Failed is written (a DELETE an answer saved).
        self.failures = True
        # Why a write or commit failed (a full disk): its transaction was rolled back, so a later record
        # (a judgement or score whose answer was in it) must not be kept; every later write raises this.
        self.broken: str | None = None
        # A cell process's journal (run/split.py): its writes go to this list, for the process that owns
        # the database to write; it commits nothing itself.
        self.diverted: list[Any] | None = None

    def divert(self, into: list[Any]) -> None:
        """From now on write into `into` instead of the database (in a forked cell process: its copy of the
        connection is never used)."""
        self.diverted = into
        self._open = False
        if self._timer is not None:  # (the parent's loop's timer: never run here)
            self._timer = None
        self.on_commit = None

    def start_session(self) -> None:
        """This process starts running the run: its session's row, whose end each commit moves on."""
        self._check()
        try:
            if not self._open:
                self.conn.execute("BEGIN IMMEDIATE")
                self._open = True
            self.session = db.session_started(self.conn, time.time())
        except sqlite3.Error as exc:
            raise OSError(self._rollback(exc)) from exc
        self.commit()
        self.committed_at = 0.0  # not a cell's commit: the first cell reported is committed at once

    @property
    def pending(self) -> bool:
        """Records were written that are not committed yet."""
        return self._open

    @property
    def committed_records(self) -> int:
        """How many of the `records` written are committed."""
        return self.records - self._uncommitted

    @classmethod
    def after_run(cls, path: Path) -> Journal:
        """A writer for a run that has ended (its batches cancelled, why it stopped): no lock taken."""
        return cls(path, db.connect(path, create=False), locked=False)

    def write(self, *records: Record) -> None:
        """Write records in the open transaction (all of them or none are kept). Raises OSError when the
        database cannot take them (a full disk)."""
        if not records:
            return
        if self.diverted is not None:
            self.diverted.extend(records)
            self.records += len(records)
            return
        self._check()
        try:
            if not self._open:
                self.conn.execute("BEGIN IMMEDIATE")
                self._open = True
            kinds = {type(r) for r in records}
            if not self.failures and Failed in kinds:
                self.failures = True
            db.put(self.conn, records, failures=self.failures)
        except sqlite3.Error as exc:
            raise OSError(self._rollback(exc)) from exc
        self.records += len(records)
        self._uncommitted += len(records)
        if not _AT_ONCE.isdisjoint(kinds):
            self.commit()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.commit()
                return
            self._timer = loop.call_later(COMMIT_EVERY, self._timed)

    def commit_within(self, seconds: float) -> None:
        """Commit what was written within `seconds` (at once when ≤ 0), sooner than COMMIT_EVERY."""
        if self.diverted is not None:
            return
        if seconds <= 0:
            self.commit()
            return
        if not self._open:
            return
        loop = asyncio.get_running_loop()
        if self._timer is not None:
            if self._timer.when() <= loop.time() + seconds:
                return
            self._timer.cancel()
        self._timer = loop.call_later(seconds, self._timed)

    def _timed(self) -> None:
        self._timer = None
        with contextlib.suppress(OSError):  # the next write or commit raises it (`broken`)
            self.commit()

    def commit(self) -> None:
        """Commit what was written (nothing when nothing was). Raises OSError when it cannot be."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._check()
        if not self._open or self.diverted is not None:
            return
        try:
            if self.session is not None:
                db.session_ended(self.conn, self.session, time.time())
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise OSError(self._rollback(exc)) from exc
        self._open = False
        self._uncommitted = 0
        self.commits += 1
        self.committed_at = time.monotonic()
        if self.on_commit is not None:
            self.on_commit()

    def _check(self) -> None:
        if self.broken is not None:
            raise OSError(self.broken)

    def _rollback(self, exc: sqlite3.Error) -> str:
        self.broken = f"cannot write the run database {self.path}: {exc}"
        self._open = False
        self.records -= self._uncommitted
        self._uncommitted = 0
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("ROLLBACK")
        return self.broken

    def close(self) -> None:
        conn = self.conn
        if conn is None:
            return
        try:
            if self.broken is None:  # else what failed was rolled back, and nothing after it may be kept
                if self.session is not None and not self._open:  # the session's end, written whatever was last
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("BEGIN IMMEDIATE")
                        self._open = True
                self.commit()
        finally:
            self.conn = None  # type: ignore[assignment]
            if self.locked:
                db.release(conn, self.path)
            conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_journal(path: Path, *, resume: bool, header: RunHeader) -> tuple[Journal, JournalState]:
    """The run's database: what it holds when resuming, else emptied for a fresh run that starts with
    `header` (what an earlier run of the label had is kept beside it as `<label>.run.prev.db`).

    Takes the run's lock first (journal/database.py), so a second run of the same label neither repeats
    the calls of the first nor empties its database: it raises RunLocked (a PlanError) naming the holder.
    """
    journal, state = _open_journal(path, resume=resume, header=header)
    try:
        journal.start_session()
    except BaseException:
        journal.close()
        raise
    return journal, state


def _open_journal(path: Path, *, resume: bool, header: RunHeader) -> tuple[Journal, JournalState]:
    try:
        conn = db.connect(path, create=True)
    except NotADatabase as exc:
        from ..plan.error import PlanError

        raise PlanError(f"{exc}: move it away or choose another output folder (-o)") from None
    try:
        stale = db.acquire(conn, path, header.run_label or db.label_of(path))
        journal = Journal(path, conn, stale_pid=stale)
    except sqlite3.Error as exc:  # taking the lock is a write: a full disk refuses it
        conn.close()
        raise OSError(f"cannot write the run database {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    try:
        legacy = path.with_name(db.label_of(path) + legacy_jsonl.SUFFIX)
        if resume:
            if _empty(conn) and legacy.is_file() and not legacy.is_symlink():
                _import_legacy(journal, legacy)
            rows = not _empty(conn)
            state = _state(conn, path, stored=header.kind == "agentv")  # (a results row is several KB parsed)
            if state.header is None and rows:
                # Its run row lost (edited by hand): the rows it holds still count, and this run's
                # header is written, so a later --resume reads one.
                state.headless = True
                journal.write(header)
                return journal, state
            if state.header is None:
                journal.write(header)
                return journal, state
            changed = _changed_items(state.header, header)
            if changed:
                # A Weval run label hashes ids and points, not prompt texts: a reworded prompt resumed
                # the old run and kept the old prompt's answer. Its rows are dropped (it is run again)
                # and the items' fingerprints replaced, so a later resume keeps the new answer.
                state.forget(changed)
                state.header = dataclasses.replace(state.header, fp={**state.header.fp, **{
                    item: header.fp[item] for item in changed}})
                _forget_rows(journal, changed, header)
            elif _same(state.header.fp, header.fp):
                # the database's fingerprints are the plan's: one copy of them for the run, not two
                state.header = dataclasses.replace(state.header, fp=header.fp)
            return journal, state
        if not _empty(conn):
            _keep_previous(conn, path)
        try:
            with db.transaction(conn):
                db.clear(conn)
                db.put(conn, [header])
        except sqlite3.Error as exc:
            raise OSError(f"cannot write the run database {path}: {exc}") from exc
        journal.failures = False  # cleared
        return journal, JournalState()
    except BaseException:
        journal.close()
        raise


def _empty(conn: sqlite3.Connection) -> bool:
    return all(conn.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is None
               for t in ("run", "answers", "failures", "scores", "judgements", "usage", "batches"))


def _keep_previous(conn: sqlite3.Connection, path: Path) -> None:
    """A copy of what an earlier run of the label had, `<label>.run.prev.db` (one, replaced each time)."""
    prev = path.with_name(db.label_of(path) + db.PREV_SUFFIX)
    with contextlib.suppress(OSError):
        if db.not_own(prev):
            return  # a link or FIFO planted there is neither followed nor removed
        prev.unlink(missing_ok=True)
        with contextlib.suppress(sqlite3.Error):
            conn.execute("VACUUM INTO ?", (str(prev),))


def _import_legacy(journal: Journal, legacy: Path) -> None:
    """An earlier evalspec's journal of this run, copied into the (empty) database in one transaction,
    then renamed `….journal.jsonl.imported` (kept: nothing is destroyed)."""
    batch: list[Record] = []
    try:
        with db.transaction(journal.conn):
            for record in legacy_jsonl.records(legacy):
                batch.append(record)
                if len(batch) >= 1000:
                    db.put(journal.conn, batch)
                    batch = []
            db.put(journal.conn, batch)
    except sqlite3.Error as exc:
        raise OSError(f"cannot write the run database {journal.path}: {exc}") from exc
    with contextlib.suppress(OSError):
        legacy.replace(legacy.with_name(legacy.name + ".imported"))


def _forget_rows(journal: Journal, items: set[str], header: RunHeader) -> None:
    try:
        with db.transaction(journal.conn):
            for table in ("answers", "failures", "scores", "judgements", "key_points"):
                journal.conn.executemany(f"DELETE FROM {table} WHERE item = ?", ((i,) for i in items))
            db.put_items(journal.conn, ((i, header.fp[i]) for i in items))
    except sqlite3.Error as exc:
        raise OSError(f"cannot write the run database {journal.path}: {exc}") from exc


def _changed_items(old: RunHeader | None, new: RunHeader) -> set[str]:
    """The items whose text differs between the database's header and this run's (both fingerprinted)."""
    if old is None or not old.fp or not new.fp:
        return set()  # a journal from before fingerprints: nothing to compare
    from ..plan.items import Fingerprints

    if isinstance(new.fp, Fingerprints):
        return new.fp.changed(old.fp)
    return {item for item, fp in new.fp.items() if item in old.fp and old.fp[item] != fp}


def _same(old: Mapping[str, str], new: Mapping[str, str]) -> bool:
    from ..plan.items import Fingerprints

    return isinstance(new, Fingerprints) and isinstance(old, Fingerprints) and new.same(old)


def mark_stopped(path: Path, why: str, cells: Iterable[tuple[str, str]] = ()) -> None:
    """Record why a run stopped early in its (closed) database, and the (item, model) cells whose calls
    were in flight then, so a later reader can say so."""
    with Journal.after_run(path) as journal:
        journal.write(Stopped(why, tuple(Cell(item, model) for item, model in cells)))


def run_header(plan: Any, options: Any) -> dict[str, Any]:
    """What every run's header says besides the format's own fields (RunHeader's path, select and
    fp): the file (absolute, for an editor looking for its results: engine/ide/run_history.py), the
    selection, and the fingerprints of the items run (run/plan/items.py)."""
    from ..plan.items import Fingerprints

    fp = getattr(plan, "fingerprints", {})
    return {"path": os.path.abspath(plan.path), "select": tuple(options.select),
            "fp": fp if isinstance(fp, Fingerprints) else dict(fp.items())}
