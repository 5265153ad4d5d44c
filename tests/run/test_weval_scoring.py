"""Weval scoring through the whole runner, on the reference cases of compat notes §7–§8."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    SmartFake,
    classify,
    comparison,
    criterion_of,
    env_for,
    of_type,
    options,
    run_events,
    write,
)

HEADER = "models: [openai:candidate]\n---\n"


def _coverage(out: Path, pid: str) -> dict[str, Any]:
    data = comparison(out)
    return data["evaluationResults"]["llmCoverageScores"][pid]["openai:candidate[temp:0]"]


def _judge_by_criterion(table: dict[str, str], unknown_for: str | None = None):
    def decide(req: dict[str, Any]) -> str | None:
        crit = criterion_of(req)
        if crit is None:
            return None  # the candidate: echo
        if unknown_for and req.get("model") == unknown_for:
            return classify("CLASS_SOMEWHAT")
        for needle, cls in table.items():
            if needle in crit:
                return classify(cls, f"about {needle}")
        return classify("CLASS_UNMET")
    return decide


def test_graded_function_points_and_paths(tmp_path: Path, smart: SmartFake) -> None:
    # The candidate echoes the prompt; contains_all_of of five words of which k appear scores k/5.
    five = ["a1", "a2", "a3", "a4", "a5"]

    def fn(k: int) -> str:
        return f"$contains_all_of: {[*five[:k], *[f'z{i}' for i in range(5 - k)]]}"

    bp = write(tmp_path / "s.weval.yml", HEADER + f"""
- id: mean
  prompt: "a1 a2 a3 a4 a5"
  should:
    - {fn(5)}
    - {fn(0)}
- id: weighted
  prompt: "a1 a2 a3 a4 a5"
  should:
    - {fn(5)}
    - {{$contains_all_of: {[*five[:2], 'z1', 'z2', 'z3', 'z4']}, weight: 1}}
- id: paths
  prompt: "a1 a2 a3 a4 a5"
  should:
    - - {fn(4)}
      - {fn(0)}
    - - {fn(4)}
      - {fn(5)}
- id: mixed
  prompt: "a1 a2 a3 a4 a5"
  should:
    - {fn(4)}
    - {fn(3)}
    - - {fn(1)}
      - {fn(2)}
    - - {fn(5)}
""")
    run_events(bp, options(tmp_path, env_for(smart), eval_methods=("llm-coverage",)))
    assert _coverage(tmp_path / "out", "mean")["avgCoverageExtent"] == 0.5
    weighted = _coverage(tmp_path / "out", "weighted")
    assert weighted["avgCoverageExtent"] == 0.67  # (1 + 2/6) / 2 → JavaScript rounding
    paths = _coverage(tmp_path / "out", "paths")
    assert paths["avgCoverageExtent"] == 0.9
    assert {pa["pathId"] for pa in paths["pointAssessments"]} == {"path_0", "path_1"}
    assert _coverage(tmp_path / "out", "mixed")["avgCoverageExtent"] == 0.85
    assert paths["pointAssessments"][0]["keyPointText"].startswith('Function: contains_all_of(["a1"')


def test_weights_reference_case(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _judge_by_criterion({"first": "CLASS_EXACT", "second": "CLASS_MODERATE"})
    bp = write(tmp_path / "w.weval.yml", HEADER + """
- id: p
  prompt: Hi
  should:
    - point: the first thing
      weight: 2
    - the second thing
""")
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge-a"]))
    cov = _coverage(tmp_path / "out", "p")
    assert cov["avgCoverageExtent"] == 0.83  # (1×2 + 0.5×1) / 3 = 0.8333
    assert [pa["multiplier"] for pa in cov["pointAssessments"]] == [2.0, 1.0]


def test_judges_consensus_inversion_and_unknown_class(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _judge_by_criterion({"polite": "CLASS_MAJOR", "rude": "CLASS_SLIGHT"}, unknown_for="judge-b")
    bp = write(tmp_path / "j.weval.yml", HEADER + """
- id: p
  prompt: Hi
  should:
    - is polite
  should_not:
    - is rude
""")
    events = run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge-a", "openai:judge-b"]))
    cov = _coverage(tmp_path / "out", "p")
    polite, rude = cov["pointAssessments"]
    assert polite["coverageExtent"] == 0.75
    assert polite["judgeModelId"] == "consensus(holistic(openai:judge-a))"
    assert [j["judgeModelId"] for j in polite["individualJudgements"]] == ["holistic(openai:judge-a)"]
    assert "1 of 2 judges failed" in polite["error"]  # the unknown class is a judge error
    assert any("Invalid classification value: 'CLASS_SOMEWHAT'" in line for line in polite["judgeLog"])
    assert rude["isInverted"] is True and rude["coverageExtent"] == 0.75  # 1 − 0.25
    assert rude["reflection"].startswith("[INVERTED] ")
    assert cov["avgCoverageExtent"] == 0.75
    # Judges are asked at temperature 0, for the XML answer.
    judged = smart.judge_requests()
    assert judged and all(r["temperature"] == 0 for r in judged)
    assert all("<classification>" in r["messages"][-1]["content"] for r in judged)
    assert of_type(events, "scored")[0].score == 0.75


def test_all_judges_failed_excludes_the_point(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _judge_by_criterion({}, unknown_for="judge-a")
    bp = write(tmp_path / "f.weval.yml", HEADER + """
