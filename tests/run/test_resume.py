"""An interrupted run keeps every result it received, and --resume makes no call twice.

The run is a real `evalspec run` subprocess killed with SIGKILL mid-way; the fake provider counts the
requests of the resumed run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fakeprovider import Reply
from run_records import kill_once, run_records

from evalspec.cli import main

from .conftest import SmartFake, comparison, env_for, write

N = 40


def _blueprint(tmp_path: Path) -> Path:
    lines = ["models: [openai:candidate]", "---"]
    for i in range(N):
        lines += [f"- id: p{i:02d}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}"]
    return write(tmp_path / "r.weval.yml", "\n".join(lines) + "\n")


def _journal(out: Path) -> list[dict]:
    return run_records(out / "live" / "blueprints")


def test_sigkill_then_resume_repeats_no_finished_call(tmp_path: Path, smart: SmartFake, monkeypatch) -> None:
    bp = _blueprint(tmp_path)
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path)}
    smart.then(*[Reply.ok(delay=0.03) for _ in range(N)])
    proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "--output", str(out),
                             "--concurrency", "2", "--json"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    kill_once(proc, lambda: sum(1 for r in _journal(out) if r.get("t") == "score") >= 8)

    records = _journal(out)
    answered = {r["c"][0] for r in records if r.get("t") == "gen"}
    scored = {r["c"][0] for r in records if r.get("t") == "score"}
    assert scored and scored <= answered and len(answered) < N
    assert not list(out.glob("live/blueprints/*/*_comparison.json"))  # killed before the end

    # A request the killed run had sent is read by the fake server after the kill: counted before the
    # reset, not as the resumed run's (33 calls where 32 were asked for, once, in a full run under load).
    assert smart.idle()
    smart.reset()
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    assert main(["run", str(bp), "--output", str(out), "--resume", "--json"]) == 0
    asked = {r["messages"][-1]["content"].split()[-1] for r in smart.chat_requests()}
    asked_ids = {f"p{int(i):02d}" for i in asked}
    assert asked_ids.isdisjoint(answered)  # no finished call is made again
    assert len(smart.chat_requests()) == N - len(answered)
    data = comparison(out)
    coverage = data["evaluationResults"]["llmCoverageScores"]
    assert len(coverage) == N
    assert all(row["openai:candidate[temp:0]"]["avgCoverageExtent"] == 1 for row in coverage.values())


def test_resume_of_a_finished_run_calls_nothing(tmp_path: Path, smart: SmartFake, monkeypatch, capsys) -> None:
    bp = write(tmp_path / "f.weval.yml", "models: [openai:candidate]\n---\n- id: p\n  prompt: Hi\n  should: [$contains: Hi]\n")
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    out = tmp_path / "out"
    assert main(["run", str(bp), "--output", str(out)]) == 0
    assert smart.count == 1
    smart.reset()
    assert main(["run", str(bp), "--output", str(out), "--resume", "--json"]) == 0
    assert smart.count == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    scored = [e for e in events if e["type"] == "scored"]
    assert scored[-1]["resumed"] is True and scored[-1]["score"] == 1


def test_retry_errors_retries_only_the_failed_cells(tmp_path: Path, smart: SmartFake, monkeypatch) -> None:
    bp = write(tmp_path / "e.weval.yml", """models: [openai:candidate]
---
- id: a
  prompt: Hi
  should: [$contains: Hi]
- id: b
  prompt: Hello
  should: [$contains: Hello]
""")
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    out = tmp_path / "out"
    smart.then(Reply.error(400, "bad request"))
    assert main(["run", str(bp), "--output", str(out), "--concurrency", "1", "--retries", "0"]) == 0
    assert len(comparison(out).get("errors", {})) == 1
    smart.reset()
    assert main(["run", str(bp), "--output", str(out), "--resume"]) == 0
    assert smart.count == 0  # --resume keeps recorded failures
    assert main(["run", str(bp), "--output", str(out), "--retry-errors"]) == 0
    assert smart.count == 1
    assert "errors" not in comparison(out)


def test_sigterm_exits_130_and_says_how_to_resume(tmp_path: Path, smart: SmartFake) -> None:
    bp = _blueprint(tmp_path)
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path)}
    smart.then(*[Reply.ok(delay=0.05) for _ in range(N)])
    proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "--output", str(out),
                             "--concurrency", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while sum(1 for r in _journal(out) if r.get("t") == "score") < 3:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "--resume" in err and ".run.db" in err
    assert sum(1 for r in _journal(out) if r.get("t") == "score") >= 3
