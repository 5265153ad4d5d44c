"""The legacy forms a v2.19 file may still hold run: `evaluators: [{type: rubric, rubrics: [...]}]`
(agentv-yaml-schema-requirements.md) and the suite-level `evaluator` key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.analysis import analyze_file

from .conftest import AGENTV_TARGETS, SmartFake, env_for, options, run_events, write

SUITE = """description: legacy
evaluator: llm_judge
execution:
  target: default
tests:
  - id: explicit
    input: hello
    expected_outcome: Greets politely
    evaluators:
      - type: rubric
        rubrics: [{id: rubric-1, outcome: Must be polite}, {id: warm, outcome: Is warm, weight: 3}]
        model: gpt-4
  - id: in-execution
    input: hello
    criteria: Says hello
    execution:
      evaluators:
        - type: rubric
          rubrics: [{id: rubric-1, outcome: Must be polite}]
  - id: default-evaluator
    input: hello
    criteria: Says hello
"""


def _grader(req: dict[str, Any]) -> str | None:
    if req.get("model") != "grader-model":
        return None
    prompt = req["messages"][-1]["content"]
    if "[[ ## rubrics ## ]]" in prompt:
        return json.dumps({"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "polite"},
                                      {"id": "warm", "satisfied": False, "reasoning": "flat"}],
                           "overall_reasoning": "half"})
    return json.dumps({"score": 1.0, "hits": ["says hello"], "reasoning": "ok"})


def test_legacy_rubric_evaluators_and_the_suite_evaluator_key(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _grader
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    bp = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    analysis = analyze_file(bp)
    messages = [f.message for f in analysis.findings]
    assert not any("Unknown key 'evaluator'" in m or "Unknown assertion type 'rubric'" in m for m in messages)
    assert sum("'type: rubric' with 'rubrics' is the older form" in m for m in messages) == 2

    run_events(bp, options(tmp_path, env_for(smart)))
    files = [p for p in (tmp_path / "out").glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl")]
    rows = {r["test_id"]: r for r in map(json.loads, files[0].read_text().splitlines())}
    explicit = rows["explicit"]["scores"][0]
    assert (explicit["type"], explicit["name"]) == ("llm-judge", "rubric")  # AgentV's row names rubrics llm-judge
    # polite (weight 1) satisfied, warm (weight 3, required by default) missed: 0.25, and the assertion
    # fails (AgentV); the test's verdict is its score's.
    assert (explicit["score"], explicit["verdict"]) == (0.25, "fail") and rows["explicit"]["verdict"] == "fail"
    assert any("[warm] Is warm: flat" in m for m in explicit["misses"])
    assert (rows["in-execution"]["score"], rows["in-execution"]["verdict"]) == (1.0, "pass")
    assert rows["default-evaluator"]["scores"][0]["type"] == "llm-judge"
    assert rows["default-evaluator"]["score"] == 1.0
    rubric_prompts = [r for r in smart.chat_requests()
                      if r["model"] == "grader-model" and "[[ ## rubrics ## ]]" in r["messages"][-1]["content"]]
    assert len(rubric_prompts) == 2 and "Is warm" in rubric_prompts[0]["messages"][-1]["content"]