- id: p
  prompt: Hi there
  should:
    - $contains: Hi
    - is friendly
""")
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge-a"]))
    cov = _coverage(tmp_path / "out", "p")
    _fn_point, judged = cov["pointAssessments"]
    assert judged["error"] == "All judges failed in consensus mode."
    assert judged["coverageExtent"] is None
    assert cov["avgCoverageExtent"] == 1.0  # the excluded point does not count as 0


def test_without_a_judge_key_text_points_are_not_scored(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "n.weval.yml", HEADER + """
- id: only-judged
  prompt: Hi
  should:
    - is friendly
- id: both
  prompt: Hi
  should:
    - $contains: Hi
    - is friendly
""")
    env = env_for(smart)  # no OPENROUTER_API_KEY: the default judges cannot be called
    events = run_events(bp, options(tmp_path, env))
    notices = [e.message for e in of_type(events, "notice")]
    assert any("OPENROUTER_API_KEY" in n and "not be scored" in n for n in notices)
    scored = {e.cell.item: e for e in of_type(events, "scored")}
    assert scored["only-judged"].score is None and scored["only-judged"].verdict is None
    assert scored["both"].score == 1.0
    only = _coverage(tmp_path / "out", "only-judged")
    assert "avgCoverageExtent" not in only
    assert only["pointAssessments"][0]["error"].startswith("Not scored: no judge can be called")
    assert smart.judge_requests() == []  # no made-up score, no call
    finished = of_type(events, "run_finished")[0].summary
    assert finished.models[0].not_scored == 1


def test_key_points_from_the_ideal(tmp_path: Path, smart: SmartFake) -> None:
    def decide(req: dict[str, Any]) -> str | None:
        text = str(req["messages"][-1]["content"])
        if "<IDEAL>" in text:
            return "<key_point>mentions Paris</key_point>\n<key_point>is one sentence</key_point>"
        crit = criterion_of(req)
        if crit is not None:
            return classify("CLASS_EXACT" if "Paris" in crit else "CLASS_MODERATE")
        return None

    smart.decide = decide
    bp = write(tmp_path / "k.weval.yml", HEADER + """
- id: capital
  prompt: What is the capital of France?
  ideal: Paris is the capital of France.
""")
    run_events(bp, options(tmp_path, env_for(smart), judges=["openai:judge-a"]))
    data = comparison(tmp_path / "out")
    assert data["extractedKeyPoints"] == {"capital": ["mentions Paris", "is one sentence"]}
    cov = data["evaluationResults"]["llmCoverageScores"]["capital"]["openai:candidate[temp:0]"]
    assert cov["keyPointsCount"] == 2 and cov["avgCoverageExtent"] == 0.75
    assert data["allFinalAssistantResponses"]["capital"]["IDEAL_BENCHMARK"] == "Paris is the capital of France."


def test_multi_turn_generated_turns(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "m.weval.yml", HEADER + """
- id: chat
  messages:
    - user: first question
    - assistant: null
    - user: second question
  should:
    - $contains: "ECHO: first question"
    - $contains: "ECHO: second question"
""")
    run_events(bp, options(tmp_path, env_for(smart)))
    data = comparison(tmp_path / "out")
    history = data["fullConversationHistories"]["chat"]["openai:candidate[temp:0]"]
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[1]["content"] == "ECHO: first question"
    assert data["allFinalAssistantResponses"]["chat"]["openai:candidate[temp:0]"] == "ECHO: second question"
    # The scored text is every generated turn, joined by a blank line: both points pass.
    assert data["evaluationResults"]["llmCoverageScores"]["chat"]["openai:candidate[temp:0]"]["avgCoverageExtent"] == 1
    second = smart.chat_requests()[1]
    assert [m["content"] for m in second["messages"]] == ["first question", "ECHO: first question", "second question"]


def test_call_point_posts_to_a_service(tmp_path: Path, smart: SmartFake) -> None:
    def decide(req: dict[str, Any]) -> str | None:
        if req.get("path", "").endswith("/score"):
            return '{"score": 0.25, "explain": "a quarter"}' if "ECHO" in req.get("response", "") else '{}'
        return None

    smart.decide = decide
    bp = write(tmp_path / "c.weval.yml", f"""models: [openai:candidate]
