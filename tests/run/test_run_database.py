"""The run database (run/journal/database.py) as a run uses it: killed with SIGKILL at any moment — while it
calls, while its judges score, once every cell is scored and the results are being exported — a resumed
run makes no call whose answer or judgement was committed and still finishes with every result; one run
per database, in this process as in another; an earlier evalspec's JSONL journal resumes by being copied
into a database; a run that is stopped says so in its database.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakeprovider import Reply
from run_records import databases, records_of

from evalspec.cli import main
from evalspec.run.journal import database
from evalspec.run.journal.records import Generated, RunHeader, Stopped
from evalspec.run.journal.run_store import load, mark_stopped, open_journal, read_header, records

from .conftest import SmartFake, classify, comparison, criterion_of, env_for, write

N = 24


def _blueprint(tmp_path: Path) -> Path:
    lines = ["models: [openai:candidate]", "evaluationConfig:", "  llm-coverage:", "    judges:",
             '      - {model: "openai:judge", approach: holistic}', "---"]
    for i in range(N):
        lines += [f"- id: p{i:02d}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}",
                  f"    - answers question {i}"]
    return write(tmp_path / "k.weval.yml", "\n".join(lines) + "\n")


def _decide(req: dict[str, Any]) -> Any:
    if criterion_of(req) is not None:
        return Reply.ok(classify("CLASS_EXACT"), delay=0.02)
    text = str(req["messages"][-1]["content"])
    return Reply.ok(f"an answer to {text}", delay=0.02)


def _done(db: Path) -> tuple[set[str], set[str]]:
    """The prompts whose answer, and whose judgement, the database holds (none when the run was killed
    after making the file and before its tables were committed)."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'answers'").fetchone():
            return set(), set()
        answered = {r[0] for r in conn.execute("SELECT item FROM answers")}
        judged = {r[0] for r in conn.execute("SELECT item FROM judgements")}
    return answered, judged


def _count(db: Path, table: str) -> int:
    try:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.Error:
        return 0


def _asked(smart: SmartFake) -> tuple[list[str], list[str]]:
    """The prompts whose answer, and whose judgement, were asked for (by the question in the request)."""
    answers, judges = [], []
    for req in smart.chat_requests():
        text = json.dumps(req["messages"])
        prompt = next(f"p{i:02d}" for i in range(N - 1, -1, -1) if f"question {i}" in text)
        (judges if criterion_of(req) is not None else answers).append(prompt)
    return answers, judges


@pytest.mark.timeout(300)
@pytest.mark.parametrize("moment", ["calling", "scoring", "random", "exporting"])
def test_a_kill_at_any_moment_loses_no_finished_call_and_repeats_none(tmp_path: Path, smart: SmartFake,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       moment: str) -> None:
    smart.decide = _decide
    bp = _blueprint(tmp_path)
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(out), "-j", "4",
                             "--retries", "0", "--no-report"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        if moment == "random":  # once the run has its database: any moment of it, or after its end
            while not databases(out):
                assert time.monotonic() < deadline
                time.sleep(0.005)
            time.sleep(random.uniform(0.0, 1.0))
        else:
            table, wanted = {"calling": ("answers", 5), "scoring": ("judgements", 5), "exporting": ("scores", N)}[moment]
            while not (db := next(iter(databases(out)), None)) or _count(db, table) < wanted:
                assert proc.poll() is None and time.monotonic() < deadline, "the run ended before the kill"
                time.sleep(0.005)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    [db] = databases(out)
    answered, judged = _done(db)
    assert smart.idle()
    smart.reset()
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    assert main(["run", str(bp), "-o", str(out), "--resume", "--no-report", "-j", "4"]) == 0
    asked_answers, asked_judges = _asked(smart)
    assert answered.isdisjoint(asked_answers), answered & set(asked_answers)  # no committed answer asked again
    assert judged.isdisjoint(asked_judges), judged & set(asked_judges)
    assert len(asked_answers) == len(set(asked_answers)) == N - len(answered)  # every other one, once
    data = comparison(out)
    scores = data["evaluationResults"]["llmCoverageScores"]
    assert len(scores) == N and all(s["openai:candidate[temp:0]"]["avgCoverageExtent"] == 1 for s in scores.values())
    if moment == "exporting":
        assert asked_answers == asked_judges == []


