"""What an AgentV judge call sends, against AgentV v2.19.0's own requests (data/agentv_judge_requests.json:
the Messages API bodies AgentV's runEvaluation sent to an Anthropic judge, recorded under bun 1.3.3).

AgentV's llm-judge, rubrics (checklist and score ranges), default judge and composite aggregator call the
AI SDK model with its system prompt and user prompt only: no temperature, no max tokens (the AI SDK then
sends the model's maximum, 64,000 for claude-sonnet-4-5), and not the judge target's own `temperature` or
`max_output_tokens`, which apply to a target's answers. A prompt's template variables are AgentV's eight
(`{{ candidate_answer }}` and the other legacy names stay as written: case `legacy`), `{{ input }}` its
input segments, `{{ question }}` with role markers `@[System]:` when the input has several messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import SmartFake, env_for, options, run_events, write

DATA = json.loads((Path(__file__).parent / "data" / "agentv_judge_requests.json").read_text(encoding="utf-8"))
REPLY = json.dumps({"score": 1, "hits": ["h"], "misses": [], "reasoning": "r", "overall_reasoning": "o",
                    "checks": [{"id": "rubric-1", "satisfied": True, "score": 10, "reasoning": "x"},
                               {"id": "r2", "satisfied": True, "score": 10, "reasoning": "x"}]})
TARGETS = """targets:
  - name: default
    provider: openai
    model: candidate
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: judge
  - name: judge
    provider: anthropic
    model: claude-sonnet-4-5
    api_key: ${{ OPENAI_API_KEY }}
    temperature: 0.3
    max_output_tokens: 77
"""


def _judge_bodies(tmp_path: Path, smart: SmartFake, asserts: Any, question: Any = "What is 2+2?",
                  answer: str = "It is 4.") -> list[dict[str, Any]]:
    smart.decide = lambda req: answer if req.get("model") == "candidate" else REPLY
    run_events(_suite(tmp_path, asserts, question), options(tmp_path, env_for(smart)))
    return [r.json for r in smart.requests if r.path.endswith("/messages")]


def _suite(tmp_path: Path, asserts: Any, question: Any = "What is 2+2?") -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", TARGETS)
    test: dict[str, Any] = {"id": "t1", "input": question, "expected_output": "4", "criteria": "Says four."}
    if asserts is not None:
        test["assert"] = asserts
    return write(tmp_path / "evals" / "a.eval.yaml", json.dumps({"description": "d", "tests": [test]}))


@pytest.mark.parametrize("case", sorted(DATA["cases"]))
def test_a_judge_asks_what_agentv_asks(tmp_path: Path, smart: SmartFake, case: str) -> None:
    want = DATA["cases"][case]
    (body,) = _judge_bodies(tmp_path, smart, want["assert"], want.get("input", "What is 2+2?"),
                            want.get("answer", "It is 4."))
    assert sorted(body) == want["keys"]  # no temperature: neither ours (was 0) nor the target's 0.3
    assert body["max_tokens"] == want["max_tokens"]  # the AI SDK's default; was 500, then the target's 77
    assert body["system"] == want["system"]
    assert [m["role"] for m in body["messages"]] == ["user"]
    got = body["messages"][0]["content"]
    if case == "composite":
        # Left open: AgentV writes each child's whole EvaluationScore (expectedAspectCount, a judge's
        # evaluatorRawRequest…) between these lines; ours its name, type, score, verdict, hits, misses, reasoning.
        head, tail = want["user"].split("\n{\n", 1)[0], want["user"].rsplit("\n}\n", 1)[1]
        assert got.startswith(head + "\n{\n") and got.endswith("\n}\n" + tail)
    else:
        assert got == want["user"]


def _rows(out: Path) -> dict[str, Any]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


@pytest.mark.parametrize(("replies", "score"), [(["no json", "{\"score\": 7}", REPLY], 1.0),
                                                (["no json", "{\"score\": 7}", "nope", REPLY], None)])
def test_a_reply_outside_the_schema_is_asked_again_three_times_in_all(
        tmp_path: Path, smart: SmartFake, replies: list[str], score: float | None) -> None:
    """AgentV's runWithRetry: a reply its schema refuses is asked again, up to 3 asks; then not scored
    (AgentV: skipped). Before, the first refused reply left the assertion not scored."""
    asked: list[int] = []

    def decide(req: dict[str, Any]) -> str:
        if req.get("model") == "candidate":
            return "It is 4."
        asked.append(1)
        return replies[len(asked) - 1]

    smart.decide = decide
    run_events(_suite(tmp_path, [{"type": "llm-judge", "name": "j"}]), options(tmp_path, env_for(smart)))
    entry = _rows(tmp_path / "out")["t1"]["scores"][0]
    assert (len(asked), entry["score"]) == (3, score)


@pytest.mark.parametrize(("max_cost", "max_tokens"), [(None, 64000), (100.0, 1500)])
def test_a_cost_cap_bounds_a_judge_at_what_the_estimate_assumes(tmp_path: Path, smart: SmartFake,
                                                                max_cost: float | None, max_tokens: int) -> None:
    """A deliberate difference (docs/reference-differences.md): AgentV bounds no judge call (the AI SDK sends
    the model's maximum); under --max-cost a judge may answer no more than the 1,500 tokens the cost estimate
    assumes, so the estimate the cap is checked against stays an upper bound. Before, 64,000 with a cap too."""
    from evalspec.run.score.agentv_judge import JUDGE_OUTPUT_ESTIMATE

    assert JUDGE_OUTPUT_ESTIMATE == 1500
    smart.decide = lambda req: "It is 4." if req.get("model") == "candidate" else REPLY
    prices = write(tmp_path / "p.yml", "candidate: {input: 1, output: 1}\nclaude-sonnet-4-5: {input: 1, output: 1}\n")
    suite = _suite(tmp_path, [{"type": "llm-judge", "name": "j"},
                              {"type": "rubrics", "criteria": ["Says four."]}])
    run_events(suite, options(tmp_path, env_for(smart), prices=prices, max_cost=max_cost))
    bodies = [r.json for r in smart.requests if r.path.endswith("/messages")]
    assert [b["max_tokens"] for b in bodies] == [max_tokens, max_tokens]
    assert _rows(tmp_path / "out")["t1"]["scores"][0]["score"] == 1.0  # scored as before
