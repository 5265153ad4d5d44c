"""The run's wall time as a person reads it (issue 30: "Duration" was the calls' times added up, 35.6 s for
a 9.5 s run): `evalspec run` in a real terminal (tmux) ends with "wall time X s", the report opened in
Chromium says the same, and both are the run database's sessions, never the calls' sum. A run interrupted
then resumed counts the time each process ran, not the pause between them."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ..fakeprovider import FakeProvider
from ..run.conftest import env_for, write
from ..run.test_run_display import Tmux, _command

pytestmark = pytest.mark.timeout(120)

WALL = re.compile(r"wall time (\d+\.\d) s")


def _blueprint(folder: Path, n: int) -> Path:
    lines = ["title: wall", "models: [openai:gpt-4o-mini]", "---"]
    for i in range(n):
        lines += [f"- id: p{i:02d}", f"  prompt: question {i}", "  should:", "    - $contains: Paris"]
    return write(folder / "w.weval.yml", "\n".join(lines) + "\n")


def _sessions(out: Path) -> list[tuple[float, float]]:
    database = next((out / "live" / "blueprints").glob("*/*.run.db"))
    with contextlib.closing(sqlite3.connect(database)) as conn:
        return [(float(a), float(b)) for a, b in conn.execute("SELECT started, ended FROM sessions ORDER BY n")]


def _call_ms(out: Path) -> float:
    database = next((out / "live" / "blueprints").glob("*/*.run.db"))
    with contextlib.closing(sqlite3.connect(database)) as conn:
        return float(conn.execute("SELECT sum(ms) FROM answers").fetchone()[0])


def _report_meta(browser: Any, out: Path) -> str:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.goto(next((out / "live" / "blueprints").glob("*/report.html")).resolve().as_uri())
        page.wait_for_selector("html[data-ready]", timeout=20000)
        return str(page.locator("header .meta").inner_text())
    finally:
        page.close()


def test_a_runs_wall_time_is_its_own_not_its_calls_added_up(tmp_path: Path, browser: Any) -> None:
    bp = _blueprint(tmp_path, 6)
    out = tmp_path / "out"
    term = Tmux(f"evalspec-wall-{os.getpid()}")
    try:
        with FakeProvider() as fake:
            fake.latency = 0.6  # each answer; three at a time: ~1.2 s of run, 3.6 s of calls
            env = {**env_for(fake), "PYTHONPATH": os.pathsep.join(sys.path), "TERM": "xterm-256color"}
            term.type(_command(env, f"{bp} -o {out} -j 3"))
            screen = term.wait_for("report: ")
    finally:
        term.close()
    shown = WALL.search(screen)
    assert shown, screen
    (start, end), = _sessions(out)
    assert shown.group(0) == f"wall time {end - start:.1f} s"
    calls = _call_ms(out) / 1000
    assert calls >= 3.5 and float(shown.group(1)) < calls * 0.75  # the run's time, not its calls' sum
    meta = _report_meta(browser, out)
    assert shown.group(0) in meta and "sessions" not in meta, meta


def test_a_resumed_runs_wall_time_adds_its_sessions_not_the_pause(tmp_path: Path, browser: Any) -> None:
    bp = _blueprint(tmp_path, 8)
    out = tmp_path / "out"
    with FakeProvider() as fake:
        fake.latency = 0.3
        env = {**env_for(fake), "PYTHONPATH": os.pathsep.join(sys.path)}
        # SIGINT as a terminal delivers it: a shell starts background jobs with SIGINT ignored (CI may run
        # the suite that way) and the child would inherit that.
        first = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(out), "-j", "1"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(1.5)  # about three answers in
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=30)
        assert first.returncode == 130, err
        interrupted = re.search(r"interrupted \(wall time (\d+\.\d) s\)", err)
        assert interrupted, err
        time.sleep(2.0)  # the pause: not the run's time
        term = Tmux(f"evalspec-wall2-{os.getpid()}")
        try:
            term.type(_command({**env, "TERM": "xterm-256color"}, f"{bp} -o {out} -j 1 --resume"))
            screen = term.wait_for("report: ")
        finally:
            term.close()
    (s1, e1), (s2, e2) = _sessions(out)
    assert interrupted.group(1) == f"{e1 - s1:.1f}"
    line = re.search(r"wall time (\d+\.\d) s \(this session; (\d+\.\d) s over 2 sessions\)", screen)
    assert line, screen
    assert line.group(1) == f"{e2 - s2:.1f}" and line.group(2) == f"{(e1 - s1) + (e2 - s2):.1f}"
    assert float(line.group(2)) < e2 - s1 - 1.5  # the pause between the sessions is left out
    meta = _report_meta(browser, out)
    assert f"wall time {line.group(2)} s (2 sessions: {e1 - s1:.1f} s + {e2 - s2:.1f} s)" in meta, meta
    # The Markdown report (a CI step's summary) says the same.
    from evalspec.report import load_results
    from evalspec.report.markdown import render_markdown

    results = next((out / "live" / "blueprints").glob("*/*_comparison.json"))
    assert f"· wall time {line.group(2)} s (2 sessions: " in render_markdown([load_results(results)], html=False)
