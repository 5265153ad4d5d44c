"""agent-judge in a run: the judge model (a fake provider on 127.0.0.1) calls list_files / read_file on
the test's workspace, step by step, then gives its verdict; confinement, max_steps and temperature hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import AGENTV_TARGETS, KEY, Reply, SmartFake, env_for, options, run_events, write


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def _suite(tmp_path: Path, asserts: str, *, workspace: bool = True) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    write(tmp_path / "evals" / "template" / "src" / "main.ts", "export const add = (a, b) => a + b;\n")
    write(tmp_path / "evals" / "secret.txt", "TOP SECRET\n")
    ws = "workspace:\n  template: ./template\n" if workspace else ""
    return write(tmp_path / "evals" / "a.eval.yaml", f"""name: agentjudge
description: d
execution:
  target: default
{ws}tests:
  - id: t
    input: write an add function
    criteria: src/main.ts exports add
    assert:
{asserts}""")


def _judge_script(replies: list[str]) -> Any:
    """The judge answers by step: the number of judge turns so far picks the reply."""
    def decide(req: dict[str, Any]) -> str | None:
        if req.get("model") != "grader-model":
            return None
        step = sum(1 for m in req["messages"] if m["role"] == "assistant")
        return replies[min(step, len(replies) - 1)]
    return decide


def _judge_requests(smart: SmartFake) -> list[dict[str, Any]]:
    return [r for r in smart.chat_requests() if r["model"] == "grader-model"]


def test_the_judge_looks_around_then_scores(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _judge_script([
        '{"tool": "list_files", "path": "src"}',
        '{"tool": "read_file", "path": "src/main.ts"}',
        json.dumps({"score": 0.75, "hits": ["add exists"], "misses": ["no tests"], "reasoning": "mostly"}),
    ])
    bp = _suite(tmp_path, "      - {name: audit, type: agent-judge, max_steps: 5, temperature: 0.3}\n")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    entry = row["scores"][0]
    assert (entry["score"], entry["hits"], entry["misses"]) == (0.75, ["add exists"], ["no tests"])
    assert entry["details"]["steps"] == 3
    assert entry["details"]["tool_calls"] == [{"tool": "list_files", "input": {"path": "src"}},
                                              {"tool": "read_file", "input": {"path": "src/main.ts"}}]
    reqs = _judge_requests(smart)
    assert len(reqs) == 3
    assert all(r["temperature"] == 0.3 for r in reqs)
    assert [t["function"]["name"] for t in reqs[0]["tools"]] == ["list_files", "read_file"]
    assert "main.ts (36 bytes)" in reqs[1]["messages"][-1]["content"]  # list_files' answer went back
    assert "export const add" in reqs[2]["messages"][-1]["content"]  # and read_file's
    assert row["score"] == 0.75


def test_a_missed_required_rubric_fails_the_assertion(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _judge_script([json.dumps({"checks": [
        {"id": "exists", "satisfied": True, "reasoning": "yes"},
        {"id": "tested", "satisfied": False, "reasoning": "no tests folder"}], "overall_reasoning": "half"})])
    bp = _suite(tmp_path, """      - name: audit
        type: agent-judge
        rubrics:
          - {id: exists, outcome: src/main.ts exists, weight: 3, required: false}
          - {id: tested, outcome: a tests/ folder exists, weight: 1, required: true}
