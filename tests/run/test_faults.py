"""Faults on real sockets: 429 with Retry-After, 500s, timeouts, malformed JSON. A failed cell is
recorded and the run goes on."""

from __future__ import annotations

from pathlib import Path

from fakeprovider import Reply

from .conftest import SmartFake, comparison, env_for, of_type, options, run_events, write

ONE = """models: [openai:candidate]
---
- id: p
  prompt: Hi
  should: [$contains: Hi]
"""
TWO = ONE + """- id: q
  prompt: Hello
  should: [$contains: Hello]
"""


def test_429_with_retry_after_is_retried_and_reported(tmp_path: Path, smart: SmartFake) -> None:
    smart.then(Reply.rate_limited(0.05))
    events = run_events(write(tmp_path / "a.weval.yml", ONE), options(tmp_path, env_for(smart), max_retries=2))
    retries = of_type(events, "retrying")
    assert len(retries) == 1
    assert (retries[0].attempt, retries[0].delay, retries[0].reason) == (1, 0.05, "429")
    assert of_type(events, "scored")[0].score == 1.0
    assert smart.count == 2


def test_500s_exhaust_retries_then_the_cell_fails_and_the_run_goes_on(tmp_path: Path, smart: SmartFake) -> None:
    # Every call for `p` gets a 500 (one try + two retries); the other prompt is answered. By prompt,
    # not by order: a call waiting to retry holds no slot, so `q` may go between p's attempts.
    smart.decide = lambda req: Reply.server_error() if req["messages"][-1]["content"] == "Hi" else None
    events = run_events(write(tmp_path / "b.weval.yml", TWO),
                        options(tmp_path, env_for(smart), max_retries=2, concurrency=1))
    failed = of_type(events, "cell_failed")
    assert len(failed) == 1 and failed[0].kind == "server"
    assert "HTTP 500" in failed[0].error
    assert [r.reason for r in of_type(events, "retrying")] == ["500", "500"]
    assert [e.cell.item for e in of_type(events, "scored")] == ["q"]
    data = comparison(tmp_path / "out")
    assert data["errors"]["p"]["openai:candidate[temp:0]"].startswith("Failed to get response for")
    assert data["allFinalAssistantResponses"]["p"]["openai:candidate[temp:0]"].startswith("<<error>>")
    assert data["evaluationResults"]["llmCoverageScores"]["p"]["openai:candidate[temp:0]"]["error"].startswith(
        "Generation failed:")
    summary = of_type(events, "run_finished")[0].summary
    assert (summary.models[0].errors, summary.models[0].scored) == (1, 1)


def test_timeout(tmp_path: Path, smart: SmartFake) -> None:
    smart.then(Reply.hang(3.0))
    events = run_events(write(tmp_path / "c.weval.yml", ONE),
                        options(tmp_path, env_for(smart), timeout=0.3, max_retries=0))
    failed = of_type(events, "cell_failed")
    assert failed and failed[0].kind == "timeout"
    assert "no answer within 0.3 s" in failed[0].error


def test_malformed_json_is_not_retried(tmp_path: Path, smart: SmartFake) -> None:
    smart.then(Reply.malformed())
    events = run_events(write(tmp_path / "d.weval.yml", ONE),
                        options(tmp_path, env_for(smart), max_retries=2))
    failed = of_type(events, "cell_failed")
    assert failed and failed[0].kind == "bad_response"
    assert of_type(events, "retrying") == []
    assert smart.count == 1


def test_empty_answer_is_an_error(tmp_path: Path, smart: SmartFake) -> None:
    smart.then(Reply.ok("   "))
    events = run_events(write(tmp_path / "e.weval.yml", ONE), options(tmp_path, env_for(smart)))
    assert "empty or whitespace-only" in of_type(events, "cell_failed")[0].error


def test_missing_key_fails_every_cell_of_that_model_without_any_call(tmp_path: Path, smart: SmartFake) -> None:
    env = env_for(smart)
    del env["OPENAI_API_KEY"]
    events = run_events(write(tmp_path / "f.weval.yml", TWO), options(tmp_path, env))
    failed = of_type(events, "cell_failed")
    assert len(failed) == 2 and {f.kind for f in failed} == {"missing_key"}
    assert "OPENAI_API_KEY is not set" in failed[0].error
    assert smart.count == 0
