"""Issue 25, the false pass: `token-usage`, `latency` and `cost` read what the target reports, as AgentV
does. A `mock` target reports nothing (each check scores 0, "no … data"); a `cli` target reports its
output's `token_usage`, `cost_usd` and `duration_ms` (the duration else the command's own time)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .conftest import options, run_events, write

SUITE = """name: metrics
description: d
execution:
  target: {target}
tests:
  - id: t
    input: hi
    criteria: c
    assert:
      - {{type: token-usage, max_total: 1000000}}
      - {{type: latency, max_ms: 600000}}
      - {{type: cost, max_usd: 100}}
"""


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def _run(tmp_path: Path, targets: str, target: str) -> dict[str, Any]:
    write(tmp_path / ".agentv" / "targets.yaml", targets)
    bp = write(tmp_path / "evals" / "m.eval.yaml", SUITE.format(target=target))
    run_events(bp, options(tmp_path, {"PATH": "/usr/bin:/bin"}))
    return _rows(tmp_path / "out")["t"]


def test_a_mock_target_reports_no_usage_duration_or_cost(tmp_path: Path) -> None:
    row = _run(tmp_path, "targets:\n  - name: canned\n    provider: mock\n    response: ok\n", "canned")
    assert [(s["score"], s["verdict"], s["misses"]) for s in row["scores"]] == [
        (0, "fail", ["No token usage data available in trace"]),
        (0, "fail", ["No duration data available in trace"]),
        (0, "fail", ["No cost data available in trace"]),
    ]
    assert (row["score"], row["verdict"], row["execution_status"]) == (0, "fail", "quality_failure")
    assert row["token_usage"] is None


def _cli(tmp_path: Path, output: dict[str, Any]) -> str:
    agent = write(tmp_path / "agent.py", f"import json, sys\nprint(json.dumps({output!r}))\n")
    return f"targets:\n  - name: agent\n    provider: cli\n    command: {sys.executable} {agent}\n"


def test_a_cli_target_reports_what_its_output_says(tmp_path: Path) -> None:
    row = _run(tmp_path, _cli(tmp_path, {"text": "ok", "token_usage": {"input": 3, "output": 4},
                                         "cost_usd": 0.5, "duration_ms": 700000}), "agent")
    assert [s["score"] for s in row["scores"]] == [1, 0, 1]
    assert row["scores"][0]["hits"] == ["Total tokens 7 <= 1000000"]
    assert row["scores"][1]["misses"] == ["Duration 700000ms > 600000ms threshold"]  # reported, not timed
    assert row["scores"][2]["hits"] == ["Cost $0.5000 <= $100.0000 budget"]


def test_a_cli_target_without_metrics_is_timed_but_has_no_usage_or_cost(tmp_path: Path) -> None:
    row = _run(tmp_path, _cli(tmp_path, {"text": "ok"}), "agent")
    assert [(s["score"], s["misses"]) for s in row["scores"]] == [
        (0, ["No token usage data available in trace"]),
        (1, []),  # AgentV: the command's wall-clock time when the output reports none
        (0, ["No cost data available in trace"]),
    ]


def test_a_borderline_test_is_a_quality_failure(tmp_path: Path) -> None:
    """AgentV's execution_status: ok only at a score of 0.8 or more; 0.75 is borderline and a quality_failure."""
    write(tmp_path / ".agentv" / "targets.yaml", "targets:\n  - name: canned\n    provider: mock\n    response: ok\n")
    bp = write(tmp_path / "evals" / "b.eval.yaml", """description: d
execution:
  target: canned
tests:
  - id: t
    input: hi
    assert:
      - {type: contains, value: ok, weight: 3}
      - {type: contains, value: nope}
""")
    run_events(bp, options(tmp_path, {"PATH": "/usr/bin:/bin"}))
    row = _rows(tmp_path / "out")["t"]
    assert (row["score"], row["verdict"], row["execution_status"]) == (0.75, "borderline", "quality_failure")
    assert [s["name"] for s in row["scores"]] == ["contains-ok", "contains-nope"]  # AgentV's auto-names


def test_a_replayed_mock_run_still_reports_no_usage(tmp_path: Path) -> None:
    """Replaying the results of a target that reported no usage: token-usage fails again, "no data" (the
    replay used to read the row's null token_usage as 0 tokens, a pass)."""
    _run(tmp_path, "targets:\n  - name: canned\n    provider: mock\n    response: ok\n", "canned")
    [source] = [p for p in (tmp_path / "out").glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl")]
    bp = tmp_path / "evals" / "m.eval.yaml"
    run_events(bp, options(tmp_path, {"PATH": "/usr/bin:/bin"}, models=[f"replay:{source}"], output=tmp_path / "again"))
    files = sorted(p for p in (tmp_path / "again").glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    row = json.loads(files[-1].read_text().splitlines()[0])
    assert row["scores"][0]["misses"] == ["No token usage data available in trace"] and row["scores"][0]["score"] == 0
