"""AgentV suites: targets, deterministic assertions, rubric and llm-judge judges, gates, result rows."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from evalspec.cli import main

from .conftest import AGENTV_TARGETS, SmartFake, env_for, of_type, options, run_events, write

TARGETS = AGENTV_TARGETS + """  - name: canned
    provider: mock
    response: "DENIED: listed entity"
"""


def _suite(tmp_path: Path, body: str) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", TARGETS)
    return write(tmp_path / "evals" / "s.eval.yaml", body)


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    assert files
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def _grader(req: dict[str, Any]) -> str | None:
    if req.get("model") != "grader-model":
        return None
    prompt = req["messages"][-1]["content"]
    if "[[ ## rubrics ## ]]" in prompt or "[[ ## scoring_criteria ## ]]" in prompt:  # AgentV's rubric prompts
        if "  - Score 0-4: " in prompt:  # score ranges
            return json.dumps({"checks": [{"id": "tone", "score": 8, "reasoning": "warm"},
                                          {"id": "facts", "score": 6, "reasoning": "mostly"}]})
        return "```json\n" + json.dumps({"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "yes"},
                                                   {"id": "rubric-2", "satisfied": False, "reasoning": "no"}],
                                        "overall_reasoning": "half"}) + "\n```"
    return json.dumps({"score": 0.9, "hits": ["names the entity"], "misses": [], "reasoning": f"saw: {prompt}"})


def test_deterministic_gates_negate_and_rows(tmp_path: Path, smart: SmartFake) -> None:
    bp = _suite(tmp_path, """name: gates
description: Gates.
execution:
  target: default
tests:
  - id: gate-fails
    input: "The answer is goodbye"
    criteria: c
    assert:
      - {type: contains, value: hello, required: true}
      - {type: contains, value: goodbye}
  - id: half
    input: "hello world"
    criteria: c
    assert:
      - {type: contains, value: hello, required: true}
      - {type: contains, value: foo}
  - id: negated
    input: "hello"
    criteria: c
    assert:
      - {type: contains, value: sorry, negate: true}
""")
    events = run_events(bp, options(tmp_path, env_for(smart)))
    rows = _rows(tmp_path / "out")
    assert (rows["gate-fails"]["score"], rows["gate-fails"]["verdict"]) == (0.0, "fail")
    assert rows["gate-fails"]["execution_status"] == "quality_failure"
    assert (rows["half"]["score"], rows["half"]["verdict"]) == (0.5, "fail")
    assert (rows["negated"]["score"], rows["negated"]["verdict"]) == (1.0, "pass")
    row = rows["half"]
    for key in ("timestamp", "test_id", "dataset", "conversation_id", "score", "hits", "misses", "answer", "target",
                "reasoning", "token_usage", "cost_usd", "duration_ms", "scores", "error", "trials",
                "execution_status"):
        assert key in row, key
    assert row["dataset"] == "gates" and row["target"] == "default" and row["answer"] == "ECHO: hello world"
    assert row["scores"][0] == {"name": "contains-hello", "type": "contains", "score": 1.0, "weight": 1.0,
                                "verdict": "pass", "hits": row["scores"][0]["hits"], "misses": [],
                                "reasoning": 'Output contains "hello"'}  # AgentV's auto-name and reasoning
    assert row["token_usage"] == {"input": 11, "output": 7}
    assert [e.cell.model for e in of_type(events, "scored")] == ["default"] * 3


def test_rubrics_and_llm_judge_ask_the_judge_target(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _grader
    bp = _suite(tmp_path, """name: judged
description: Judged.
execution:
  target: default
tests:
  - id: checklist
    input: Explain quicksort.
    criteria: Explains quicksort
    assert:
      - type: rubrics
        criteria: [Mentions partitioning, Mentions complexity]
  - id: ranges
    input: Greet Alice.
    criteria: Greets warmly
    rubrics:
      - id: tone
        outcome: warm
        weight: 2
        score_ranges: {0: cold, 5: neutral, 10: warm}
      - id: facts
        outcome: right name
        score_ranges: {0: wrong, 5: partly, 10: right}
  - id: freeform
    input: Screen Huawei.
    criteria: Should deny
    expected_output: DENIED
    assert:
      - type: llm_judge
        prompt: "Q={{ question }} A={{ answer }} C={{ criteria }} R={{ reference_answer }} L={{ candidate_answer }}
          O={{ output }} E={{ expected_output }} I={{input}}"
  - id: default-judge
    input: Say hi.
    criteria: Says hi
