"""bench/kill_trials.py, small: a handful of seeded kill-and-resume trials of a judged three-model Weval
blueprint and a judged two-target AgentV suite (a kill while calling, while judging, once every cell is
scored, twice in a row, two `--resume`s at once, two fresh runs at once, SIGTERM or SIGINT, a full disk
made by the file-size limit, while report.html is written, a `--resume` killed as it exports a run again,
`evalspec merge` of two shards killed), each resumed to the end; and two through the provider batch APIs.
Each trial asserts what the bench does: no committed call asked again, every other call asked once (bar
those in flight at a kill), the exports byte for byte an uninterrupted run's, one run's exports one set of
files (a later export repeats an earlier one's name and bytes), sensible exit codes and messages, no
traceback. The bench runs hundreds (docs/run-database.md, "Kill-and-resume trials")."""

from __future__ import annotations

import importlib.util
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "kill_trials.py"

TRIALS = [("weval", "calling"), ("agentv", "judging"), ("weval", "twice"), ("agentv", "concurrent"),
          ("weval", "exporting"), ("agentv", "two_fresh"), ("weval", "full_disk"), ("agentv", "sigterm"),
          ("weval", "reexport"), ("agentv", "reporting"), ("weval", "merging")]


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("kill_trials", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kill_trials"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(240)
def test_seeded_kill_and_resume_trials(tmp_path: Path) -> None:
    bench = _bench()
    harness = bench.Harness(tmp_path, sys.executable)
    harness.disk = "fsize"  # no mount in the tests: the file-size limit, as test_full_disk.py makes a full disk
    harness.baseline_runs = 1  # (the bench runs each twice, to check that its masks hide all that differs)
    rng = random.Random(27)
    try:
        results = [harness.trial(n, bench.for_scenario(bench.Config(kind), scenario), scenario,
                                 random.Random(rng.random())) for n, (kind, scenario) in enumerate(TRIALS)]
    finally:
        harness.close()
    failed = [f"{t.config.name}/{t.scenario} ({'; '.join(t.notes)}): {f}" for t in results for f in t.failures]
    assert not failed, "\n".join(failed)
    assert all(t.processes >= 2 for t in results)  # each was interrupted (or refused) and resumed
    assert all(t.seen for t in results)  # each compared what a process left exported with the end's


@pytest.mark.timeout(180)
def test_seeded_kill_and_resume_trials_in_batches(tmp_path: Path) -> None:
    """The same through the provider batch APIs (tests/fakebatch.py): killed while polling, and two
    `--resume`s at once; nothing is submitted twice."""
    bench = _bench()
    harness = bench.BatchHarness(tmp_path, sys.executable)
    rng = random.Random(27)
    try:
        results = [harness.trial(n, bench.Config("batch"), scenario, random.Random(rng.random()))
                   for n, scenario in enumerate(["polling", "concurrent"])]
    finally:
        harness.close()
    failed = [f"{t.scenario} ({'; '.join(t.notes)}): {f}" for t in results for f in t.failures]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("kind", ["weval", "agentv"])
def test_ctrl_c_as_a_finished_run_prints_its_last_lines_says_interrupted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """bench/kill_trials.py (--batch, seed 23, a SIGINT trial): Ctrl-C after the run had written its results,
    while it printed its summary (asyncio.run's handler gone), exited 130 without a word: no "results:"
    line, no "interrupted". The results are complete; the exit says it was interrupted."""
    from evalspec.cli import main
    from evalspec.run import render

    if kind == "weval":
        path = tmp_path / "b.weval.yml"
        path.write_text("models: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n", encoding="utf-8")
    else:
        path = tmp_path / "s.eval.yaml"
        path.write_text("name: s\ndescription: d\ntests:\n  - id: a\n    input: hi\n    criteria: c\n"
                        "    assert: [{type: contains, value: hi}]\n", encoding="utf-8")

    def ctrl_c(self: object, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(render.HumanRenderer, "close", ctrl_c)
    assert main(["run", str(path), "-m", "echo", "-o", str(tmp_path / "out"), "--no-report"]) == 130
    err = capsys.readouterr().err
    assert "evalspec: interrupted" in err and "Traceback" not in err, err
    assert list((tmp_path / "out").rglob("*_comparison.json" if kind == "weval" else "*.jsonl"))  # written


class _BusyOnce:
    """A connection whose first `journal_mode = WAL` is answered SQLITE_BUSY, as SQLite answers one of two
    processes making the same new database at once (without its busy timeout: each holds a read lock)."""

    def __init__(self, conn: Any) -> None:
        self.conn, self.busy = conn, True

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "PRAGMA journal_mode = WAL" and self.busy:
            self.busy = False
            raise sqlite3.OperationalError("database is locked")
        return self.conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_two_runs_making_one_database_at_once_refuse_by_the_lock(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/kill_trials.py (two_fresh, seed 30; 4 of 100 races of two processes in a loop): of two fresh
    runs started at once, one failed "cannot write the run database …: database is locked" at the switch
    to WAL instead of being refused by the other's lock ("already running (PID …")."""
    from evalspec.run.journal import database

    real = sqlite3.connect
    monkeypatch.setattr(database.sqlite3, "connect", lambda *a, **k: _BusyOnce(real(*a, **k)))
    path = tmp_path / "lab.run.db"
    conn = database.connect(path, create=True)  # raised OSError "database is locked" before
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
