"""tool-trajectory against real traces: OpenAI and Anthropic tool calls from the fake provider, a `cli`
mock agent (JSON and JSONL output, a JSONL batch), replayed results and journals."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from fakeprovider import Reply

from evalspec.cli import main

from .conftest import KEY, SmartFake, env_for, of_type, options, run_events, write

AGENTS = Path(__file__).parent / "agents"
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "agentv-examples" / "examples" / "features"


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    assert files
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def _cli_targets(agent: str, *args: str) -> str:
    return f"""targets:
  - name: mock_agent
    provider: cli
    command: {sys.executable} {AGENTS / agent} {' '.join(args)}
    timeout_seconds: 30
"""


def test_the_tool_trajectory_simple_example_matches_agentvs_results(tmp_path: Path) -> None:
    """The corpus example, its mock agent ported to Python: every recorded score, hit and miss."""
    example = CORPUS / "tool-trajectory-simple" / "evals"
    suite = tmp_path / "evals" / "dataset.eval.yaml"
    suite.parent.mkdir(parents=True)
    shutil.copy(example / "dataset.eval.yaml", suite)
    write(tmp_path / ".agentv" / "targets.yaml",
          _cli_targets("mock_agent.py", "--prompt {PROMPT} --output {OUTPUT_FILE}"))
    run_events(suite, options(tmp_path, {"PATH": "/usr/bin:/bin"}))
    rows = _rows(tmp_path / "out")
    recorded = [json.loads(line) for line in (example / "dataset.eval.baseline.jsonl").read_text().splitlines()]
    assert len(recorded) == 7
    for ref in recorded:
        row = rows[ref["test_id"]]
        assert row["score"] == pytest.approx(ref["score"]), ref["test_id"]
        for got, want in zip(row["scores"], ref["scores"], strict=True):
            # v2.19 writes `required >=N` where the recorded (older) run wrote `≥`
            assert (got["score"], got["hits"], got["misses"]) == (
                pytest.approx(want["score"]), [h.replace("≥", ">=") for h in want["hits"]],
                [m.replace("≥", ">=") for m in want["misses"]]), ref["test_id"]
    # The v2.19 modes the recorded run predates, computed by hand from the mock agent's traces:
    assert rows["superset-mode"]["score"] == 1.0  # knowledgeSearch ×2, documentRetrieve: both found
    assert rows["subset-mode"]["scores"][0]["hits"] == ["No actual tool calls (trivially a subset)"]
    assert rows["mixed-args-match"]["score"] == 1.0  # args_match: ignore
    # fetchData's args hold no `source` (its only listed field): a mismatch that consumes the call;
    # saveResults is found after it: 1 of 2.
    field_list = rows["field-list-match"]["scores"][0]
    assert field_list["score"] == 0.5 and field_list["misses"] == [
        "Expected fetchData at position 0: tool found at 0 but args mismatch"]
    # The trace is kept in the row, as AgentV's `output` messages.
    assert rows["exact-auth-flow"]["output"][0]["tool_calls"][1] == {
        "tool": "generateToken", "input": {"userId": "user@example.com", "ttl": 3600}}


TRAJECTORY_SUITE = """name: traces
description: d
execution:
  target: {target}
tests:
  - id: weather
    input: What's the weather in Paris?
    criteria: c
    assert:
      - name: order
        type: tool-trajectory
        mode: in_order
        required: true
        expected:
          - {{tool: search, args: {{query: weather Paris, limit: 3}}}}
          - {{tool: get_weather, args: any}}
      - name: exact-args-by-default
        type: tool-trajectory
        mode: in_order
        expected: [{{tool: search, args: {{query: weather Paris}}}}, {{tool: get_weather}}]
      - name: exact-superset-args
        type: tool_trajectory
        mode: exact
        args_match: superset
        expected:
          - {{tool: search, args: {{query: weather Paris}}}}
          - {{tool: get_weather, args: {{location: Paris}}}}
      - name: wrong-args
        type: tool-trajectory
        mode: superset
        expected:
          - {{tool: get_weather, args: {{location: London}}}}
          - {{tool: search}}
      - name: allowed
        type: tool-trajectory
        mode: subset
        expected: [{{tool: search}}]
      - name: minimums
        type: tool-trajectory
        mode: any_order
        minimums: {{search: 1, get_weather: 2}}
  - id: plain
    input: Just say hello.
    criteria: c
    assert:
      - {{type: contains, value: hello}}
      - type: tool-trajectory
        mode: in_order
        required: true
        expected: [{{tool: search}}]