""")
    run_events(bp, options(tmp_path, env_for(smart)))
    rows = _rows(tmp_path / "out")
    checklist = rows["checklist"]["scores"][0]
    assert (checklist["score"], checklist["verdict"]) == (0.5, "fail")  # a missed required criterion
    ranges = rows["ranges"]["scores"][0]
    assert abs(ranges["score"] - (8 * 2 + 6) / 30) < 1e-9
    free = rows["freeform"]["scores"][0]
    assert free["score"] == 0.9 and free["type"] == "llm-judge"
    assert "Q=Screen Huawei. A=ECHO: Screen Huawei. C=Should deny R=DENIED L={{ candidate_answer }}" in free["reasoning"]  # AgentV: no legacy names
    assert '"content": "ECHO: Screen Huawei."' in free["reasoning"].split("O=")[1].split("E=")[0]
    assert '"role": "assistant"' in free["reasoning"].split("E=")[1] and '"DENIED"' in free["reasoning"].split("E=")[1]
    assert '"value": "Screen Huawei."' in free["reasoning"].split("I=")[1]  # AgentV's input segments
    assert rows["default-judge"]["scores"][0]["type"] == "llm-judge" and rows["default-judge"]["score"] == 0.9
    judge_calls = [r for r in smart.chat_requests() if r["model"] == "grader-model"]
    # As AgentV's judges: no temperature, no max tokens
    assert len(judge_calls) == 4 and all("temperature" not in r and "max_tokens" not in r for r in judge_calls)


def test_types_not_run_are_named_and_never_pass(tmp_path: Path, smart: SmartFake) -> None:
    bp = _suite(tmp_path, """name: partial
description: Partial.
execution:
  target: default
tests:
  - id: t
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello}
      - {type: word_count, max: 3}
      - {type: latency, max_ms: 60000}
""")
    events = run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    by_type = {s["type"]: s for s in row["scores"]}
    assert by_type["word-count"]["score"] is None and by_type["word-count"]["verdict"] == "not scored"
    assert by_type["word-count"]["reasoning"].startswith("not scored: custom assertion type 'word-count'")
    assert by_type["latency"]["score"] == 0.0  # a chat API reports no duration: AgentV's "no duration data"
    assert (row["score"], row["verdict"]) == (None, "not scored")  # never a pass on the other two
    assert [u["type"] for u in row["not_scored"]] == ["word-count"]
    assert "not_supported" not in row
    assert not [e for e in of_type(events, "notice") if "not supported" in e.message]


def test_no_judge_means_not_scored(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "s.eval.yaml", """name: nojudge
description: d
tests:
  - id: t
    input: hello
    criteria: c
    assert:
      - type: rubrics
        criteria: [says hello]
""")
    events = run_events(bp, options(tmp_path, env_for(smart), models=["echo"]))
    scored = of_type(events, "scored")[0]
    assert scored.score is None and scored.verdict == "not scored"
    assert scored.details["scores"][0]["reasoning"].startswith("not scored: no judge")


def test_cli_with_a_mock_target_and_missing_target(tmp_path: Path, smart: SmartFake, monkeypatch, capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    bp = _suite(tmp_path, """name: mock
description: Mock.
execution:
  target: canned
tests:
  - id: denied
    input: Screen X
    criteria: deny
    assert: [{type: contains, value: DENIED, required: true}]
