"""composite in a real run: children of every kind, nesting, each aggregator, weights kept apart."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import AGENTV_TARGETS, SmartFake, env_for, options, run_events, write

JUDGES = Path(__file__).parent / "judges"


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def _grader(req: dict[str, Any]) -> str | None:
    if req.get("model") != "grader-model":
        return None
    prompt = req["messages"][-1]["content"]
    if "Decide the final score" in prompt or "AGGREGATE" in prompt:
        results = json.loads(prompt[prompt.index("{"):prompt.rindex("}") + 1])
        return json.dumps({"score": 0.42, "hits": [f"saw {', '.join(sorted(results))}"], "reasoning": "agg"})
    return json.dumps({"score": 0.6, "hits": ["fine"], "misses": [], "reasoning": "judged"})


SUITE = f"""name: composite
description: d
execution:
  target: default
tests:
  - id: weighted
    input: hello world
    criteria: c
    assert:
      - {{type: contains, value: hello, weight: 3}}
      - type: composite
        name: quality
        weight: 1
        assert:
          - {{name: greets, type: contains, value: hello, weight: 5}}
          - {{name: judged, type: llm-judge}}
          - name: inner
            type: composite
            assert:
              - {{name: yes, type: contains, value: world}}
              - {{name: no, type: contains, value: nope}}
              - {{name: no2, type: contains, value: nope2}}
              - {{name: no3, type: contains, value: nope3}}
            aggregator: {{type: threshold, threshold: 0.5}}
        aggregator:
          type: weighted_average
          weights: {{greets: 1, judged: 2, inner: 1}}
  - id: llm-aggregated
    input: hello
    criteria: c
    assert:
      - type: composite
        assert:
          - {{name: a, type: contains, value: hello}}
          - {{name: b, type: is-json}}
        aggregator: {{type: llm_judge}}
  - id: code-aggregated
    input: hello
    criteria: c
    assert:
      - type: composite
        assert:
          - {{name: a, type: contains, value: hello}}
          - {{name: b, type: regex, value: "h.l"}}
          - {{name: c, type: contains, value: nope}}
        aggregator: {{type: code-judge, path: "{sys.executable} {JUDGES / 'aggregate_min.py'}"}}
  - id: code-aggregator-crashes
    input: hello
    criteria: c
    assert:
      - type: composite
        assert: [{{name: a, type: contains, value: hello}}]
        aggregator: {{type: code_judge, path: "{sys.executable} {JUDGES / 'aggregate_crash.py'}"}}
  - id: child-not-scored
    input: hello
    criteria: c
    assert:
      - {{type: contains, value: hello}}
      - type: composite
        required: true
        assert:
          - {{name: a, type: contains, value: hello}}
          - {{name: mystery, type: regex, value: "{'(a)' * 255}"}}  # more groups than QuickJS compiles
        aggregator: {{type: weighted_average}}
  - id: negated-gate
    input: hello
    criteria: c
    assert:
      - type: composite
        required: true
        negate: true
        assert: [{{name: a, type: contains, value: sorry}}]
        aggregator: {{type: threshold, threshold: 1}}
"""


def test_composites_in_a_run(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _grader
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    bp = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    # The aggregator scripts are tests/run/judges/, outside this project.
    run_events(bp, options(tmp_path, env_for(smart), allow_outside_files=True))
    rows = _rows(tmp_path / "out")

    # inner threshold: 1 of 4 children pass → 0.25 < 0.5 → fail, score 0.25.
    # quality: greets 1.0 (weights[greets] = 1, not its own 5), judged 0.6 × 2, inner 0.25 × 1 → 2.45 / 4.
    # test: contains 1.0 × 3 and quality × 1: the composite's children weights stay inside it.
    quality = next(s for s in rows["weighted"]["scores"] if s["name"] == "quality")
    assert quality["score"] == pytest.approx(2.45 / 4)
    inner = next(s for s in quality["scores"] if s["name"] == "inner")
    assert (inner["score"], inner["verdict"]) == (0.25, "fail")
    assert inner["reasoning"].startswith("1/4 evaluators passed (threshold: 0.5)")
    assert "[judged] fine" in quality["hits"]
    assert rows["weighted"]["score"] == pytest.approx((3 + 2.45 / 4) / 4)

    llm = rows["llm-aggregated"]["scores"][0]
    assert (llm["score"], llm["reasoning"]) == (0.42, "agg") and llm["hits"] == ["saw a, b"]
    code = rows["code-aggregated"]["scores"][0]
    assert code["score"] == 0.0 and code["hits"] == ["a=1.0", "b=1.0", "c=0.0"]
    assert code["reasoning"] == "the weakest child decides"
    crashed = rows["code-aggregator-crashes"]["scores"][0]
    assert crashed["score"] == 0.0 and any("aggregator exploded" in m for m in crashed["misses"])

    # A child that cannot be scored leaves its composite (a required gate) not scored, so the test too.
    row = rows["child-not-scored"]
    assert (row["score"], row["verdict"]) == (None, "not scored")
    assert "its child 'mystery' was not scored" in row["not_scored"][0]["reason"]
    # negate on a composite: threshold 1 not met (0, fail) → negated 1, pass; the gate holds.
    assert (rows["negated-gate"]["score"], rows["negated-gate"]["verdict"]) == (1.0, "pass")


def test_llm_aggregator_without_a_judge_is_not_scored(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "s.eval.yaml", """name: nojudge
description: d
tests:
  - id: t
    input: hello
    criteria: c
    assert:
      - type: composite
        assert: [{name: a, type: contains, value: hello}]
        aggregator: {type: llm-judge, prompt: "AGGREGATE {{EVALUATOR_RESULTS_JSON}}"}
""")
    run_events(bp, options(tmp_path, env_for(smart), models=["echo"]))
    row = _rows(tmp_path / "out")["t"]
    assert (row["score"], row["verdict"]) == (None, "not scored")
    assert row["not_scored"][0]["reason"].startswith("no judge")