externalServices:
  grader:
    url: {smart.url('/score')}
    headers:
      Authorization: Bearer ${{GRADER_TOKEN}}
---
- id: p
  prompt: Hi
  should:
    - $call: {{service: grader, extra: "{{promptId}}"}}
""")
    run_events(bp, options(tmp_path, env_for(smart, GRADER_TOKEN="tok-secret-987654")))
    pa = _coverage(tmp_path / "out", "p")["pointAssessments"][0]
    assert pa["coverageExtent"] == 0.25 and pa["reflection"] == "a quarter"
    service = next(r for r in smart.requests if r.path == "/score")
    assert service.json == {"response": "ECHO: Hi", "modelId": "openai:candidate[temp:0]", "promptId": "p",
                            "extra": "p"}
    assert service.headers["authorization"] == "Bearer tok-secret-987654"
    written = (tmp_path / "out").rglob("*.json*")
    assert not any("tok-secret-987654" in f.read_text() for f in written)


def test_embedding_similarity(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "e.weval.yml", """models: [openai:a, openai:b]
embeddingModel: openai:text-embedding-3-small
---
- id: p
  prompt: Hi
  ideal: Hello
  should: [$contains: Hi]
""")
    run_events(bp, options(tmp_path, env_for(smart), eval_methods=("llm-coverage", "embedding")))
    data = comparison(tmp_path / "out")
    assert data["evalMethodsUsed"] == ["llm-coverage", "embedding"]
    sim = data["evaluationResults"]["similarityMatrix"]
    assert set(sim) == {"IDEAL_BENCHMARK", "openai:a[temp:0]", "openai:b[temp:0]"}
    assert sim["openai:a[temp:0]"]["openai:a[temp:0]"] == 1.0
    # Both candidates answer "ECHO: Hi": identical embeddings (the fake hashes the text).
    assert abs(sim["openai:a[temp:0]"]["openai:b[temp:0]"] - 1.0) < 1e-9
    assert 0 < sim["IDEAL_BENCHMARK"]["openai:a[temp:0]"] < 1
    assert data["evaluationResults"]["perPromptSimilarities"]["p"]["openai:b[temp:0]"]["IDEAL_BENCHMARK"] == \
        sim["openai:b[temp:0]"]["IDEAL_BENCHMARK"]
    assert any(r.path.endswith("/embeddings") for r in smart.requests)


class _Service:
    """A `$call` service on loopback that never finishes its answer: `drip` sends a byte of a 100,000-byte
    body every 0.2 s; `endless` sends 1 MB chunks of JSON blanks without a length until the client hangs up."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sent = 0
        self.port = 0
        self.closed = threading.Event()

    def __enter__(self) -> _Service:
        ready = threading.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await reader.readuntil(b"\r\n\r\n")
                if self.mode == "drip":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n")
                    chunk, pause = b" ", 0.2
                else:
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
                    chunk, pause = b" " * 1048576, 0.0
                while self.sent < 64 * 1048576:
                    writer.write(chunk)
                    await writer.drain()
                    self.sent += len(chunk)
                    await asyncio.sleep(pause)
            except (ConnectionError, asyncio.IncompleteReadError):
                self.closed.set()
            finally:
                writer.close()

        def run() -> None:
            loop = self.loop = asyncio.new_event_loop()
            server = loop.run_until_complete(asyncio.start_server(serve, "127.0.0.1", 0))
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            server.close()

            async def end() -> None:  # a drip still going: ended, not left to the collector
                tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

            loop.run_until_complete(end())
            loop.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.mark.parametrize("mode", ["drip", "endless"])
def test_a_call_service_that_never_finishes_its_answer_is_a_point_not_scored(tmp_path: Path, smart: SmartFake,
                                                                               mode: str) -> None:
    """atk9r: `timeout_ms` bounded each read, not the call, so a service dripping a byte held the run
    for ever; and its answer was read whole, so one sending blanks without end took the run to 13 GB.
    Now the call has one deadline and its answer the run's size cap, as a provider's does."""
    with _Service(mode) as service:
        bp = write(tmp_path / "c.weval.yml", f"""models: [openai:candidate]
---
- id: p
  prompt: Hi
  should:
    - $call: {{url: "http://127.0.0.1:{service.port}/score", timeout_ms: 1500, max_retries: 0}}
""")
        events = run_events(bp, options(tmp_path, env_for(smart)))
        cov = _coverage(tmp_path / "out", "p")
        pa = cov["pointAssessments"][0]
        assert "External service call failed" in pa.get("error", "")
        # a check not made lifts nothing: no score, no verdict
        scored = of_type(events, "scored")
        assert [(e.score, e.verdict) for e in scored] == [(None, None)] and "avgCoverageExtent" not in cov
        assert ("within 1.5 s" if mode == "drip" else "larger than") in pa["error"]
        if mode == "endless":
            assert service.closed.wait(30) and service.sent <= 16 * 1048576