@pytest.mark.timeout(120)
def test_what_a_run_reported_done_survives_a_kill(tmp_path: Path, smart: SmartFake) -> None:
    """Records are committed in batches (run_store.COMMIT_EVERY); a cell the run reported scored (here on
    `--json`, as the display and the editor see it) was committed before it was reported."""
    smart.decide = _decide
    bp = _blueprint(tmp_path)
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(out), "-j", "4",
                             "--retries", "0", "--no-report", "--json"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    reported: set[str] = set()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "scored":
                reported.add(event["cell"]["item"])
                if len(reported) >= 3:
                    break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert len(reported) >= 3
    [db] = databases(out)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        scored = {r[0] for r in conn.execute("SELECT item FROM scores")}
    assert reported <= scored, reported - scored


HEADER = RunHeader(kind="weval", file="b.yml", run_label="lab", started="s", path="/w/b.yml")


def test_a_second_run_of_the_database_in_this_process_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    path = tmp_path / "lab.run.db"
    first, _ = open_journal(path, resume=False, header=HEADER)
    with pytest.raises(database.RunLocked, match=rf"already running \(PID {os.getpid()}"):
        open_journal(path, resume=True, header=HEADER)
    first.close()
    again, state = open_journal(path, resume=True, header=HEADER)
    assert again.stale_pid is None and state.header == HEADER
    again.close()


def test_a_lock_left_by_a_dead_process_is_cleared_and_named(tmp_path: Path) -> None:
    path = tmp_path / "lab.run.db"
    open_journal(path, resume=False, header=HEADER)[0].close()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("INSERT INTO lock VALUES (1, ?, 'x', 'h')", (int(dead.stdout),))
    assert database.holder(path) is None
    journal, _ = open_journal(path, resume=True, header=HEADER)
    assert journal.stale_pid == int(dead.stdout)
    journal.close()


def test_a_file_that_is_not_a_database_is_refused_with_a_message(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "b.yml", "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n")
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    [db] = databases(tmp_path / "out")
    db.write_bytes(b"this is not SQLite" * 100)
    assert read_header(db) is None
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--resume", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "is not a run database" in err and "Traceback" not in err


