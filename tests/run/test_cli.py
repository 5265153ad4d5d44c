"""`evalspec run`: options, --dry-run, --json events, the table, exit codes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from evalspec.cli import main

from .conftest import SmartFake, env_for, write

BP = """title: CLI
models: [openai:candidate]
evaluationConfig:
  llm-coverage:
    judges:
      - {model: "openai:judge-a", approach: holistic}
---
- id: p1
  prompt: Hello there
  should:
    - $contains: Hello
    - is friendly
- id: p2
  prompt: Something else
  should:
    - $contains: Hello
"""


@pytest.fixture
def cli_env(smart: SmartFake, monkeypatch: pytest.MonkeyPatch) -> SmartFake:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    return smart


def test_dry_run_prints_the_plan_and_calls_nothing(tmp_path: Path, cli_env: SmartFake, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP)
    assert main(["run", str(bp), "--dry-run", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "2 prompt(s) × 1 effective model(s) = 2 cell(s)" in out
    assert "openai:candidate[temp:0]" in out
    assert "judges (blueprint): holistic(openai:judge-a)" in out
    assert "input tokens" in out
    assert cli_env.count == 0
    assert not (tmp_path / "out").exists()


def test_dry_run_json_names_missing_keys(tmp_path: Path, cli_env: SmartFake, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    bp = write(tmp_path / "c.weval.yml", BP)
    assert main(["run", str(bp), "--dry-run", "--json"]) == 2  # the run would be refused
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["cells"] == 2 and plan["per_model"]["openai:candidate[temp:0]"]["calls"] == 2
    assert plan["per_model"]["openai:candidate[temp:0]"]["judge_calls"] == 1
    assert any("OPENAI_API_KEY is not set" in p for p in plan["problems"])


def test_json_events(tmp_path: Path, cli_env: SmartFake, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP)
    started = time.monotonic()
    assert main(["run", str(bp), "--json", "-o", str(tmp_path / "out")]) == 0
    took = time.monotonic() - started
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert types.count("scored") == 2 and types.count("response") == 2
    assert {"call_started"} <= set(types)
    scored = {e["cell"]["item"]: e for e in events if e["type"] == "scored"}
    assert scored["p2"]["score"] == 0 and scored["p2"]["verdict"] == "fail"
    assert scored["p1"]["details"]["pointAssessments"][0]["keyPointText"] == 'Function: contains("Hello")'
    summary = events[-1]["summary"]
    assert summary["models"][0]["model"] == "openai:candidate[temp:0]" and summary["files"]
    # The run's own wall time, from its database: one session, as long as the run took at most.
    assert summary["session_wall_times_s"] == [summary["wall_time_s"]] and 0 < summary["wall_time_s"] < took

    # A resumed run's: this session's, and the sessions' sum.
    assert main(["run", str(bp), "--json", "-o", str(tmp_path / "out"), "--resume"]) == 0
    resumed = json.loads(capsys.readouterr().out.splitlines()[-1])["summary"]
    first, again = resumed["session_wall_times_s"]
    assert first == summary["wall_time_s"] and abs(resumed["wall_time_s"] - (first + again)) <= 0.002  # (rounding)


def test_table_and_fail_under(tmp_path: Path, cli_env: SmartFake, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP)
    assert main(["run", str(bp), "-o", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert "openai:candidate[temp:0]" in captured.out and "mean" in captured.out
    assert "results:" in captured.out
    assert "progress: 2/2" in captured.err  # plain lines when stderr is not a terminal
    # 'is friendly' cannot be scored here (the fake judge gives no verdict): no bar can pass, however low.
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--fail-under", "0.1"]) == 1
    assert "1 point(s) not scored" in capsys.readouterr().err
    # Every point scored: the mean decides.
    scored = write(tmp_path / "s.weval.yml", BP.replace("    - is friendly\n", ""))
    assert main(["run", str(scored), "-o", str(tmp_path / "out"), "--fail-under", "0.9"]) == 1
    assert "below --fail-under" in capsys.readouterr().err
    assert main(["run", str(scored), "-o", str(tmp_path / "out"), "--fail-under", "0.1"]) == 0


def test_invalid_file_exits_2_with_located_errors(tmp_path: Path, capsys) -> None:
    bad = write(tmp_path / "bad.weval.yml", "models: [openai:x]\n---\n- id: p\n  prompt: Hi\n  should:\n    - $contian: a\n")
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.weval.yml:6:7: error[" in err and "$contains" in err


def test_usage_errors_exit_2(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP)
    assert main(["run", str(bp), "--eval-method", "bogus"]) == 2
    assert "unknown --eval-method bogus" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.yml")]) == 2
    assert main(["run", str(bp), "--concurrency", "0"]) == 2
    assert main(["run", str(bp), "--prompt", "nothing-*"]) == 2
    assert "no prompt to run" in capsys.readouterr().err
    assert main(["run"]) == 2  # argparse: FILE is required


def test_files_that_are_not_suites_exit_2_saying_what_they_are(tmp_path: Path, capsys) -> None:
    targets = write(tmp_path / ".agentv" / "targets.yaml", "targets:\n  - name: default\n    provider: mock\n")
    assert main(["run", str(targets)]) == 2
    assert "is an AgentV targets file" in capsys.readouterr().err
    other = write(tmp_path / "compose.yml", "services:\n  web:\n    image: nginx\n")
    assert main(["run", str(other)]) == 2
    assert "is not a Weval blueprint or an AgentV eval file" in capsys.readouterr().err


def test_prompt_selection_and_model_override(tmp_path: Path, cli_env: SmartFake, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP)
    assert main(["run", str(bp), "--prompt", "p2", "-m", "openai:other", "-m", "echo", "--json",
                 "--eval-method", "none", "-o", str(tmp_path / "out")]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    cells = {(e["cell"]["item"], e["cell"]["model"]) for e in events if e["type"] == "scored"}
    assert cells == {("p2", "openai:other[temp:0]"), ("p2", "echo[temp:0]")}
    # --eval-method none still runs function points: neither answer contains "Hello".
    assert all(e["score"] == 0 for e in events if e["type"] == "scored")
    assert [r["model"] for r in cli_env.chat_requests()] == ["other"]


def test_a_run_where_every_call_failed_exits_3_naming_the_cause(tmp_path: Path, cli_env: SmartFake,
                                                                capsys, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    bp = write(tmp_path / "c.weval.yml", BP)
    assert main(["run", str(bp), "-m", "anthropic:claude-x", "-o", str(tmp_path / "out")]) == 2  # refused first
    assert "nothing was run (no call made)" in capsys.readouterr().err
    assert main(["run", str(bp), "-m", "anthropic:claude-x", "-o", str(tmp_path / "out"), "--keep-going"]) == 3
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("evalspec run: every call failed (2 of 2 cells), nothing was scored: ")
    assert "ANTHROPIC_API_KEY is not set" in last
    # One model failing among several is an ordinary run: the table shows its errors.
    assert main(["run", str(bp), "-m", "anthropic:claude-x", "-m", "openai:candidate",
                 "-o", str(tmp_path / "out"), "--keep-going"]) == 0
    assert "every call failed" not in capsys.readouterr().err


def test_an_agentv_run_where_every_call_failed_exits_3(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    suite = write(tmp_path / "s.eval.yaml", """name: s
tests:
  - id: t1
    input: Hello
    criteria: says hello
    assert:
      - type: contains
        value: Hello
""")
    assert main(["run", str(suite), "-m", "openai:gpt-4o-mini", "-o", str(tmp_path / "out"), "--keep-going"]) == 3
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "every call failed (1 of 1 cells)" in last and "OPENAI_API_KEY" in last
