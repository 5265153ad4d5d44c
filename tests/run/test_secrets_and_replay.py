"""API keys never reach results, journal, cache or output; replay: re-scores without calling a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakeprovider import Reply
from run_records import records_of

from evalspec.cli import main

from .conftest import KEY, SmartFake, comparison, env_for, of_type, options, run_events, write

BP = """models: [openai:candidate]
---
- id: p1
  prompt: Hello there
  should: [$contains: Hello]
- id: p2
  prompt: Bye now
  should: [$contains: Hello]
"""


def test_keys_never_appear_anywhere(tmp_path: Path, smart: SmartFake, monkeypatch, capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    # The server echoes the key back in an error body, as some gateways do.
    smart.then(Reply.error(401, f"Incorrect API key provided: {KEY}"))
    bp = write(tmp_path / "s.weval.yml", BP)
    out = tmp_path / "out"
    assert main(["run", str(bp), "-o", str(out), "--concurrency", "1", "--cache", "--json"]) == 0
    assert main(["run", str(bp), "-o", str(out), "--concurrency", "1", "--cache"]) == 0
    captured = capsys.readouterr()
    assert "Incorrect API key provided: ***" in captured.out
    files = [f for f in out.rglob("*") if f.is_file()]
    assert any(f.name == "responses.jsonl" for f in files)  # the cache is there, and clean
    assert any(f.name.endswith(".run.db") for f in files)
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f
    assert KEY not in captured.out and KEY not in captured.err
    # The key did go to the provider, in the header only.
    assert smart.requests[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("source", ["comparison", "journal"])
def test_replay_rescores_without_calling_a_model(tmp_path: Path, smart: SmartFake, source: str) -> None:
    bp = write(tmp_path / "r.weval.yml", BP)
    run_events(bp, options(tmp_path, env_for(smart)))
    first = comparison(tmp_path / "out")
    if source == "comparison":
        results = next((tmp_path / "out").glob("live/blueprints/*/*_comparison.json"))
    else:
        results = next((tmp_path / "out").glob("live/blueprints/*/*.run.db"))
    smart.reset()
    # Change the rubric: the same answers, scored again against it.
    write(bp, BP.replace("[$contains: Hello]\n- id: p2", "[$contains: there]\n- id: p2"))
    events = run_events(bp, options(tmp_path, env_for(smart), models=[f"replay:{results}"],
                                    output=tmp_path / "again"))
    assert smart.count == 0
    assert all(e.replayed for e in of_type(events, "response"))
    again = comparison(tmp_path / "again")
    assert again["allFinalAssistantResponses"] == first["allFinalAssistantResponses"]
    scores = {p: row["openai:candidate[temp:0]"]["avgCoverageExtent"]
              for p, row in again["evaluationResults"]["llmCoverageScores"].items()}
    assert scores == {"p1": 1, "p2": 0}
    assert again["effectiveModels"] == ["openai:candidate[temp:0]"]


def test_replay_keeps_the_label_but_not_the_journal_of_its_source(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "r.weval.yml", BP)
    run_events(bp, options(tmp_path, env_for(smart)))
    [journal] = (tmp_path / "out").glob("live/blueprints/*/*.run.db")
    before = journal.read_bytes()
    for _ in range(2):
        run_events(bp, options(tmp_path, env_for(smart), models=[f"replay:{journal}"]))
    assert journal.read_bytes() == before
    assert not journal.with_name(journal.name.replace(".run.db", ".run.prev.db")).exists()
    [replay_journal] = journal.parent.glob("*.replay-*.run.db")
    assert replay_journal.name.startswith(journal.name.removesuffix(".run.db") + ".replay-")
    labels = {json.loads(p.read_text())["runLabel"] for p in journal.parent.glob("*_comparison.json")}
    assert len(labels) == 1


def test_replay_of_a_missing_file_is_a_usage_error(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "r.weval.yml", BP)
    assert main(["run", str(bp), "-m", f"replay:{tmp_path / 'nope.json'}"]) == 2
    assert "no such results file" in capsys.readouterr().err


def test_result_file_shapes(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "shape.weval.yml", """title: Shapes
description: Result files.
models: [openai:gpt-4o-mini]
system: Be brief.
---
- id: p1
  prompt: Hello there
  ideal: Hi!
  should: [$contains: Hello]
""")
    run_events(bp, options(tmp_path, env_for(smart), artefacts=True))
    sent = smart.chat_requests()[0]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."} and sent["temperature"] == 0
    folder = tmp_path / "out" / "live" / "blueprints" / "shape"
    main_file = next(folder.glob("*_comparison.json"))
    import re

    assert re.fullmatch(r"[0-9a-f]{16}_\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_comparison\.json", main_file.name)
    data = json.loads(main_file.read_text())
    for key in ("configId", "configTitle", "runLabel", "timestamp", "config", "evalMethodsUsed", "effectiveModels",
                "modelSystemPrompts", "promptIds", "promptContexts", "allFinalAssistantResponses",
                "fullConversationHistories", "evaluationResults"):
        assert key in data, key
    assert data["configId"] == "shape" and data["timestamp"] in main_file.name
    assert data["effectiveModels"] == ["IDEAL_BENCHMARK", "openai:gpt-4o-mini[temp:0]"]
    assert data["modelSystemPrompts"] == {"openai:gpt-4o-mini[temp:0]": "Be brief."}
    assert data["promptContexts"]["p1"] == [{"role": "user", "content": "Hello there"}]
    history = data["fullConversationHistories"]["p1"]["openai:gpt-4o-mini[temp:0]"]
    assert history == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"},
                       {"role": "assistant", "content": "ECHO: Hello there"}]
    run_dir = folder / main_file.name.removesuffix("_comparison.json")
    safe = "openai_gpt-4o-mini_temp_0_.json"
    assert json.loads((run_dir / "responses" / "p1.json").read_text()) == {
        "IDEAL_BENCHMARK": "Hi!", "openai:gpt-4o-mini[temp:0]": "ECHO: Hello there"}
    assert json.loads((run_dir / "coverage" / "p1" / safe).read_text())["avgCoverageExtent"] == 1
    assert json.loads((run_dir / "histories" / "p1" / safe).read_text()) == {"history": history}
    core = json.loads((run_dir / "core.json").read_text())
    assert core["allFinalAssistantResponses"] == {"p1": {"IDEAL_BENCHMARK": None, "openai:gpt-4o-mini[temp:0]": None}}
    assert core["config"]["prompts"] == [{"id": "p1"}]
    assert core["evaluationResults"]["llmCoverageScores"]["p1"]["openai:gpt-4o-mini[temp:0]"]["pointAssessments"][0] \
        == {"coverageExtent": 1.0, "multiplier": 1.0, "isInverted": False}
    # The journal stays beside the results, finished.
    journal = records_of(folder / f"{data['runLabel']}.run.db")
    assert journal[0]["t"] == "run" and journal[-1] == {"t": "done"}


@pytest.mark.parametrize("kind", ["weval", "agentv"])
def test_replay_of_a_file_nested_thousands_deep_is_a_plan_error(tmp_path: Path, kind: str) -> None:
    """A replayed comparison file (from someone else's output folder) of `[[[[…` raised RecursionError
    through `run` (a traceback); it is a replay error naming the file, like any unreadable one."""
    from evalspec.run.plan.error import PlanError
    from evalspec.run.plan.replay import ReplaySource

    path = tmp_path / "x_comparison.json"
    path.write_text('{"allFinalAssistantResponses": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(PlanError, match="replay: "):
        ReplaySource.load(str(path), kind)