def test_an_earlier_evalspec_s_journal_resumes_into_a_database(tmp_path: Path, smart: SmartFake,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A run interrupted under the JSONL journal (written here record by record as that evalspec wrote them),
    resumed by this one: what the journal holds is copied into the database and not asked for again."""
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    smart.decide = _decide
    bp = _blueprint(tmp_path)
    out = tmp_path / "out"
    assert main(["run", str(bp), "-o", str(out), "--no-report"]) == 0
    [db] = databases(out)
    # The journal as the earlier evalspec wrote it, of a run killed once it had p00…p09's calls.
    lines = []
    for rec in records_of(db):
        if rec["t"] not in ("done", "run") and not str(rec.get("c", rec.get("i", ["p0"]))[0]).startswith("p0"):
            continue
        if rec["t"] != "done":
            lines.append(json.dumps(rec, separators=(",", ":"), ensure_ascii=False))
    old = db.with_name(db.name.removesuffix(".run.db") + ".journal.jsonl")
    old.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for path in db.parent.iterdir():
        if path != old:
            path.unlink()
    assert read_header(old) is not None and len(load(old).scores) == 10  # read as it is: report, editor
    smart.reset()
    assert main(["run", str(bp), "-o", str(out), "--resume", "--no-report"]) == 0
    asked_answers, _ = _asked(smart)
    assert sorted(asked_answers) == [f"p{i:02d}" for i in range(10, N)]
    assert not old.exists() and old.with_name(old.name + ".imported").is_file()
    assert len(comparison(out)["promptIds"]) == N
    state = load(db)
    assert len(state.scores) == N and state.done


def test_a_stopped_run_says_so_in_its_database(tmp_path: Path) -> None:
    path = tmp_path / "lab.run.db"
    journal, _ = open_journal(path, resume=False, header=HEADER)
    with journal:
        journal.write(Generated(database.Cell("p", "m"), 0, "an answer \ud800 half", (1, 2), 3.0, False))
    mark_stopped(path, "cancelled", [("q", "m"), ("r", "m")])  # the calls in flight at the Cancel
    state = load(path)
    assert state.stopped == "cancelled" and not state.done
    assert state.stopped_cells == (database.Cell("q", "m"), database.Cell("r", "m"))
    [stop] = records(path, Stopped)
    assert stop == Stopped("cancelled", (database.Cell("q", "m"), database.Cell("r", "m")))
    with sqlite3.connect(path) as conn:  # queryable as documented (docs/run-database.md)
        assert json.loads(conn.execute("SELECT stopped_cells FROM run").fetchone()[0]) == [["q", "m"], ["r", "m"]]
    assert state.turns[database.Cell("p", "m")][0].text == "an answer \ud800 half"  # a lone surrogate kept


def test_reading_a_database_this_process_writes_opens_none_of_its_files(tmp_path: Path, monkeypatch) -> None:
    """POSIX drops every lock a process holds on a file when it closes any descriptor of it: a descriptor
    of ours opened and closed on the run database, its WAL or its WAL index while this process's writer
    holds SQLite's locks let another process reset the WAL index under the writer (SIGBUS in concurrent
    resumes). Checks that read the database alongside the writer go through lstat and SQLite only."""
    path = tmp_path / "r.run.db"
    writer = database.connect(path, create=True)
    try:
        writer.execute("CREATE TABLE IF NOT EXISTS t (x)")
        writer.execute("INSERT INTO t VALUES (1)")  # the WAL and its index exist, the writer holds them
        assert Path(f"{path}-shm").exists()
        opened: list[str] = []
        real_open = os.open

        def spy(file: Any, *args: Any, **kwargs: Any) -> int:
            opened.append(os.fspath(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(os, "open", spy)
        assert database.is_database(path)
        assert not database.not_own(path)
        reader = database.connect(path, create=False)
        reader.close()
        monkeypatch.undo()
        assert [p for p in opened if p.startswith(str(path))] == []
    finally:
        writer.close()


def test_a_new_database_is_made_without_a_sync_per_step_and_then_synced_as_ever(tmp_path: Path,
                                                                                monkeypatch) -> None:
    # Making the file (the switch to WAL, the tables) is not synced step by step; then synchronous is
    # NORMAL again, before anything of the run is written; an existing database never leaves NORMAL.
    statements: list[str] = []
    real = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(database.sqlite3, "connect", traced)
    path = tmp_path / "r.run.db"
    conn = database.connect(path, create=True)
    pragmas = [s for s in statements if s.startswith("PRAGMA synchronous") or s.startswith("PRAGMA journal_mode")]
    assert pragmas == ["PRAGMA synchronous = OFF", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"]
    assert statements.index("PRAGMA synchronous = NORMAL") > max(i for i, s in enumerate(statements)
                                                                 if s.startswith("CREATE TABLE"))
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == database.SCHEMA_VERSION
    conn.close()
    statements.clear()
    conn = database.connect(path, create=True)  # the run's file again: as before
    assert [s for s in statements if s.startswith("PRAGMA synchronous")] == ["PRAGMA synchronous = NORMAL"]
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    conn.close()


def test_none_and_bytes_bind_as_themselves_without_sqlite3_s_adapter_search(tmp_path: Path) -> None:
    """database.py registers None and bytes as their own adapters (so sqlite3 finds them instead of
    searching for `__adapt__`/`__conform__` per value): they must still be stored as NULL and a BLOB."""
    for kind in (type(None), bytes):
        assert sqlite3.adapters.get((kind, sqlite3.PrepareProtocol)) is database._as_is
    conn = sqlite3.connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (a, b)")
    conn.execute("INSERT INTO t VALUES (?, ?)", (None, b"\x01packed"))
    assert conn.execute("SELECT typeof(a), typeof(b), b FROM t").fetchone() == ("null", "blob", b"\x01packed")
    conn.close()


def test_a_batch_of_cell_records_written_a_table_at_a_time_keeps_the_one_at_a_time_rows(tmp_path: Path) -> None:
    """`put` of a batch of only answers, scores, usage and judgements (a cell process's frames) writes a
    table at a time (executemany): the same rows as a record at a time, each `at` its place in the batch's
    order across tables, the later of two records of a key kept, an answer clearing its cell's failure. A
    batch with a failure in it is written a record at a time (the failure, then the answer that clears it)."""
    from evalspec.run.events import Cell
    from evalspec.run.journal.records import CellScore, Failed, JudgeReply, Usage

    a, b = Cell("p0", "m"), Cell("p1", "m")

    def rows(batch: list[Any], *, grouped: bool) -> tuple[dict[str, list[tuple[Any, ...]]], list[tuple[str, int]]]:
        """Each table's rows without `at`, and (table, place) of every row in the order of their `at`."""
        conn = database.connect(tmp_path / f"{grouped}-{len(batch)}.run.db", create=True)
        try:
            conn.execute("INSERT INTO failures VALUES ('p0','m','boom','error',0)")
            with pytest.MonkeyPatch.context() as mp:
                if not grouped:
                    mp.setattr(database, "_put_tables", lambda *_: False)
                database.put(conn, batch)
            conn.commit()
            out, order = {}, []
            for table in ("answers", "scores", "usage", "judgements", "failures"):
                cur = conn.execute(f"SELECT * FROM {table}")
                names = [d[0] for d in cur.description]
                found = cur.fetchall()
                out[table] = [tuple(v for n, v in zip(names, r, strict=True) if n != "at") for r in found]
                order += [(r[names.index("at")], table, k) for k, r in enumerate(found)]
        finally:
            conn.close()
        return out, [(t, k) for _, t, k in sorted(order)]

    batch = [Generated(a, 0, "one", (1, 2), 3.0, False), Usage(a, "answers", "m", None, (1, 2), None),
             CellScore(a, 1.0, "pass", {"x": 1}), Generated(b, 0, "two", None, None, True),
             JudgeReply(b, 0, "j", "text", None), CellScore(b, 0.5, "fail", {}, packed='{"y":2}'),
             CellScore(a, 0.0, "fail", {"x": 2})]
    grouped, each = rows(batch, grouped=True), rows(batch, grouped=False)
    assert grouped == each
    tables, order = grouped
    assert tables["failures"] == []
    assert sorted((r[0], r[3], r[4]) for r in tables["scores"]) == [("p0", "fail", '{"x":2}'), ("p1", "fail", '{"y":2}')]
    # (the score of p0 replaced: its row is the table's second, its `at` the batch's last)
    assert order == [("answers", 0), ("usage", 0), ("answers", 1), ("judgements", 0), ("scores", 0), ("scores", 1)]
    assert [r[0] for r in tables["scores"]] == ["p1", "p0"]

    failing = [Failed(a, "again", "error"), Generated(a, 0, "one", None, None, False),
               Usage(a, "answers", "m", None, (1, 2), None), CellScore(a, 1.0, "pass", {})]
    assert rows(failing, grouped=True)[0]["failures"] == []
