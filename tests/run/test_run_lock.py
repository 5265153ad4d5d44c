"""One run per run label at a time, with real concurrent processes: a second run (fresh or --resume) is
refused naming the holder's PID, and repeats no call nor empties the run database; a lock left by a run killed
with SIGKILL is cleared by the next run, which says so.

The attack run's case: four --resume runs after a kill made 7,236 calls where 1,794 were needed, and
concurrent fresh runs lost journals to `.prev` renames.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakeprovider import Reply
from run_records import databases, run_records

from .conftest import SmartFake, comparison, env_for, write

N = 30


def _start(bp: Path, out: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "--output", str(out),
                             "--concurrency", "1", "--retries", "0", *extra], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _scores(out: Path) -> int:
    return sum(1 for r in run_records(out) if r["t"] == "score")


def _lock_pid(db: Path) -> int | None:
    """The PID the database's lock row names (the database is the lock), None when there is none."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        row = conn.execute("SELECT pid FROM lock").fetchone()
    return None if row is None else int(row[0])


@pytest.mark.timeout(120)
def test_concurrent_runs_of_one_label(tmp_path: Path, smart: SmartFake) -> None:
    lines = ["models: [openai:candidate]", "---"]
    for i in range(N):
        lines += [f"- id: p{i:02d}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}"]
    bp = write(tmp_path / "lock.weval.yml", "\n".join(lines) + "\n")
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path)}
    # Three answers, then the first run's fourth call hangs (its 30 s call timeout is far off): it is still
    # running while the others start, however slowly a loaded machine starts them (with every call
    # answered in 0.15 s it could finish first, and did once under load).
    smart.then(*[Reply.ok(delay=0.15) for _ in range(3)], Reply.hang(120), *[Reply.ok() for _ in range(N * 3)])

    first = _start(bp, out, env)
    deadline = time.monotonic() + 30
    while _scores(out) < 3:
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.02)
    (db,) = databases(out)
    assert _lock_pid(db) == first.pid

    # Three resumes and a fresh run, all at once, while the first run goes on.
    others = [_start(bp, out, env, "--resume") for _ in range(3)] + [_start(bp, out, env)]
    for proc in others:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, err
        assert f"already running (PID {first.pid}" in err and "--resume" in err
    assert not list(out.glob("live/blueprints/*/*.run.prev.db"))  # nobody emptied the database
    assert first.poll() is None

    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert _lock_pid(db) == first.pid  # what a killed run leaves

    last = _start(bp, out, env, "--resume")
    stdout, err = last.communicate(timeout=60)
    assert last.returncode == 0, err
    assert f"cleared the lock of an earlier run (PID {first.pid})" in stdout + err
    assert len(comparison(out)["promptIds"]) == N
    # Every prompt was asked once, bar the one in flight when the first run was killed.
    assert N <= smart.count <= N + 1, smart.count
    assert _lock_pid(db) is None  # released when the run ended


@pytest.mark.parametrize("kind", ["weval", "agentv"])
def test_an_output_folder_that_cannot_be_written_is_a_clear_error(tmp_path: Path, capsys, kind: str) -> None:
    """The attack run's second round: a file where the output folder should be (a read-only folder or a
    full disk alike) stopped the run with a traceback."""
    from evalspec.cli import main

    if kind == "weval":
        bp = write(tmp_path / "b.yml", "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n")
    else:
        bp = write(tmp_path / "s.eval.yaml", "name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n"
                                             "    input: hi\n    assert: [{type: contains, value: hi}]\n")
    write(tmp_path / "taken", "a file, not a folder\n")
    assert main(["run", str(bp), "-m", "echo", "-o", str(tmp_path / "taken" / "out"), "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "evalspec run: cannot write" in err and "Not a directory" in err and "Traceback" not in err