""")
    assert main(["run", str(bp), "-o", str(tmp_path / "out")]) == 0
    assert "canned" in capsys.readouterr().out
    assert _rows(tmp_path / "out")["denied"]["score"] == 1.0
    assert main(["run", str(bp), "-m", "nonexistent"]) == 2
    assert "no target named 'nonexistent'" in capsys.readouterr().err


def test_weights_and_verdicts_reference_cases(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "v.eval.yaml", """name: verdicts
description: d
tests:
  - id: pass-085
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello, weight: 17}
      - {type: contains, value: nope, weight: 3}
  - id: borderline-07
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello, weight: 7}
      - {type: contains, value: nope, weight: 3}
  - id: fail-05
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello}
      - {type: contains, value: nope}
  - id: not-selected
    input: hello
    criteria: c
    assert: [{type: contains, value: hello}]
""")
    events = run_events(bp, options(tmp_path, env_for(smart), models=["openai:candidate"], select=["*-0*"]))
    got = {e.cell.item: (round(e.score, 4), e.verdict) for e in of_type(events, "scored")}
    assert got == {"pass-085": (0.85, "pass"), "borderline-07": (0.7, "borderline"), "fail-05": (0.5, "fail")}
    assert {e.cell.model for e in of_type(events, "scored")} == {"openai:candidate"}


def test_execution_timeout_seconds_bounds_the_target_call(tmp_path: Path, smart: SmartFake) -> None:
    from fakeprovider import Reply

    bp = _suite(tmp_path, """name: slow
description: d
tests:
  - id: slow
    input: hello
    criteria: c
    execution: {timeout_seconds: 0.3}
    assert: [{type: contains, value: hello}]
""")
    smart.then(Reply.hang(4))
    t0 = time.monotonic()
    events = run_events(bp, options(tmp_path, env_for(smart), timeout=30.0))
    assert time.monotonic() - t0 < 3
    [failed] = of_type(events, "cell_failed")
    assert "0.3 s" in failed.error and failed.kind == "timeout"


def test_result_rows_are_in_the_run_database_while_the_run_goes_on(tmp_path: Path, smart: SmartFake,
                                                                     monkeypatch) -> None:
    """A finished test's row is in the run database (a reader with sqlite3 sees it) the moment the run
    reports it; the results file is an export, written once when the run ends."""
    import asyncio

    from evalspec.analysis import analyze_file
    from evalspec.run.journal import database, run_store
    from evalspec.run.runner import plan_for, run

    # A test is reported once its records are committed (run_store.COMMIT_EVERY, 0.5 s): by then the
    # instant fake may have answered the next tests too, whose rows are then in the database as well.
    monkeypatch.setattr(run_store, "COMMIT_EVERY", 0.01)

    bp = _suite(tmp_path, """name: live
description: d
tests:
  - {id: a, input: hello, criteria: c, assert: [{type: contains, value: hello}]}
  - {id: b, input: hello, criteria: c, assert: [{type: contains, value: hello}]}
  - {id: c, input: hello, criteria: c, assert: [{type: contains, value: hello}]}
""")
    opts = options(tmp_path, env_for(smart), concurrency=1)

    async def stop_after_first_test() -> tuple[str, list[dict[str, Any]]]:
        stream = run(plan_for(analyze_file(bp), opts), opts)
        async for event in stream:
            if event.type == "scored":
                [db] = (tmp_path / "out").glob("agentv/*/*.run.db")
                with database.reading(db) as conn:  # another connection: what a reader sees now
                    rows = [json.loads(row) for _, _, row in database.score_rows(conn)]
                await stream.aclose()  # the run stops here, as on Ctrl-C
                return event.cell.item, rows
        raise AssertionError("no test was scored")

    first, rows = asyncio.run(stop_after_first_test())
    got = [(r["test_id"], r["score"]) for r in rows]
    assert (first, 1.0) in got and all(score == 1.0 for _, score in got) and len(set(got)) == len(got)
    assert not list((tmp_path / "out").glob("agentv/*/*_*.jsonl"))  # exported when the run ends

    # --resume finishes the same results file: one file, every test, in the plan's order.
    run_events(bp, options(tmp_path, env_for(smart), concurrency=1, resume=True))
    [done] = (tmp_path / "out").glob("agentv/*/*_*.jsonl")
    assert [json.loads(line)["test_id"] for line in done.read_text().splitlines()] == ["a", "b", "c"]