""")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    assert (row["scores"][0]["score"], row["scores"][0]["verdict"]) == (0.75, "fail")  # the assertion fails
    assert (row["score"], row["verdict"]) == (0.75, "borderline")  # the test: its score's verdict (AgentV)


def test_nothing_outside_the_workspace_reaches_the_judge(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _judge_script([
        '{"tool": "read_file", "path": "../../secret.txt"}',
        '{"tool": "read_file", "path": "' + str(tmp_path / "evals" / "secret.txt") + '"}',
        json.dumps({"score": 1, "reasoning": "ok"}),
    ])
    bp = _suite(tmp_path, "      - {type: agent-judge}\n")
    run_events(bp, options(tmp_path, env_for(smart)))
    reqs = _judge_requests(smart)
    sent = json.dumps([r["messages"] for r in reqs])
    assert "TOP SECRET" not in sent
    assert "outside the workspace" in reqs[1]["messages"][-1]["content"]
    assert "only paths relative to the workspace" in reqs[2]["messages"][-1]["content"]
    assert not (tmp_path / "evals" / "template" / "x").exists()


def test_max_steps_bounds_the_loop(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _judge_script(['{"tool": "list_files", "path": "."}'])  # never gives a verdict
    bp = _suite(tmp_path, "      - {type: agent-judge, max_steps: 2, required: true}\n")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    reqs = _judge_requests(smart)
    assert len(reqs) == 2
    assert "tools" in reqs[0] and "tools" not in reqs[1]  # the last step is asked for the verdict
    assert "last step" in reqs[1]["messages"][-1]["content"]
    entry = row["scores"][0]
    assert entry["score"] is None and "no readable verdict within 2 step(s)" in entry["reasoning"]
    assert row["verdict"] == "not scored"


def test_without_a_workspace_it_is_not_scored(tmp_path: Path, smart: SmartFake) -> None:
    bp = _suite(tmp_path, "      - {type: agent-judge}\n", workspace=False)
    run_events(bp, options(tmp_path, env_for(smart)))
    entry = _rows(tmp_path / "out")["t"]["scores"][0]
    assert entry["score"] is None and "has none" in entry["reasoning"]
    assert not _judge_requests(smart)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_native_tool_calls(tmp_path: Path, smart: SmartFake, provider: str) -> None:
    """The judge answers with real tool calls (OpenAI `tool_calls`, Anthropic `tool_use`)."""
    def decide(req: dict[str, Any]) -> Any:
        if req.get("model") != "judge-model":
            return None
        step = sum(1 for m in req["messages"] if m["role"] == "assistant")
        if step == 0:
            return Reply.ok("", tool_calls=[("list_files", {"path": "."}), ("read_file", {"path": "src/main.ts"})])
        return Reply.ok(json.dumps({"score": 1, "hits": ["add is exported"], "misses": [], "reasoning": "seen"}))

    smart.decide = decide
    endpoint = smart.url("/v1") if provider == "openai" else smart.url("")
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS.replace("judge_target: grader", "judge_target: judge")
          + f"""  - name: judge
    provider: {provider}
    model: judge-model
    api_key: {KEY}
    endpoint: {endpoint}
""")
    write(tmp_path / "evals" / "template" / "src" / "main.ts", "export const add = (a, b) => a + b;\n")
    bp = write(tmp_path / "evals" / "a.eval.yaml", """name: native
description: d
execution:
  target: default
workspace: {template: ./template}
tests:
  - id: t
    input: write add
    criteria: exports add
    assert:
      - {type: agent-judge, max_steps: 3}
""")
    run_events(bp, options(tmp_path, env_for(smart, ANTHROPIC_API_KEY=KEY)))
    entry = _rows(tmp_path / "out")["t"]["scores"][0]
    assert entry["score"] == 1.0 and entry["hits"] == ["add is exported"]
    assert [c["tool"] for c in entry["details"]["tool_calls"]] == ["list_files", "read_file"]
    judge_reqs = [r.json for r in smart.requests if (r.json or {}).get("model") == "judge-model"]
    assert len(judge_reqs) == 2
    tools = judge_reqs[0]["tools"]
    names = [t["function"]["name"] for t in tools] if provider == "openai" else [t["name"] for t in tools]
    assert names == ["list_files", "read_file"]
    followup = judge_reqs[1]["messages"][-1]["content"]
    assert "[list_files" in followup and "src/" in followup and "export const add" in followup