"""


def _tool_answers(req: dict[str, Any]) -> Reply | None:
    """A model that calls search and get_weather for a weather question, and answers others in text."""
    text = json.dumps(req.get("messages"))
    if "weather" in text:
        return Reply.ok("", tool_calls=[("search", {"query": "weather Paris", "limit": 3}),
                                        ("get_weather", {"location": "Paris"})])
    return None


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_chat_tool_calls_are_the_trace(tmp_path: Path, smart: SmartFake, provider: str) -> None:
    smart.decide = _tool_answers
    endpoint = smart.url("/v1") if provider == "openai" else smart.url("")
    write(tmp_path / ".agentv" / "targets.yaml", f"""targets:
  - name: agent
    provider: {provider}
    model: tool-model
    api_key: {KEY}
    endpoint: {endpoint}
""")
    bp = write(tmp_path / "evals" / "s.eval.yaml", TRAJECTORY_SUITE.format(target="agent"))
    run_events(bp, options(tmp_path, env_for(smart, ANTHROPIC_API_KEY=KEY)))
    rows = _rows(tmp_path / "out")
    scores = {s["name"]: s for s in rows["weather"]["scores"]}
    assert scores["order"]["score"] == 1.0
    assert scores["order"]["hits"] == ["Found search at position 0", "Found get_weather at position 1"]
    # args_match defaults to exact: the extra `limit` is a mismatch, and that search call is consumed.
    assert scores["exact-args-by-default"]["score"] == 0.5
    assert scores["exact-args-by-default"]["misses"] == [
        "Expected search at position 0: tool found at 0 but args mismatch"]
    assert scores["exact-superset-args"]["score"] == 1.0  # `limit` is an extra key: superset allows it
    # get_weather(London) is not in the trace; search is: 1 of 2.
    assert scores["wrong-args"]["score"] == 0.5
    assert scores["wrong-args"]["misses"] == ["Expected get_weather not found in actual trajectory"]
    assert scores["allowed"]["score"] == 0.5  # get_weather is not in the allowed set
    assert scores["allowed"]["misses"] == ["Position 1: get_weather is not in allowed set"]
    assert scores["minimums"]["score"] == 0.5
    assert scores["minimums"]["misses"] == ["get_weather: called 1 times (required >=2)"]
    assert rows["weather"]["score"] == pytest.approx((1 + 0.5 + 1 + 0.5 + 0.5 + 0.5) / 6)
    first_call = rows["weather"]["output"][0]["tool_calls"][0]
    assert first_call == {"tool": "search", "input": {"query": "weather Paris", "limit": 3},
                          "id": "call_0" if provider == "openai" else "toolu_0"}
    # A chat answer without tool calls is an empty trace: the required trajectory fails the test.
    plain = rows["plain"]
    assert (plain["score"], plain["verdict"]) == (0.0, "fail")
    assert plain["scores"][1]["misses"] == ["Expected search at position 0, not found in remaining trace"]
    assert "output" not in plain


def test_replay_and_resume_keep_the_trace(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _tool_answers
    write(tmp_path / ".agentv" / "targets.yaml", f"""targets:
  - name: agent
    provider: openai
    model: tool-model
    api_key: {KEY}
    endpoint: {smart.url("/v1")}
