"""The run database: one SQLite file a run (`<run label>.run.db`), its one writer, its readers, its lock.

Everything a run learns is a row here the moment it exists: the run itself (`run`), the items it plans
with their fingerprints (`items`), every answer (`answers`), failure (`failures`), judgement
(`judgements`), key-point extraction (`key_points`), embedding (`embeddings`), cell result (`scores`),
call's tokens and cost (`usage`), provider batch (`batches`, `batch_items`), cell a cost cap kept from
starting (`not_run`, schema 2), a shard's export head (`exports`, schema 2), when each process ran it
(`sessions`: the run's wall time is theirs added up) and who runs it (`lock`).
docs/run-database.md documents the tables for people who query them with `sqlite3`.

WAL, one writer: a write joins the open transaction, committed within journal/run_store.py's COMMIT_EVERY
(batch records and the end of a run at once), so a kill (`kill -9` included) keeps a transaction's rows
all or none; `synchronous=NORMAL` (a commit reaches the kernel, not the platters: surviving the process is
the goal, not a power cut). The records are journal/records.py's dataclasses; `put` turns each into
its rows, `state`/`records` read them back. Text is masked (providers/redact.py) on its way in, as
every file a run writes.

**The database is the lock**: the `lock` row names the process running the run (PID and its start
time). It is taken in a `BEGIN IMMEDIATE` transaction, so two processes starting together are
serialised by SQLite; a row naming a live process refuses the run (RunLocked), one naming a dead
process is stale and taken over (the run says so).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from ...jsonio import dumps_bytes, loads
from ...own_files import NotOwnFile, check_own, open_own
from ...providers.redact import redact, redact_bytes
from ..events import Cell
from ..plan.error import PlanError
from .packed_rows import DICTIONARY, unpacker
from .records import (
    BatchCancelled,
    BatchCreated,
    BatchEnded,
    BatchFileUploaded,
    BatchPlanned,
    CellScore,
    Done,
    Embedding,
    ExportHead,
    Failed,
    Generated,
    Judged,
    JudgeReply,
    KeyPoints,
    NotRun,
    Record,
    ResultsName,
    RunHeader,
    Stopped,
    Usage,
)

R = TypeVar("R")


def _as_is(value: Any) -> Any:
    return value


# sqlite3 binds an exact int, float or str as it is, and asks its adapters about anything else: None and
# bytes looked for `__adapt__` and `__conform__` each time and formatted the AttributeErrors (~0.8 µs a
# None, a third of a usage row's insert with two). Found in the registry as themselves, they bind as ever
# (NULL, a BLOB) at half that. Process-wide, like every sqlite3 adapter: it changes no value bound.
for _kind in (type(None), bytes):
    sqlite3.register_adapter(_kind, _as_is)

SUFFIX = ".run.db"
PREV_SUFFIX = ".run.prev.db"  # the database of the run of the label before a fresh run (journal/run_store.py)
SCHEMA_VERSION = 4  # PRAGMA user_version
# 1: before `not_run` and `exports`. Opened by a writer, such a database gets them (CREATE TABLE IF NOT EXISTS) and
# version 4; a reader reads it as it is (has_not_run: False). 2: before AgentV rows were packed (packed_rows.py:
# an evalspec reading version 2 cannot read them, so it refuses a version-3 database); read and written as it is.
# 3: before `usage.cached` (a writer adds the column; a reader takes its absence as no call cached).
OLDEST_SCHEMA = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS run (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    kind TEXT NOT NULL, file TEXT NOT NULL, run_label TEXT NOT NULL, started TEXT NOT NULL,
    path TEXT NOT NULL DEFAULT '', selection TEXT NOT NULL DEFAULT '[]', config_id TEXT, systems TEXT,
    results TEXT, version INTEGER NOT NULL DEFAULT 1, extra TEXT NOT NULL DEFAULT '{}',
    finished INTEGER NOT NULL DEFAULT 0, stopped TEXT, stopped_cells TEXT);
CREATE TABLE IF NOT EXISTS items (
    seq INTEGER PRIMARY KEY, item TEXT NOT NULL UNIQUE, fingerprint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    item TEXT NOT NULL, model TEXT NOT NULL, turn INTEGER NOT NULL, text TEXT NOT NULL,
    input_tokens INTEGER, output_tokens INTEGER, ms REAL, cached INTEGER NOT NULL DEFAULT 0,
    answered_by TEXT, names_model INTEGER NOT NULL DEFAULT 0, tool_calls TEXT, cost_usd REAL, at INTEGER NOT NULL,
    PRIMARY KEY (item, model, turn));
CREATE TABLE IF NOT EXISTS failures (
    item TEXT NOT NULL, model TEXT NOT NULL, error TEXT NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL,
    PRIMARY KEY (item, model));
CREATE TABLE IF NOT EXISTS judgements (
    item TEXT NOT NULL, model TEXT NOT NULL, point INTEGER NOT NULL, judge TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('score', 'reply')), score REAL, reflection TEXT, reply TEXT, error TEXT,
    at INTEGER NOT NULL, PRIMARY KEY (item, model, point, judge));
CREATE TABLE IF NOT EXISTS key_points (
    item TEXT PRIMARY KEY, model TEXT NOT NULL, points TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY, vector TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS scores (
    item TEXT NOT NULL, model TEXT NOT NULL, score REAL, verdict TEXT, result TEXT NOT NULL, at INTEGER NOT NULL,
    PRIMARY KEY (item, model));
CREATE TABLE IF NOT EXISTS usage (
    seq INTEGER PRIMARY KEY, item TEXT NOT NULL, model TEXT NOT NULL, role TEXT NOT NULL, label TEXT NOT NULL,
    priced_as TEXT, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, usd REAL,
    batched INTEGER NOT NULL DEFAULT 0, at INTEGER NOT NULL, cached INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS batches (
    seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, model TEXT NOT NULL, planned_at REAL NOT NULL,
    file_id TEXT, batch_id TEXT, status TEXT, cancelled INTEGER NOT NULL DEFAULT 0, at INTEGER NOT NULL,
    file_at INTEGER, created_at INTEGER, ended_at INTEGER, cancelled_at INTEGER);
CREATE TABLE IF NOT EXISTS batch_items (
    key TEXT NOT NULL, n INTEGER NOT NULL, custom_id TEXT NOT NULL, item TEXT NOT NULL, model TEXT NOT NULL,
    slot TEXT NOT NULL, PRIMARY KEY (key, n)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS not_run (
    item TEXT NOT NULL, model TEXT NOT NULL, why TEXT NOT NULL, row TEXT, at INTEGER NOT NULL,
    PRIMARY KEY (item, model));
CREATE TABLE IF NOT EXISTS exports (
    name TEXT PRIMARY KEY, body BLOB NOT NULL, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    n INTEGER PRIMARY KEY, started REAL NOT NULL, ended REAL);
CREATE TABLE IF NOT EXISTS lock (
    id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, since TEXT NOT NULL, host TEXT NOT NULL);
"""
# What a fresh run of the label empties (everything but the lock).
DATA_TABLES = ("run", "items", "answers", "failures", "judgements", "key_points", "embeddings", "scores", "usage",
               "batches", "batch_items", "not_run", "exports", "sessions")
