"""A run that meets a full disk stops with one clear error and loses nothing: the resumed run repeats no
finished call. The disk is made full with the process's file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored):
every write past it fails with EFBIG as a full disk's fail with ENOSPC, and SQLite answers both "database or
disk is full"."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from run_records import run_records

from evalspec.run.events import Cell
from evalspec.run.journal import run_store
from evalspec.run.journal.records import CellScore, Generated, Judged, RunHeader
from evalspec.run.journal.run_store import load, open_journal

from .conftest import AGENTV_TARGETS, SmartFake, comparison, env_for, write

N = 400


def _limited(max_bytes: int):  # type: ignore[no-untyped-def]
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))
    return apply


def _suite(tmp_path: Path, kind: str) -> Path:
    padding = "padding " * 40
    if kind == "weval":
        lines = ["models: [openai:candidate]", "---"]
        for i in range(N):
            lines += [f"- id: p{i:03d}", f"  prompt: question {i} {padding}", "  should:",
                      f"    - $contains: question {i}"]
        return write(tmp_path / "full.weval.yml", "\n".join(lines) + "\n")
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    lines = ["name: full", "description: d", "tests:"]
    for i in range(N):
        lines += [f"  - id: p{i:03d}", f"    input: question {i} {padding}", "    criteria: c",
                  f"    assert: [{{type: contains, value: question {i}}}]"]
    return write(tmp_path / "full.eval.yaml", "\n".join(lines) + "\n")


def _committed(out: Path) -> set[str]:
    """The items whose answer the run database kept."""
    return {r["c"][0] for r in run_records(out) if r["t"] == "gen"}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["weval", "agentv"])
@pytest.mark.parametrize("limit", [48_000, 150_000, 400_000])  # full at the start, midway, at the export
def test_a_full_disk_stops_the_run_clearly_and_resume_repeats_no_call(tmp_path: Path, smart: SmartFake,
                                                                       limit: int, kind: str) -> None:
    bp = _suite(tmp_path, kind)
    out = tmp_path / "out"
    # No bytecode written under the limit (a cut .pyc would break the next import).
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "evalspec.cli", "run", str(bp), "--output", str(out), "--concurrency", "4",
           "--retries", "0"]

    full = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, preexec_fn=_limited(limit))
    assert full.returncode == 2, full.stderr[-2000:]
    assert "evalspec run: cannot write" in full.stderr and "full" in full.stderr
    assert "Traceback" not in full.stderr and "Unclosed" not in full.stderr, full.stderr[-2000:]
    asked_before = len(smart.chat_requests())
    committed = _committed(out)

    resumed = subprocess.run([*cmd, "--resume"], env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    if committed:
        assert f"{len(committed)} already done (resumed)" in resumed.stderr
    if kind == "weval":
        assert len(comparison(out)["promptIds"]) == N
    else:
        assert len([f for f in out.rglob("*.jsonl") if f.read_text(encoding="utf-8").count("\n") == N]) == 1
    asked = [f"p{int(r['messages'][-1]['content'].split(' ')[1]):03d}" for r in smart.chat_requests()[asked_before:]]
    # Every prompt the database kept is not asked again; every other prompt is asked once.
    assert sorted(asked) == sorted({f"p{i:03d}" for i in range(N)} - committed)


class _CommitFails:
    """A connection whose next COMMIT fails as a full disk's does (SQLite rolls the transaction back)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.fail = False

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT" and self.fail:
            self.fail = False
            raise sqlite3.OperationalError("database or disk is full")
        return self.conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_after_a_failed_commit_nothing_is_kept_without_what_it_lost(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/kill_trials.py's full-disk trials: the half-second commit (run_store.COMMIT_EVERY, on a timer)
    failed on a full disk, rolling back p03's answer; the error was left for "the next write", which
    succeeded once the rollback had freed the room, so p03's judgement and score were committed without
    its answer and `--resume` exported the cell with an empty answer and never asked for it again. Now the
    failed commit breaks the journal: every later write and commit raises, and close keeps nothing more."""
    monkeypatch.setattr(run_store, "COMMIT_EVERY", 0.01)
    path = tmp_path / "lab.run.db"
    cell = Cell("p03", "m")

    async def run() -> None:
        journal, _ = open_journal(path, resume=False, header=RunHeader(kind="weval", file="b.yml", run_label="lab",
                                                                       started="s"))
        conn = journal.conn = _CommitFails(journal.conn)  # type: ignore[assignment]
        journal.write(Generated(cell, 0, "an answer", (1, 2), 3.0, False))
        assert journal.pending  # the answer waits for the timer's commit
        conn.fail = True
        await asyncio.sleep(0.1)  # the timer's commit: the disk is full
        assert journal.broken is not None and not journal.pending
        with pytest.raises(OSError, match="database or disk is full"):
            journal.write(Judged(cell, 1, "judge", 1.0, "yes", None))
        with pytest.raises(OSError, match="database or disk is full"):
            journal.write(CellScore(cell, 1.0, "pass", {}))
        with pytest.raises(OSError, match="database or disk is full"):
            journal.commit()
        journal.close()

    asyncio.run(run())
    state = load(path)
    assert not state.turns and not state.scores, (state.turns, state.scores)
    with contextlib.closing(sqlite3.connect(path)) as c:
        assert [c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("answers", "judgements", "scores")] \
            == [0, 0, 0]
        assert c.execute("SELECT count(*) FROM lock").fetchone()[0] == 0  # the lock released all the same


@pytest.mark.parametrize("kind", ["weval", "agentv"])
def test_a_resume_on_a_full_disk_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
                                         kind: str) -> None:
    """bench/kill_trials.py's full-disk trials (a tmpfs filled by a ballast file): a `--resume` started while
    the disk was still full printed a traceback: taking the run's lock, a write to the database, raised
    SQLite's "database or disk is full" as it was. (The file-size limit above cannot make that moment:
    the database's WAL index, 32 KB, is refused before the lock's 8 KB of WAL.)"""
    from evalspec.cli import main
    from evalspec.run.journal import database

    if kind == "weval":
        bp = write(tmp_path / "small.weval.yml", "models: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n")
    else:
        bp = write(tmp_path / "small.eval.yaml", "name: small\ndescription: d\ntests:\n  - id: a\n    input: hi\n"
                                                 "    criteria: c\n    assert: [{type: contains, value: hi}]\n")
    cmd = ["run", str(bp), "-m", "echo", "--output", str(tmp_path / "out"), "--no-report", "--resume"]
    assert main(cmd) == 0
    capsys.readouterr()
    real = database.acquire

    def full(conn: sqlite3.Connection, path: Path, label: str) -> int | None:
        raise sqlite3.OperationalError("database or disk is full")  # as its COMMIT raised it on a full disk

    monkeypatch.setattr(database, "acquire", full)
    assert main(cmd) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "evalspec run: cannot write" in err and "database or disk is full" in err, err
    monkeypatch.setattr(database, "acquire", real)  # the disk freed
    assert main(cmd) == 0


@pytest.mark.parametrize("free", [4096, 2**30])
def test_a_disk_i_o_error_on_a_full_disk_says_the_disk_is_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: Any, free: int) -> None:
    """bench/kill_trials.py's full-disk trials (a tmpfs filled by a ballast file): where SQLite could not grow
    the database's WAL index it says "disk I/O error", which on its own reads as a failing disk."""
    import shutil

    from evalspec.cli import main
    from evalspec.run.journal import database

    bp = write(tmp_path / "small.weval.yml", "models: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n")

    def failing(conn: sqlite3.Connection, path: Path, label: str) -> int | None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(database, "acquire", failing)
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda p: real(p)._replace(free=free))
    assert main(["run", str(bp), "-m", "echo", "--output", str(tmp_path / "out"), "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "cannot write the run database" in err and "disk I/O error" in err and "Traceback" not in err
    assert ("(the disk is full: 4,096 bytes free)" in err) == (free == 4096), err