""")
    bp = write(tmp_path / "evals" / "s.eval.yaml", TRAJECTORY_SUITE.format(target="agent"))
    run_events(bp, options(tmp_path, env_for(smart)))
    first = _rows(tmp_path / "out")
    [results] = [p for p in (tmp_path / "out").glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl")]
    [journal] = (tmp_path / "out").glob("agentv/*/*.journal.jsonl")
    calls = len(smart.requests)
    for source in (results, journal):
        out = tmp_path / f"replay-{source.suffix}-{len(source.name)}"
        events = run_events(bp, options(tmp_path, env_for(smart), models=[f"replay:{source}"], output=out))
        assert len(smart.requests) == calls  # nothing called
        again = _rows(out)
        for test_id in ("weather", "plain"):
            assert [s["score"] for s in again[test_id]["scores"]] == [s["score"] for s in first[test_id]["scores"]]
        assert of_type(events, "scored")


def test_cli_jsonl_events_and_durations(tmp_path: Path) -> None:
    write(tmp_path / ".agentv" / "targets.yaml",
          _cli_targets("mock_agent.py", "--jsonl --duration 120 --prompt {PROMPT} --output {OUTPUT_FILE}"))
    bp = write(tmp_path / "evals" / "s.eval.yaml", """name: jsonl
description: d
execution:
  target: mock_agent
tests:
  - id: auth
    input: Authenticate the user.
    criteria: c
    assert:
      - {type: contains, value: Token generated}
      - name: timed
        type: tool-trajectory
        mode: exact
        args_match: ignore
        expected:
          - {tool: checkCredentials, max_duration_ms: 200}
          - {tool: generateToken, max_duration_ms: 100}
          - {tool: auditLog}
""")
    run_events(bp, options(tmp_path, {"PATH": "/usr/bin:/bin"}))
    row = _rows(tmp_path / "out")["auth"]
    assert row["answer"] == "Authentication successful. Token generated for user."
    timed = row["scores"][1]
    # 3 positions + 2 latency checks: generateToken took 120 ms of its 100 → 4 of 5.
    assert timed["score"] == pytest.approx(0.8)
    assert "generateToken took 120ms (max: 100ms)" in timed["misses"]
    assert "checkCredentials completed in 120ms (max: 200ms)" in timed["hits"]


def test_cli_batch_output_is_matched_by_test_id(tmp_path: Path) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", _cli_targets("batch_agent.py", "{OUTPUT_FILE}"))
    bp = write(tmp_path / "evals" / "s.eval.yaml", """name: batch
description: d
execution:
  target: mock_agent
tests:
  - id: aml-002
    input: screen
    criteria: c
    expected_output: {decision: REVIEW}
    assert:
      - {type: tool-trajectory, mode: any_order, minimums: {aml_screening: 1}}
      - {type: field-accuracy, fields: [{path: decision, match: exact}]}
  - id: aml-004-not-exist
    input: screen
    criteria: c
    assert:
      - {type: tool-trajectory, mode: any_order, minimums: {aml_screening: 1}}
""")
    events = run_events(bp, options(tmp_path, {"PATH": "/usr/bin:/bin"}))
    rows = _rows(tmp_path / "out")
    assert rows["aml-002"]["answer"] == '{"decision": "REVIEW"}'
    assert [s["score"] for s in rows["aml-002"]["scores"]] == [1.0, 1.0]
    assert rows["aml-002"]["scores"][0]["hits"] == ["aml_screening: called 1 times (required >=1)"]
    missing = rows["aml-004-not-exist"]
    assert missing["execution_status"] == "execution_error"
    assert "Batch output missing id 'aml-004-not-exist'" in missing["error"]
    assert any(e.cell.item == "aml-004-not-exist" for e in of_type(events, "cell_failed"))


def test_a_required_trajectory_on_an_echo_answer_fails_with_fail_under(tmp_path: Path, monkeypatch, capsys) -> None:
    """The issue's reproducer, now that tool-trajectory runs: never skipped into a pass."""
    bp = write(tmp_path / "s.eval.yaml", """name: repro
description: d
tests:
  - id: t
    input: hello
    criteria: c
    assert:
      - {type: tool-trajectory, mode: in_order, expected: [{tool: search}], required: true}
      - {type: contains, value: hello}
""")
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(bp), "-m", "echo", "--fail-under", "0.9"]) == 1
    assert "mean score 0.000 is below --fail-under 0.9" in capsys.readouterr().err