# Made by every writer's connection too: a database written before the table existed gets it.
SESSIONS_TABLE = "CREATE TABLE IF NOT EXISTS sessions (n INTEGER PRIMARY KEY, started REAL NOT NULL, ended REAL)"


class RunLocked(PlanError):
    """Another process is running the same run (same output folder, same run label)."""

    def __init__(self, message: str, holder: int | None) -> None:
        super().__init__(message)
        self.holder = holder


class NotADatabase(ValueError):
    """A file in a run database's place that is not one (or one of a newer evalspec)."""


def db_path(folder: Path, base: str) -> Path:
    return folder / f"{base}{SUFFIX}"


def label_of(path: Path) -> str:
    return path.name.removesuffix(SUFFIX)


def _uri(path: Path, mode: str) -> str:
    return f"file:{quote(os.path.abspath(path))}?mode={mode}&nofollow=1"


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA busy_timeout = 10000")
    conn.execute("PRAGMA trusted_schema = OFF")  # a planted file's triggers and views run nothing of ours


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A connection to the run database at `path` (never through a link, never a FIFO). `create`: made
    with its tables when missing (the writer); else FileNotFoundError when missing, NotADatabase when the
    file is not one."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    # The database and SQLite's files beside it: never a link, FIFO or folder. Checked with lstat, not
    # opened: this process may hold SQLite's POSIX locks on them (a writer, then a reader of the same run),
    # and closing any descriptor of a file drops them all; another process then took the WAL index for
    # unused and reset it under the writer's memory map (SIGBUS in concurrent resumes).
    for beside in (f"{path}-wal", f"{path}-shm"):
        check_own(beside)
    made = False
    if not check_own(path):
        if not create:
            raise FileNotFoundError(errno.ENOENT, f"no run database at {path}")
        with contextlib.suppress(FileExistsError):  # a new file: nobody holds a lock on it yet
            os.close(open_own(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
            made = True
    if not os.access(path, os.W_OK):
        if create:
            raise PermissionError(errno.EACCES, f"cannot write the run database {path}: permission denied")
        return _reader(path, "ro")
    if create:
        conn = sqlite3.connect(_uri(path, "rwc"), uri=True, isolation_level=None, check_same_thread=False)
        try:
            _setup(conn)
            if made:
                # A database this call made holds nothing yet: switching it to WAL (a rollback-journal
                # transaction) and making its tables are not synced step by step (8 fdatasyncs, ~20 ms of
                # a run's start on this disk). What is written next is synced as ever, at the first
                # checkpoint or the close, which sync the whole file.
                conn.execute("PRAGMA synchronous = OFF")
            _to_wal(conn)
            if not made:
                conn.execute("PRAGMA synchronous = NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise NotADatabase(f"{path} was written by a newer evalspec (schema {version})")
            if version < SCHEMA_VERSION:
                with transaction(conn):
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    if not _has_column(conn, "usage", "cached"):  # a database of schema 1-3
                        conn.execute("ALTER TABLE usage ADD COLUMN cached INTEGER NOT NULL DEFAULT 0")
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute(SESSIONS_TABLE)
            if made:
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise _failure(path, exc) from None
        except BaseException:
            conn.close()
            raise
        return conn
    return _reader(path, "rw")


def _has_column(conn: sqlite3.Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))


def _to_wal(conn: sqlite3.Connection) -> None:
    """`journal_mode = WAL`. Two processes making the same new database (two runs of a label started at
    once) can each hold a read lock and want the other's gone: SQLite answers one of them SQLITE_BUSY at
    once, without its busy timeout, and that run failed with "database is locked" where the other's lock
    should have refused it by name. Tried again (the other's switch done, it is a no-op) for 10 s."""
    end = time.monotonic() + 10
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > end:
                raise
            time.sleep(0.01)


def _failure(path: Path, exc: sqlite3.DatabaseError) -> Exception:
    """What SQLite's error at opening means: a file that is not (or no longer) a database is NotADatabase; a
    disk that failed (full, an I/O error, a file-size limit) is an OSError naming the database."""
    if getattr(exc, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
        return NotADatabase(f"{path} is not a run database ({exc})")
    return OSError(errno.EIO, f"cannot write the run database {path}: {exc}")


def _reader(path: Path, mode: str) -> sqlite3.Connection:
    conn = sqlite3.connect(_uri(path, mode), uri=True, isolation_level=None, check_same_thread=False)
    try:
        _setup(conn)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if not OLDEST_SCHEMA <= version <= SCHEMA_VERSION:
            raise NotADatabase(f"{path} is not a run database of this evalspec (schema {version})")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _failure(path, exc) from None
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, kind: str = "IMMEDIATE") -> Iterator[None]:
    conn.execute(f"BEGIN {kind}")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextlib.contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A reader's connection in one read transaction (a consistent view while the run goes on)."""
    conn = connect(path, create=False)
    try:
        conn.execute("BEGIN DEFERRED")
        yield conn
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        conn.close()


def is_database(path: Path) -> bool:
    """Whether `path` is an SQLite file (a regular file, not empty; asked of SQLite itself: a descriptor of
    ours opened and closed on a database this process has open would drop SQLite's locks, see connect)."""
    try:
        if not check_own(path) or os.lstat(path).st_size == 0:
            return False
        conn = sqlite3.connect(_uri(path, "ro"), uri=True, check_same_thread=False)
    except (OSError, sqlite3.Error):
        return False
    try:
        conn.execute("PRAGMA schema_version").fetchone()
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


# --- the lock ------------------------------------------------------------------------------------------
_held: set[str] = set()  # the databases this process holds the lock of (a second run in the same process)
_held_guard = threading.Lock()


def _start_time(pid: int) -> str:
    """The process's start time as the kernel counts it (Linux), "" elsewhere: with the PID it names
    one process, so a PID reused after a kill is not taken for the holder."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return ""
    return stat.rsplit(b")", 1)[-1].split()[19].decode()


def _alive(pid: int, since: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        pass
    if since and os.path.isdir("/proc"):
        return _start_time(pid) == since
    return True


def acquire(conn: sqlite3.Connection, path: Path, label: str) -> int | None:
    """Take the run's lock, or raise RunLocked naming the holder. Returns the PID of a dead earlier holder
    whose lock was cleared (None when there was none)."""
    key = os.path.realpath(path)
    me = os.getpid()
    with transaction(conn):
        row = conn.execute("SELECT pid, since FROM lock WHERE id = 1").fetchone()
        stale = None
        if row is not None:
            pid, since = int(row[0]), str(row[1])
            with _held_guard:
                mine = pid == me and key in _held
            if mine or (pid != me and _alive(pid, since)):
                raise RunLocked(
                    f"run {label} is already running (PID {pid}; database {path}): wait for it to finish or "
                    "stop it first; a run that was stopped continues with --resume", pid)
            stale = pid if pid != me else None
        conn.execute("INSERT OR REPLACE INTO lock (id, pid, since, host) VALUES (1, ?, ?, ?)",
                     (me, _start_time(me), os.uname().nodename if hasattr(os, "uname") else ""))
    with _held_guard:
        _held.add(key)
    return stale


def release(conn: sqlite3.Connection, path: Path) -> None:
    with contextlib.suppress(sqlite3.Error), transaction(conn):
        conn.execute("DELETE FROM lock WHERE id = 1 AND pid = ?", (os.getpid(),))
    with _held_guard:
        _held.discard(os.path.realpath(path))


def holder(path: Path) -> int | None:
    """The PID of the live process running the run at `path`, None when none is."""
    try:
        with reading(path) as conn:
            row = conn.execute("SELECT pid, since FROM lock WHERE id = 1").fetchone()
    except (OSError, NotADatabase, sqlite3.Error):
        return None
    if row is None:
        return None
    pid, since = int(row[0]), str(row[1])
    return pid if (pid != os.getpid() and _alive(pid, since)) else None


# --- records in, rows out ----------------------------------------------------------------------------
def _text(value: str | None) -> str | bytes | None:
    """Text as SQLite keeps it, masked; text no UTF-8 can hold (a lone surrogate a model answered) as the
    bytes Python's `surrogatepass` makes of it, read back by `_str`."""
    if value is None:
        return None
    value = redact(value)
    if value.isascii():  # (a flag of the string: no surrogate to look for)
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")
    return value


def _str(value: str | bytes | None) -> Any:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def _json(value: Any) -> str:
    return json_text(dumps_bytes(value))


def json_text(data: bytes) -> str:
    """JSON bytes (`dumps_bytes`') as a JSON column stores them, masked: what a caller that has encoded a
    value anyway passes as a record's stored form (CellScore.packed), so it is not encoded twice."""
    return redact_bytes(data).decode("utf-8", "surrogatepass")


def _slot(slot: int | str) -> str:
    return f"i{slot}" if isinstance(slot, int) else f"s{slot}"


def _unslot(text: str) -> int | str:
    return int(text[1:]) if text[:1] == "i" else text[1:]


_ANSWER = "INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
_SCORE = "INSERT OR REPLACE INTO scores VALUES (?,?,?,?,?,?)"
_USAGE = ("INSERT INTO usage (item, model, role, label, priced_as, input_tokens, output_tokens, usd, batched, at, "
          "cached) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
_JUDGED = "INSERT OR REPLACE INTO judgements VALUES (?,?,?,?,'score',?,?,NULL,?,?)"
_REPLY = "INSERT OR REPLACE INTO judgements VALUES (?,?,?,?,'reply',NULL,NULL,?,?,?)"
_UNFAILED = "DELETE FROM failures WHERE item = ? AND model = ?"


def _answer_row(r: Generated, at: int) -> tuple[Any, ...]:
    cell = r.cell
    usage = r.usage or (None, None)
    return (cell.item, cell.model, r.turn, _text(r.text), usage[0], usage[1], r.ms, int(r.cached), _text(r.model),
            int(r.names_model), _json(list(r.tool_calls)) if r.tool_calls else None, r.cost_usd, at)


def _score_row(r: CellScore, at: int) -> tuple[Any, ...]:
    return (r.cell.item, r.cell.model, r.score, r.verdict, r.packed if r.packed is not None else _json(r.result), at)


def _usage_row(r: Usage, at: int) -> tuple[Any, ...]:
    return (r.cell.item, r.cell.model, r.role, r.model, r.priced_as, r.usage[0], r.usage[1], r.usd, int(r.batched),
            at, int(r.cached))


def _judged_row(r: Judged, at: int) -> tuple[Any, ...]:
    return (r.cell.item, r.cell.model, r.point, r.judge, r.score, _text(r.reflection), _text(r.error), at)


def _reply_row(r: JudgeReply, at: int) -> tuple[Any, ...]:
    return (r.cell.item, r.cell.model, r.index, r.judge, _text(r.text), _text(r.error), at)


# The records a cell is written as, each kind one table's row whatever the other records are: `put` writes
# a batch of only these a table at a time (executemany), each row with the time it had in the batch's order
_ROWS: dict[type, tuple[str, Callable[[Any, int], tuple[Any, ...]]]] = {
    Generated: (_ANSWER, _answer_row), CellScore: (_SCORE, _score_row), Usage: (_USAGE, _usage_row),
    Judged: (_JUDGED, _judged_row), JudgeReply: (_REPLY, _reply_row)}


def _put_tables(conn: sqlite3.Connection, records: Sequence[Record], start: int, failures: bool) -> bool:
    """`put` a table at a time; False (nothing written) when a record is of a kind outside `_ROWS`."""
    tables: dict[str, list[tuple[Any, ...]]] = {}
    unfailed: list[tuple[str, str]] = []
    rows = _ROWS
    r: Any  # (each of _ROWS' kinds: a Generated's cell below)
    for n, r in enumerate(records):
        found = rows.get(type(r))
        if found is None:
            return False
        sql, row = found
        rows_of = tables.get(sql)
        if rows_of is None:
            rows_of = tables[sql] = []
        rows_of.append(row(r, start + n))
        if failures and sql is _ANSWER:
            unfailed.append((r.cell.item, r.cell.model))
    many = conn.executemany
    for sql, table in tables.items():
        many(sql, table)
    if unfailed:
        many(_UNFAILED, unfailed)
    return True


def put(conn: sqlite3.Connection, records: Sequence[Record], *, failures: bool = True) -> None:
    """Write records as rows, in one transaction (the caller's): a later record of the same key replaces
    the earlier one, as in the state it is read into. `failures=False`: the caller knows the failures
    table is empty (an answer has no failure of its cell to delete). Every record has `at`, its place in
    the order of the records across tables, as its time in nanoseconds."""
    start = time.time_ns()
    if len(records) > 3 and _put_tables(conn, records, start, failures):
        return
    ex = conn.execute
    for n, r in enumerate(records):
        at = start + n  # when it was written, in nanoseconds: the order of the records across tables
        if isinstance(r, Generated):
            ex(_ANSWER, _answer_row(r, at))
            if failures:
                ex(_UNFAILED, (r.cell.item, r.cell.model))
        elif isinstance(r, CellScore):
            ex(_SCORE, _score_row(r, at))
        elif isinstance(r, Usage):
            ex(_USAGE, _usage_row(r, at))
        elif isinstance(r, Judged):
            ex(_JUDGED, _judged_row(r, at))
        elif isinstance(r, JudgeReply):
            ex(_REPLY, _reply_row(r, at))
        elif isinstance(r, Failed):
            ex("INSERT OR REPLACE INTO failures VALUES (?,?,?,?,?)",
               (r.cell.item, r.cell.model, _text(r.error), r.kind, at))
        elif isinstance(r, KeyPoints):
            ex("INSERT OR REPLACE INTO key_points VALUES (?,?,?,?)", (r.prompt_id, r.model, _json(list(r.points)), at))
        elif isinstance(r, Embedding):
            ex("INSERT OR REPLACE INTO embeddings VALUES (?,?,?)", (r.key, _json(r.vector), at))
        elif isinstance(r, RunHeader):
            _put_header(conn, r)
        elif isinstance(r, NotRun):
            put_not_run(conn, r, at)
        elif isinstance(r, ExportHead):
            ex("INSERT OR REPLACE INTO exports VALUES (?,?,?)", (r.name, r.body, at))
        elif isinstance(r, ResultsName):
            ex("UPDATE run SET results = ?", (r.name,))
        elif isinstance(r, Done):
            ex("UPDATE run SET finished = 1")
        elif isinstance(r, Stopped):
            ex("UPDATE run SET stopped = ?, stopped_cells = ?",
               (r.why, _json([[c.item, c.model] for c in r.cells]) if r.cells else None))
        elif isinstance(r, BatchPlanned):
            ex("DELETE FROM batch_items WHERE key = ?", (r.key,))
            ex("DELETE FROM batches WHERE key = ?", (r.key,))
            ex("INSERT INTO batches (key, model, planned_at, at) VALUES (?,?,?,?)", (r.key, r.model, r.planned_at, at))
            conn.executemany("INSERT INTO batch_items VALUES (?,?,?,?,?,?)",
                             ((r.key, n, cid, cell.item, cell.model, _slot(slot))
                              for n, (cid, cell, slot) in enumerate(r.items)))
        elif isinstance(r, BatchFileUploaded):
            ex("UPDATE batches SET file_id = ?, file_at = ? WHERE key = ?", (r.file_id, at, r.key))
        elif isinstance(r, BatchCreated):
            ex("UPDATE batches SET batch_id = ?, created_at = ? WHERE key = ?", (r.batch_id, at, r.key))
        elif isinstance(r, BatchEnded):
            ex("UPDATE batches SET status = ?, ended_at = ? WHERE key = ?", (_json(dict(r.status)), at, r.key))
        elif isinstance(r, BatchCancelled):
            ex("UPDATE batches SET cancelled = 1, cancelled_at = ? WHERE key = ?", (at, r.key))
        else:  # pragma: no cover - every record kind is above
            raise TypeError(f"no table for {type(r).__name__}")


def put_not_run(conn: sqlite3.Connection, r: NotRun, at: int) -> None:
    conn.execute("INSERT OR REPLACE INTO not_run VALUES (?,?,?,?,?)",
                 (r.cell.item, r.cell.model, _text(r.why),
                  r.packed if r.packed is not None else None if r.row is None else _json(r.row), at))


def _put_header(conn: sqlite3.Connection, h: RunHeader) -> None:
    conn.execute(
        "INSERT INTO run (id, kind, file, run_label, started, path, selection, config_id, systems, results, version, "
        "extra) VALUES (1,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, "
        "file = excluded.file, run_label = excluded.run_label, started = excluded.started, path = excluded.path, "
        "selection = excluded.selection, config_id = excluded.config_id, systems = excluded.systems, "
        "results = excluded.results, version = excluded.version, extra = excluded.extra",
        (h.kind, redact(h.file), h.run_label, h.started, redact(h.path), _json(list(h.select)), h.config_id,
         None if h.systems is None else _json(dict(h.systems)), h.results, h.version, _json(dict(h.extra))))
    put_items(conn, h.fp.items())


def put_items(conn: sqlite3.Connection, fingerprints: Iterable[tuple[str, str]]) -> None:
    """The plan's items and their fingerprints (a later value of an item replaces the earlier)."""
    conn.executemany("INSERT INTO items (item, fingerprint) VALUES (?, ?) ON CONFLICT (item) DO UPDATE SET "
                     "fingerprint = excluded.fingerprint", fingerprints)


def clear(conn: sqlite3.Connection) -> None:
    """Every row of an earlier run (a fresh run of the label), in the caller's transaction."""
    for table in DATA_TABLES:
        conn.execute(f"DELETE FROM {table}")


def header(conn: sqlite3.Connection, *, fingerprints: bool = True) -> RunHeader | None:
    row = conn.execute("SELECT kind, file, run_label, started, path, selection, config_id, systems, results, "
                       "version, extra FROM run WHERE id = 1").fetchone()
    if row is None:
        return None
    kind, file, label, started, path, selection, config_id, systems, results, version, extra = row
    fp: Any = {}
    if fingerprints:
        fp = _fingerprints(conn)
    select = loads(selection) if selection else []
    sys_map = loads(systems) if systems else None
    extra_map = loads(extra) if extra else {}
    return RunHeader(kind=str(kind), file=str(file), run_label=str(label), started=str(started), path=str(path),
                     select=tuple(str(s) for s in select) if isinstance(select, list) else (), fp=fp,
                     config_id=config_id, systems=sys_map if isinstance(sys_map, dict) else None,
                     results=results, version=int(version or 1),
                     extra=extra_map if isinstance(extra_map, dict) else {})


_HEX = frozenset("0123456789abcdef")


def _fingerprints(conn: sqlite3.Connection) -> Any:
    from ..plan.items import Fingerprints

    rows = conn.execute("SELECT item, fingerprint FROM items ORDER BY seq").fetchall()
    if all(len(fp) == 16 and _HEX.issuperset(fp) for _, fp in rows):
        return Fingerprints((item, bytes.fromhex(fp)) for item, fp in rows)
    return dict(rows)


def finished(conn: sqlite3.Connection) -> tuple[bool, str | None]:
    row = conn.execute("SELECT finished, stopped FROM run WHERE id = 1").fetchone()
    return (False, None) if row is None else (bool(row[0]), row[1])


def session_started(conn: sqlite3.Connection, at: float) -> int:
    """A process starts running the run at `at` (Unix time); its session's number."""
    cur = conn.execute("INSERT INTO sessions (started, ended) VALUES (?, ?)", (at, at))
    return int(cur.lastrowid or 0)


def session_ended(conn: sqlite3.Connection, n: int, at: float) -> None:
    """The session ran until `at` (written with each commit, so a killed process's is its last commit)."""
    conn.execute("UPDATE sessions SET ended = ? WHERE n = ?", (at, n))


def wall_time(conn: sqlite3.Connection) -> tuple[float, ...] | None:
    """How long each process ran the run, in seconds, in order (the run's wall time is their sum: the time
    between an interruption and `--resume` is not the run's); None for a database older than the table."""
    try:
        rows = conn.execute("SELECT started, ended FROM sessions ORDER BY n").fetchall()
    except sqlite3.OperationalError:
        return None
    return tuple(max(0.0, (end or start) - start) for start, end in rows) or None


def stopped_cells(conn: sqlite3.Connection) -> tuple[Cell, ...]:
    """The cells whose calls were in flight when the run was stopped (Stopped.cells), in their order."""
    row = conn.execute("SELECT stopped_cells FROM run WHERE id = 1").fetchone()
    cells = loads(row[0]) if row is not None and row[0] else []
    return tuple(Cell(str(c[0]), str(c[1])) for c in cells if isinstance(c, list) and len(c) == 2)


def _cell(item: str, model: str) -> Cell:
    return Cell(item, model)


def _answers(conn: sqlite3.Connection) -> Iterator[tuple[int, Generated]]:
    for (item, model, turn, text, inp, out, ms, cached, by, names, tc, cost, at) in conn.execute(
            "SELECT * FROM answers ORDER BY rowid"):
        calls = loads(tc) if tc else []
        yield at, Generated(_cell(item, model), int(turn), _str(text), None if inp is None or out is None else (inp, out),
                            ms, bool(cached), by, tuple(c for c in calls if isinstance(c, dict)), bool(names), cost)


def _failures(conn: sqlite3.Connection) -> Iterator[tuple[int, Failed]]:
    for item, model, error, kind, at in conn.execute("SELECT * FROM failures ORDER BY rowid"):
        yield at, Failed(_cell(item, model), _str(error), kind)


def _judgements(conn: sqlite3.Connection) -> Iterator[tuple[int, Judged | JudgeReply]]:
    for item, model, point, judge, kind, score, reflection, reply, error, at in conn.execute(
            "SELECT * FROM judgements ORDER BY rowid"):
        if kind == "reply":
            yield at, JudgeReply(_cell(item, model), int(point), judge, _str(reply), _str(error))
        else:
            yield at, Judged(_cell(item, model), int(point), judge, score, _str(reflection), _str(error))


def _key_points(conn: sqlite3.Connection) -> Iterator[tuple[int, KeyPoints]]:
    for item, model, points, at in conn.execute("SELECT * FROM key_points ORDER BY rowid"):
        values = loads(points)
        yield at, KeyPoints(item, model, tuple(str(p) for p in values) if isinstance(values, list) else ())


def _embeddings(conn: sqlite3.Connection) -> Iterator[tuple[int, Embedding]]:
    for key, vector, at in conn.execute("SELECT * FROM embeddings ORDER BY rowid"):
        yield at, Embedding(key, [float(x) for x in loads(vector)])


def rows_unpacker(conn: sqlite3.Connection) -> Callable[[str | bytes], bytes]:
    """What reads a `scores.result` or `not_run.row` back as the JSON bytes stored (journal/packed_rows.py)."""
    return unpacker(export_head(conn, DICTIONARY))


def _scores(conn: sqlite3.Connection) -> Iterator[tuple[int, CellScore]]:
    unpack = rows_unpacker(conn)
    for item, model, score, verdict, result, at in conn.execute("SELECT * FROM scores ORDER BY rowid"):
        value = loads(unpack(result))
        yield at, CellScore(_cell(item, model), score, verdict, value if isinstance(value, dict) else {})


def _usage(conn: sqlite3.Connection, limit: int = -1) -> Iterator[tuple[int, Usage]]:
    from sys import intern

    cached = "cached" if _has_column(conn, "usage", "cached") else "0"  # (schema 1-3: none)
    for item, model, role, label, priced, inp, out, usd, batched, at, hit in conn.execute(
            "SELECT item, model, role, label, priced_as, input_tokens, output_tokens, usd, batched, at, "
            f"{cached} FROM usage ORDER BY seq LIMIT ?", (limit,)):
        yield at, Usage(Cell(item, intern(model)), intern(role), intern(label),
                        None if priced is None else intern(priced), (int(inp), int(out)), usd, bool(batched),
                        bool(hit))


def _batch_records(conn: sqlite3.Connection) -> Iterator[tuple[int, Record]]:
    """The batches as the records that made them, each with when it was written."""
    for key, model, planned, file_id, batch_id, status, cancelled, at, file_at, created_at, ended_at, cancelled_at \
            in conn.execute("SELECT key, model, planned_at, file_id, batch_id, status, cancelled, at, file_at, "
                            "created_at, ended_at, cancelled_at FROM batches ORDER BY seq").fetchall():
        items = [(cid, Cell(item, m), _unslot(slot)) for cid, item, m, slot in conn.execute(
            "SELECT custom_id, item, model, slot FROM batch_items WHERE key = ? ORDER BY n", (key,))]
        yield at, BatchPlanned(key, model, float(planned), items)
        if file_id is not None:
            yield file_at or at, BatchFileUploaded(key, file_id)
        if batch_id is not None:
            yield created_at or at, BatchCreated(key, batch_id)
        if status is not None:
            value = loads(status)
            if isinstance(value, dict):
                yield ended_at or at, BatchEnded(key, value)
        if cancelled:
            yield cancelled_at or at, BatchCancelled(key)


def has_not_run(conn: sqlite3.Connection) -> bool:
    """Whether the database has the `not_run` table (schema 2; a schema-1 database read as it is has not)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'not_run'").fetchone() is not None


def not_run(conn: sqlite3.Connection) -> Iterator[NotRun]:
    """The cells a cost cap kept from starting (none in a schema-1 database), in the order recorded."""
    if not has_not_run(conn):
        return
    unpack = rows_unpacker(conn)
    for item, model, why, row, _at in conn.execute("SELECT item, model, why, row, at FROM not_run ORDER BY rowid"):
        value = loads(unpack(row)) if row is not None else None
        yield NotRun(_cell(item, model), _str(why), value if isinstance(value, dict) else None)


def export_head(conn: sqlite3.Connection, name: str) -> bytes | None:
    """The `exports` row `name`'s body (None: none, or a schema-1 database)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'exports'").fetchone() is None:
        return None
    row = conn.execute("SELECT body FROM exports WHERE name = ?", (name,)).fetchone()
    return None if row is None else bytes(row[0])


def cell_rows(conn: sqlite3.Connection) -> Iterator[tuple[str, str, str, Any]]:
    """Every cell's rows as (table, item, model, value), for rebuilding an export: `answers` (value: (turn,
    text)), `failures` (the error), `scores` (the result, decoded), `not_run` (why)."""
    for item, model, turn, text in conn.execute("SELECT item, model, turn, text FROM answers ORDER BY rowid"):
        yield "answers", item, model, (int(turn), _str(text))
    for item, model, error in conn.execute("SELECT item, model, error FROM failures ORDER BY rowid"):
        yield "failures", item, model, _str(error)
    unpack = rows_unpacker(conn)
    for item, model, result in conn.execute("SELECT item, model, result FROM scores ORDER BY rowid"):
        yield "scores", item, model, loads(unpack(result))
    if has_not_run(conn):
        for item, model, why in conn.execute("SELECT item, model, why FROM not_run ORDER BY rowid"):
            yield "not_run", item, model, _str(why)


def score_rows(conn: sqlite3.Connection) -> Iterator[tuple[str, str, bytes]]:
    """Each finished cell's (item, model, `result` as the JSON bytes stored), undecoded: an AgentV results
    row as the results file has it (evalspec merge copies them)."""
    unpack = rows_unpacker(conn)
    for item, model, result in conn.execute("SELECT item, model, result FROM scores ORDER BY rowid"):
        yield item, model, unpack(result)


def not_run_rows(conn: sqlite3.Connection) -> Iterator[tuple[str, str, bytes | None]]:
    """Each not-run cell's (item, model, its AgentV row as the JSON bytes stored, or None)."""
    if not has_not_run(conn):
        return
    unpack = rows_unpacker(conn)
    for item, model, row in conn.execute("SELECT item, model, row FROM not_run ORDER BY rowid"):
        yield item, model, None if row is None else unpack(row)


def _untimed(pairs: Iterator[tuple[int, R]]) -> Iterator[R]:
    return (record for _, record in pairs)


def answers(conn: sqlite3.Connection) -> Iterator[Generated]:
    return _untimed(_answers(conn))


def failures(conn: sqlite3.Connection) -> Iterator[Failed]:
    return _untimed(_failures(conn))


def judgements(conn: sqlite3.Connection) -> Iterator[Judged | JudgeReply]:
    return _untimed(_judgements(conn))


def key_points(conn: sqlite3.Connection) -> Iterator[KeyPoints]:
    return _untimed(_key_points(conn))


def embeddings(conn: sqlite3.Connection) -> Iterator[Embedding]:
    return _untimed(_embeddings(conn))


def scores(conn: sqlite3.Connection) -> Iterator[CellScore]:
    return _untimed(_scores(conn))


def stored_scores(conn: sqlite3.Connection) -> Iterator[CellScore]:
    """Each cell's score and verdict with its result as stored (`packed`: the row's JSON bytes or packed
    row; `result` left empty): what a resume of a big AgentV run holds, ~100 bytes a cell where the parsed
    row was several KB; `rows_unpacker` reads one back when the cell is replayed."""
    for item, model, score, verdict, result in conn.execute(
            "SELECT item, model, score, verdict, result FROM scores ORDER BY rowid"):
        stored = result.encode("utf-8", "surrogatepass") if isinstance(result, str) else bytes(result)
        yield CellScore(_cell(item, model), score, verdict, {}, packed=stored)


def usage(conn: sqlite3.Connection, limit: int = -1) -> Iterator[Usage]:
    return _untimed(_usage(conn, limit))


def batch_records(conn: sqlite3.Connection) -> Iterator[Record]:
    return _untimed(_batch_records(conn))


_TABLES: tuple[tuple[tuple[type[Any], ...], Any], ...] = (
    ((Generated,), _answers), ((Failed,), _failures), ((Judged, JudgeReply), _judgements), ((KeyPoints,), _key_points),
    ((Embedding,), _embeddings), ((CellScore,), _scores), ((Usage,), _usage),
    ((BatchPlanned, BatchFileUploaded, BatchCreated, BatchEnded, BatchCancelled), _batch_records))


def in_order(conn: sqlite3.Connection, kinds: set[type[Any]]) -> Iterator[Record]:
    """The records of `kinds` (all when empty) in the order they were written: each table's, merged by
    when each row was written (the header first; Done and Stopped last)."""
    import heapq

    streams = [reader(conn) for types, reader in _TABLES if not kinds or kinds.intersection(types)]
    for _, record in heapq.merge(*streams, key=lambda pair: pair[0]):
        if not kinds or type(record) in kinds:
            yield record


def batch_item_rows(conn: sqlite3.Connection, key: str) -> Iterator[tuple[str, str, str, int | str]]:
    """A part's items (custom_id, item, model, slot), in order, one at a time."""
    for cid, item, model, slot in conn.execute(
            "SELECT custom_id, item, model, slot FROM batch_items WHERE key = ? ORDER BY n", (key,)):
        yield cid, item, model, _unslot(slot)


def batch_rows(conn: sqlite3.Connection) -> list[tuple[str, str, float, str | None, str | None, Any, bool]]:
    out = []
    for key, model, at, file_id, batch_id, status, cancelled in conn.execute(
            "SELECT key, model, planned_at, file_id, batch_id, status, cancelled FROM batches ORDER BY seq"):
        value = loads(status) if status is not None else None
        out.append((key, model, float(at), file_id, batch_id, value if isinstance(value, dict) else None,
                    bool(cancelled)))
    return out


def not_own(path: Path) -> bool:
    """A link, FIFO or folder in the database's place (lstat: the file is not opened, see connect)."""
    try:
        check_own(path)
    except NotOwnFile:
        return True
    except OSError:
        return False
    return False
