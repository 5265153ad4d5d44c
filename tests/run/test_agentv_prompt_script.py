"""llm-judge with `prompt: {command, config}`: the script builds the judge prompt from the payload."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .conftest import AGENTV_TARGETS, SmartFake, env_for, options, run_events, write

PROMPTS = Path(__file__).parent / "prompts"


def test_prompt_scripts_build_the_judge_prompt(tmp_path: Path, smart: SmartFake) -> None:
    seen: list[str] = []

    def grader(req: dict[str, Any]) -> str | None:
        if req.get("model") != "grader-model":
            return None
        seen.append(req["messages"][-1]["content"])
        return json.dumps({"score": 0.75, "hits": ["ok"], "reasoning": "scripted"})

    smart.decide = grader
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    bp = write(tmp_path / "evals" / "s.eval.yaml", f"""name: prompt-script
description: d
execution:
  target: default
tests:
  - id: scripted
    input: Explain async.
    criteria: c
    assert:
      - name: strict
        type: llm-judge
        prompt:
          command: [{sys.executable}, {PROMPTS / 'judge_prompt.py'}]
          config: {{rubric: mention Promises}}
  - id: broken
    input: Explain async.
    criteria: c
    assert:
      - name: strict
        type: llm-judge
        required: true
        prompt:
          command: [{sys.executable}, {PROMPTS / 'broken_prompt.py'}]
""")
    # The prompt scripts are tests/run/prompts/, outside this project.
    run_events(bp, options(tmp_path, env_for(smart), allow_outside_files=True))
    files = [p for p in (tmp_path / "out").glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl")]
    rows = {r["test_id"]: r for r in map(json.loads, files[0].read_text().splitlines())}
    assert rows["scripted"]["score"] == 0.75
    # The judge got exactly what the script printed (nothing was asked for the broken one).
    assert seen == ["PROMPT-SCRIPT question=Explain async. answer=ECHO: Explain async. rubric=mention Promises"]
    broken = rows["broken"]
    assert (broken["score"], broken["verdict"]) == (None, "not scored")
    reason = broken["not_scored"][0]["reason"]
    assert "exited with code 2" in reason and "template engine missing" in reason
