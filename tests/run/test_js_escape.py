"""A `$js` point cannot outlive its time limit: the attack run's reproducers, through the real CLI.

Before the sandbox moved to its own process, converting a thrown value to text ran outside QuickJS's
time limit while holding the GIL: each script below made `evalspec run` spin forever, deaf to SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import comparison, write

# (script, the reason its point is not scored): a thrown value is shown as String(value) would show it.
ESCAPES = [
    # (Node 20's vm context, the reference's, has no InternalError: the $js sandbox has none either)
    ("InternalError.prototype.toString = function(){ for(;;){} }; for(;;){}", "InternalError is not defined"),
    ("throw {toString(){ for(;;){} }}", "timed out"),
    ("throw {get stack(){ for(;;){} }}", "failed: [object Object]"),
    ("throw {get message(){ for(;;){} }}", "failed: [object Object]"),
    ("throw new Proxy({}, {get(){ for(;;){} }})", "timed out"),
    ("var e = new Error('x'); Object.defineProperty(e, 'stack', {get(){ for(;;){} }}); throw e", "failed: Error: x"),
    # The one error that leaves QuickJS uncaught is its own "interrupted"; a script that redefines how
    # errors print makes even that conversion loop, so the worker process has to be killed.
    ("Error.prototype.toString = function(){ for(;;){} }; for(;;){}", "timed out"),
    ("Object.defineProperty(Error.prototype, 'stack', {get(){ for(;;){} }}); for(;;){}", "timed out"),
]


def _blueprint(tmp_path: Path, scripts: list[str]) -> Path:
    lines = ["models: [echo:x]", "---"]
    for i, script in enumerate(scripts):
        lines += [f"- id: p{i}", f"  prompt: question {i}", "  should:",
                  f"    - $js: {json.dumps(script)}", f"    - $contains: question {i}"]
    return write(tmp_path / "escape.weval.yml", "\n".join(lines) + "\n")


def _env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.pathsep.join(sys.path)}


def _workers_of(pid: int) -> list[int]:
    """Live js_worker processes started by `pid` (it passes its PID on the worker's command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"evalspec.scoring.js_worker" in argv and str(pid).encode() in argv and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.timeout(90)
def test_thrown_values_that_loop_are_timeouts_and_the_run_finishes(tmp_path: Path) -> None:
    bp = _blueprint(tmp_path, [script for script, _ in ESCAPES])
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "--output", str(out)],
                          env=_env(), capture_output=True, text=True, timeout=80)
    assert proc.returncode == 0, proc.stderr
    scores = comparison(out)["evaluationResults"]["llmCoverageScores"]
    for i, (script, reason) in enumerate(ESCAPES):
        js_point, contains_point = scores[f"p{i}"]["echo:x[temp:0]"]["pointAssessments"]
        assert js_point["coverageExtent"] is None  # not scored, and says why
        assert reason in js_point["error"], (script, js_point["error"])
        assert contains_point["coverageExtent"] == 1.0  # the rest of the cell was scored


@pytest.mark.timeout(60)
def test_sigterm_ends_a_run_stuck_in_a_script(tmp_path: Path) -> None:
    hijack = ESCAPES[-2][0]  # the case that needs the worker killed: each point holds it ~2 s
    bp = _blueprint(tmp_path, [hijack] * 20)
    proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "--output", str(tmp_path / "out"),
                             "--concurrency", "1"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 30
    while not _workers_of(proc.pid):  # the run has reached its first script
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    time.sleep(0.5)  # inside the conversion that loops
    worker = _workers_of(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "--resume" in err
    deadline = time.monotonic() + 5
    while any(p in _workers_of(proc.pid) for p in worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _workers_of(proc.pid), "the sandbox process outlived its run"
