"""`-m replay:<results file>` on AgentV suites: earlier answers scored again, no target called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main

from .conftest import AGENTV_TARGETS, SmartFake, env_for, of_type, options, run_events, write

TARGETS = AGENTV_TARGETS + """  - name: broken
    provider: openai
    model: never
    api_key: ${{ MISSING_REPLAY_KEY }}
"""

SUITE = """name: replayed
description: Replay.
execution:
  target: default
tests:
  - id: greet
    input: hello world
    criteria: c
    assert:
      - {type: contains, value: hello, required: true}
      - {type: contains, value: foo}
  - id: bye
    input: goodbye
    criteria: c
    assert:
      - {type: contains, value: goodbye}
      - {type: regex, value: "^ECHO: good"}
      - {type: token-usage, max_output: 100}
  - id: broken
    input: hello
    criteria: c
    execution: {target: broken}
    assert: [{type: contains, value: hello}]
"""

JUDGED = """  - id: judged
    input: Explain quicksort.
    criteria: Explains quicksort
    assert:
      - type: rubrics
        criteria: [Mentions partitioning, Mentions complexity]
"""

BROKEN_ERROR = "Environment variable 'MISSING_REPLAY_KEY' required for broken api key is not set"


def _suite(tmp_path: Path, body: str = SUITE) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", TARGETS)
    return write(tmp_path / "evals" / "s.eval.yaml", body)


def _results(out: Path) -> Path:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    assert len(files) == 1, files
    return files[0]


def _journal(out: Path) -> Path:
    files = sorted(out.glob("agentv/*/*.journal.jsonl"))
    assert len(files) == 1, files
    return files[0]


def _rows(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["test_id"], r["target"]): r for r in map(json.loads, _results(out).read_text().splitlines())}


def _source(out: Path, kind: str) -> Path:
    return _results(out) if kind == "results" else _journal(out)


def _grader(req: dict[str, Any]) -> str | None:
    if req.get("model") != "grader-model":
        return None
    return json.dumps({"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "yes"},
                                  {"id": "rubric-2", "satisfied": True, "reasoning": "yes"}],
                       "overall_reasoning": "both"})


def _plan(path: Path, opts: Any) -> Any:
    from evalspec.analysis import analyze_file
    from evalspec.run.runner import plan_for

    return plan_for(analyze_file(path), opts)


@pytest.mark.parametrize("kind", ["results", "journal"])
def test_replay_rescores_recorded_answers_without_calling_targets(tmp_path: Path, smart: SmartFake,
                                                                  kind: str) -> None:
    suite = _suite(tmp_path)
    run_events(suite, options(tmp_path, env_for(smart)))
    first = _rows(tmp_path / "out")
    assert first[("greet", "default")]["answer"] == "ECHO: hello world"  # the target really answered
    assert first[("broken", "broken")]["error"] == BROKEN_ERROR
    source = _source(tmp_path / "out", kind)
    smart.reset()

    events = run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"],
                                       output=tmp_path / "again"))
    assert smart.count == 0  # no target (and, with no judged assertion, no judge) was asked anything
    again = _rows(tmp_path / "again")
    assert set(again) == set(first)
    for cell, row in first.items():
        for key in ("answer", "target", "score", "verdict", "scores", "hits", "misses", "execution_status", "error",
                    "token_usage"):
            assert again[cell][key] == row[key], (cell, key)
    assert again[("bye", "default")]["scores"][2]["type"] == "token-usage"  # scored from the recorded usage
    assert again[("bye", "default")]["token_usage"]["output"] > 0
    responses = of_type(events, "response")
    assert sorted(e.cell.item for e in responses) == ["bye", "greet"] and all(e.replayed for e in responses)
    [failed] = of_type(events, "cell_failed")
    assert (failed.cell.item, failed.cell.model, failed.error) == ("broken", "broken", BROKEN_ERROR)
    started = of_type(events, "run_started")[0].plan
    assert started["replay"] == str(source)
    assert started["run_label"] != _journal(tmp_path / "out").name.split(".")[0]
    assert of_type(events, "run_finished")[0].summary.calls == 0


def test_replay_scores_the_current_assertions(tmp_path: Path, smart: SmartFake) -> None:
    suite = _suite(tmp_path)
    run_events(suite, options(tmp_path, env_for(smart)))
    source = _results(tmp_path / "out")
    smart.reset()
    # The same answers against a changed check: the new check decides the score, not the recorded one.
    write(suite, SUITE.replace("{type: contains, value: foo}", "{type: contains, value: world}"))
    events = run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"],
                                       output=tmp_path / "again"))
    assert smart.count == 0
    scores = {e.cell.item: (e.score, e.verdict) for e in of_type(events, "scored")}
    assert scores["greet"] == (1.0, "pass")
    assert _rows(tmp_path / "out")[("greet", "default")]["score"] == 0.5


def test_replay_into_the_same_folder_keeps_the_recorded_journal(tmp_path: Path, smart: SmartFake) -> None:
    suite = _suite(tmp_path)
    run_events(suite, options(tmp_path, env_for(smart)))
    journal = _journal(tmp_path / "out")
    before = journal.read_bytes()
    run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{journal}"]))
    # The replay has a label of its own, so it neither overwrote nor pushed aside the journal it read.
    assert journal.read_bytes() == before
    assert not list((tmp_path / "out").glob("agentv/*/*.prev.jsonl"))
    assert len(list((tmp_path / "out").glob("agentv/*/*.journal.jsonl"))) == 2


@pytest.mark.parametrize("kind", ["results", "journal"])
def test_judged_assertions_still_ask_the_judge_target(tmp_path: Path, smart: SmartFake, kind: str) -> None:
    smart.decide = _grader
    suite = _suite(tmp_path, SUITE + JUDGED)
    run_events(suite, options(tmp_path, env_for(smart)))
    assert _rows(tmp_path / "out")[("judged", "default")]["score"] == 1.0
    source = _source(tmp_path / "out", kind)
    smart.reset()
    events = run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"],
                                       output=tmp_path / "again"))
    asked = [r["model"] for r in smart.chat_requests()]
    assert asked == ["grader-model"]  # the judge of the recorded target, once; never the target
    assert "ECHO: Explain quicksort." in smart.chat_requests()[0]["messages"][-1]["content"]
    scored = {e.cell.item: e for e in of_type(events, "scored")}
    assert scored["judged"].score == 1.0
    assert of_type(events, "run_finished")[0].summary.calls == 1


def test_judge_for_a_target_not_in_targets_yaml_comes_from_judge_flag(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = _grader
    suite = _suite(tmp_path, SUITE + JUDGED)
    run_events(suite, options(tmp_path, env_for(smart), select=["judged"]))
    recorded = _results(tmp_path / "out")
    # The same answers under a target name targets.yaml does not have (renamed since, or another checkout).
    rows = [json.loads(line) | {"target": "retired"} for line in recorded.read_text().splitlines()]
    source = write(tmp_path / "retired.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    smart.reset()

    events = run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"],
                                       output=tmp_path / "nojudge"))
    [scored] = of_type(events, "scored")
    assert scored.cell.model == "retired"
    assert scored.score is None and scored.details["scores"][0]["reasoning"].startswith("not scored: no judge")
    assert smart.count == 0

    events = run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"],
                                       judges=["openai:grader-model"], output=tmp_path / "judged"))
    [scored] = of_type(events, "scored")
    assert (scored.cell.model, scored.score) == ("retired", 1.0)
    assert [r["model"] for r in smart.chat_requests()] == ["grader-model"]


def test_selection_missing_answers_and_foreign_rows(tmp_path: Path, smart: SmartFake) -> None:
    suite = _suite(tmp_path)
    run_events(suite, options(tmp_path, env_for(smart), select=["greet"]))
    recorded = _results(tmp_path / "out")
    # A row of a test this suite does not have: ignored, not an error and not a cell.
    foreign = {**json.loads(recorded.read_text().splitlines()[0]), "test_id": "elsewhere"}
    source = write(tmp_path / "mixed.jsonl", recorded.read_text() + json.dumps(foreign) + "\n")
    smart.reset()

    events = run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"],
                                       output=tmp_path / "all"))
    assert [e.cell for e in of_type(events, "scored")] == [("greet", "default")]
    warnings = [e.message for e in of_type(events, "notice") if e.level == "warning"]
    assert any("2 selected test(s) have no answer" in w for w in warnings), warnings
    assert smart.count == 0

    plan = _plan(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"], select=["gr*", "bye"]))
    assert [t.cell for t in plan.tasks] == [("greet", "default")]
    assert any("1 selected test(s) have no answer" in w for w in plan.warnings)

    from evalspec.run.runner import PlanError

    with pytest.raises(PlanError, match="holds no answers for the selected tests"):
        _plan(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"], select=["bye"]))


def test_test_selection_applies_to_replayed_cells(tmp_path: Path, smart: SmartFake) -> None:
    suite = _suite(tmp_path)
    run_events(suite, options(tmp_path, env_for(smart)))
    source = _journal(tmp_path / "out")
    smart.reset()
    events = run_events(suite, options(tmp_path, env_for(smart), models=[f"replay:{source}"], select=["b*"],
                                       output=tmp_path / "again"))
    assert sorted(e.cell for e in of_type(events, "scored")) == [("bye", "default")]
    assert [e.cell for e in of_type(events, "cell_failed")] == [("broken", "broken")]
    assert not [e for e in of_type(events, "notice") if "no answer" in e.message]
    assert smart.count == 0


def _weval_files(tmp_path: Path, smart: SmartFake) -> tuple[Path, Path, Path]:
    bp = write(tmp_path / "w.weval.yml", "models: [echo]\n---\n- id: p1\n  prompt: Hello\n  should: [$contains: Hello]\n")
    run_events(bp, options(tmp_path, env_for(smart), output=tmp_path / "wout"))
    comparison = next((tmp_path / "wout").glob("live/blueprints/*/*_comparison.json"))
    journal = next((tmp_path / "wout").glob("live/blueprints/*/*.journal.jsonl"))
    return bp, comparison, journal


def test_bad_sources_are_plan_errors(tmp_path: Path, smart: SmartFake) -> None:
    from evalspec.run.runner import PlanError

    suite = _suite(tmp_path)
    run_events(suite, options(tmp_path, env_for(smart)))
    bp, comparison, weval_journal = _weval_files(tmp_path, smart)
    junk = write(tmp_path / "junk.jsonl", '{"hello": 1}\nnot json\n')
    empty = write(tmp_path / "empty.jsonl", "")

    def error(path: Path, *more: str, file: Path = suite) -> str:
        with pytest.raises(PlanError) as info:
            _plan(file, options(tmp_path, env_for(smart), models=[f"replay:{path}", *more]))
        return str(info.value)

    assert "no such results file" in error(tmp_path / "nope.jsonl")
    assert "is a Weval comparison file; an AgentV suite replays" in error(comparison)
    assert "is a Weval run journal; an AgentV suite replays" in error(weval_journal)
    assert "neither an AgentV results file nor an evalspec AgentV run journal" in error(junk)
    assert "neither an AgentV results file" in error(empty)
    assert "give it alone" in error(_results(tmp_path / "out"), "default")
    # The other way round: AgentV files given to a Weval blueprint say what they are.
    assert "is an AgentV results file; a Weval blueprint replays" in error(_results(tmp_path / "out"), file=bp)
    assert "is an AgentV run journal; a Weval blueprint replays" in error(_journal(tmp_path / "out"), file=bp)


def test_cli_replay_exit_codes_and_dry_run(tmp_path: Path, smart: SmartFake, monkeypatch, capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    suite = _suite(tmp_path)
    # The broken target's key is missing: the run is refused before any call, unless --keep-going.
    assert main(["run", str(suite), "-o", str(tmp_path / "out")]) == 2
    assert "target broken: " + BROKEN_ERROR in capsys.readouterr().err and smart.count == 0
    assert main(["run", str(suite), "-o", str(tmp_path / "out"), "--keep-going"]) == 0
    results = _results(tmp_path / "out")
    _, comparison, _ = _weval_files(tmp_path, smart)
    capsys.readouterr()
    smart.reset()

    assert main(["run", str(suite), "-m", f"replay:{results}", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"answers replayed from {results}" in out
    assert "total: 0 call(s)" in out
    assert main(["run", str(suite), "-m", f"replay:{results}", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["replay"] == str(results) and plan["calls"] == 0
    assert plan["problems"] == []  # the broken target is not called, so its missing key is no problem

    assert main(["run", str(suite), "-m", f"replay:{results}", "-o", str(tmp_path / "again")]) == 0
    assert "broken" in capsys.readouterr().out
    assert smart.count == 0
    assert _rows(tmp_path / "again")[("greet", "default")]["score"] == 0.5

    assert main(["run", str(suite), "-m", f"replay:{tmp_path / 'nope.jsonl'}"]) == 2
    assert "no such results file" in capsys.readouterr().err
    assert main(["run", str(suite), "-m", f"replay:{comparison}"]) == 2
    assert "is a Weval comparison file" in capsys.readouterr().err
    assert main(["run", str(suite), "-m", f"replay:{results}", "--fail-under", "0.9",
                 "-o", str(tmp_path / "third")]) == 1
