"""The results files are exports of the run database, byte for byte what evalspec wrote before it (main at
63bf5c1, when results were written from the JSONL journal's run): a multi-model Weval run with function
points, judged points and key points from an ideal, and a two-target AgentV suite with deterministic and
judged assertions, on the fake provider. Only what differs between any two runs is masked (times,
durations). The expected files were written by that evalspec running this very module with
EVALSPEC_WRITE_EXPORTS=1; the run here is also resumed after a kill-free stop to show a resumed run
exports the same bytes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .conftest import AGENTV_TARGETS, SmartFake, classify, criterion_of, env_for, options, run_events, write

EXPECTED = Path(__file__).parent / "exports"
TIMES = re.compile(rb'("(?:timestamp|duration_ms|start_time|end_time|latency_ms|durationMs)": ?)("[^"]*"|[0-9.]+)')
STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")

BLUEPRINT = """title: Exports
description: A judged run of three models.
models: [openai:model-a, openai:model-b, openai:model-c]
---
- id: capital
  prompt: What is the capital of France?
  ideal: Paris is the capital of France.
  should:
    - $contains: Paris
    - names the capital
- id: greet
  prompt: Say hello politely.
  should:
    - is polite
    - $icontains: hello
  should_not:
    - is rude
- id: count
  messages:
    - user: Count to three.
    - assistant: One, two, three.
    - user: Now backwards.
  should:
    - $matches: "three|3"
"""

SUITE = """name: exports
description: Two targets, deterministic and judged assertions.
execution:
  targets: [default, second]
tests:
  - id: t1
    input: "Say hello to the world"
    criteria: The answer greets the world.
    assert:
      - {type: contains, value: hello}
      - {type: llm-judge, prompt: "Does it greet?"}
  - id: t2
    input: "Name a colour"
    criteria: Names a colour.
    assert:
      - {type: regex, value: "colou?r"}
      - {type: rubrics, criteria: ["names a colour", "is short"]}
"""


def _decide(req: dict[str, Any]) -> str | None:
    text = json.dumps(req.get("messages"))
    last = str((req.get("messages") or [{}])[-1].get("content"))
    if "<IDEAL>" in last:
        return "<key_point>mentions Paris</key_point>\n<key_point>is one sentence</key_point>"
    crit = criterion_of(req)
    if crit is not None:
        grade = {"names the capital": "CLASS_EXACT", "is polite": "CLASS_PARTIAL", "is rude": "CLASS_NO_MATCH",
                 "mentions Paris": "CLASS_MODERATE"}.get(crit, "CLASS_MAJOR")
        return classify(grade, f"about {crit} for {req.get('model')}")
    if req.get("model") == "grader-model":
        if "[[ ## rubrics ## ]]" in last:
            return json.dumps({"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "yes"},
                                          {"id": "rubric-2", "satisfied": "short" in text, "reasoning": "len"}],
                               "overall_reasoning": "ok"})
        return json.dumps({"score": 0.75, "hits": ["greets"], "misses": ["no name"], "reasoning": "mostly"})
    return f"{req.get('model')} says hello: Paris, three, colour ({len(text)})"


def _masked(data: bytes) -> bytes:
    return STAMP.sub(b"<stamp>", TIMES.sub(rb"\1<time>", data))


def _outputs(out: Path) -> dict[str, bytes]:
    found = {}
    for p in sorted(out.rglob("*")):
        if p.is_file() and (p.name.endswith(("_comparison.json", "_cost.json")) or
                            (p.suffix == ".jsonl" and "agentv" in p.parts and ".journal" not in p.name)):
            name = STAMP.sub(b"STAMP", p.name.encode()).decode()
            if "agentv" in p.parts:  # an AgentV run's label hashes where the suite is (a tmp folder)
                name = re.sub("^[0-9a-f]{16}_", "LABEL_", name)
            data = _masked(p.read_bytes())
            if "agentv" in p.parts:
                data = re.sub(rb'"[0-9a-f]{16}_<stamp>', b'"<label>_<stamp>', data)
            found[name] = data
    return found


def _check(name: str, got: dict[str, bytes]) -> None:
    folder = EXPECTED / name
    if os.environ.get("EVALSPEC_WRITE_EXPORTS"):
        folder.mkdir(parents=True, exist_ok=True)
        for file, data in got.items():
            (folder / file).write_bytes(data)
        return
    expected = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    assert sorted(got) == sorted(expected)
    for file, data in got.items():
        assert data == expected[file], file


def test_a_judged_multi_model_weval_run_exports_the_same_bytes(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _decide
    bp = write(tmp_path / "exports.weval.yml", BLUEPRINT)
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge-a", "openai:judge-b"], concurrency=4))
    got = _outputs(tmp_path / "out")
    assert len(got) == 2  # the comparison file and its cost file
    _check("weval", got)


def test_a_judged_two_target_agentv_run_exports_the_same_bytes(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _decide
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS + """  - name: second
    provider: openai
    model: second-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: grader
""")
    suite = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    run_events(suite, options(tmp_path, env_for(smart), concurrency=3))
    got = _outputs(tmp_path / "out")
    assert len(got) == 2  # the results file and its cost file
    _check("agentv", got)
