"""Failed points and assertions at their own lines, and earlier runs read back from their journals."""

from __future__ import annotations

import os
from pathlib import Path

from evalspec.analysis import analyze
from evalspec.ide.run_history import load_history
from evalspec.ide.run_notes import FAILED, NO_ANSWER, NOT_SCORED, point_markdown, run_notes
from evalspec.ide.runs import RunBoard, run_items
from evalspec.run.events import Cell, CellFailed, Scored

BLUEPRINT = """\
title: T
models: [echo]
---
- id: p1
  prompt: Hi
  should:
    - $contains: hi
    - is friendly
- id: p2
  prompt: Bye
  should:
    - $contains: bye
"""

AGENTV = """\
# evalspec: agentv
tests:
  - id: t1
    input: hi
    assert:
      - type: contains
        value: hello
      - type: regex
        value: "^h"
"""


def weval_result(*points: tuple[float | None, str, str]) -> dict:
    return {"pointAssessments": [
        {"keyPointText": text, "coverageExtent": score, "reflection": why} | ({} if score is not None else
                                                                             {"error": why})
        for score, text, why in points]}


def test_weval_points_that_failed_or_were_not_scored_are_noted_at_their_lines() -> None:
    analysis = analyze(BLUEPRINT, "t.weval.yml")
    board = RunBoard()
    board.start(run_items(analysis), None)
    board.apply(Scored(Cell("p1", "echo"), 0.0, "fail", weval_result(
        (0.0, 'Function: contains("hi")', "Function 'contains' evaluated to 0.00."),
        (None, "is friendly", "Not scored: no judge is configured"))))
    board.apply(CellFailed(Cell("p2", "echo"), "HTTP 500 from openai"))
    notes = run_notes(analysis, board)
    assert [(n.span.start_line, n.code) for n in notes] == [(6, FAILED), (7, NOT_SCORED), (8, NO_ANSWER)]
    assert notes[0].message == "$contains failed on echo: 0.00: Function 'contains' evaluated to 0.00."
    assert notes[1].message == "is friendly not scored on echo: Not scored: no judge is configured"
    assert "HTTP 500" in notes[2].message
    assert point_markdown(analysis, board, 6) == (
        "**Last run** of `$contains` in `p1`\n\n- **echo**: 0.00: Function 'contains' evaluated to 0.00.")
    # The prompt edited: its notes go (its result no longer describes the text); the other's stay.
    edited = analyze(BLUEPRINT.replace("prompt: Hi", "prompt: Hello"), "t.weval.yml")
    assert [n.code for n in run_notes(edited, board)] == [NO_ANSWER]


def test_agentv_assertions_are_noted_at_their_lines() -> None:
    analysis = analyze(AGENTV, "suite.eval.yaml")
    board = RunBoard()
    board.start(run_items(analysis), None)
    board.apply(Scored(Cell("t1", "echo"), 0.5, "fail", {"scores": [
        {"name": "contains-hello", "type": "contains", "score": 0.0, "verdict": "fail", "reasoning": "no 'hello'"},
        {"name": "regex-^h", "type": "regex", "score": 1.0, "verdict": "pass"}]}))
    [note] = run_notes(analysis, board)
    assert note.span.start_line == 5 and note.code == FAILED
    assert note.message == "contains-hello failed on echo: 0.00: no 'hello'"  # AgentV's auto-name


def write_journal(folder: Path, name: str, lines: list[str], mtime: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (mtime, mtime))


def test_history_keeps_the_newest_run_of_each_item(tmp_path: Path) -> None:
    blueprint = tmp_path / "t.weval.yml"
    blueprint.write_text(BLUEPRINT)
    folder = tmp_path / "out" / "live" / "blueprints" / "t"
    head = f'"kind":"weval","file":"t.weval.yml","path":"{blueprint}","run_label":"L"'
    write_journal(folder, "A.journal.jsonl", [
        f'{{"t":"run",{head},"started":"2026-01-01T00:00:00.000Z","select":[],"fp":{{"p1":"x"}}}}',
        '{"t":"gen","c":["p1","echo"],"n":0,"text":"Hi"}',
        '{"t":"score","c":["p1","echo"],"s":1.0,"v":"pass","r":{}}',
        '{"t":"fail","c":["p2","echo"],"error":"boom"}',
        '{"t":"done"}'], 1000.0)
    write_journal(folder, "B.journal.jsonl", [
        f'{{"t":"run",{head},"started":"2026-01-02T00:00:00.000Z","select":["p2"]}}',
        '{"t":"score","c":["p2","echo"],"s":0.0,"v":"fail","r":{}}',
        '{"t":"done"}'], 2000.0)
    write_journal(folder, "other.journal.jsonl", [
        '{"t":"run","kind":"weval","path":"/elsewhere/x.weval.yml","run_label":"X"}',
        '{"t":"score","c":["p1","echo"],"s":0.0,"v":"fail","r":{}}'], 3000.0)
    history = load_history(tmp_path / "out", blueprint)
    assert history.results["p1"]["echo"].score == 1.0 and history.results["p1"]["echo"].answer == "Hi"
    assert history.results["p2"]["echo"].score == 0.0  # the newer one-prompt run replaced the failure
    assert history.results["p2"]["echo"].when == 2000.0
    assert history.fingerprints == {"p1": "x"}
    # The newest run's summary, one prompt's too: what the editor showed when that run ended (issue 29)
    assert history.summary is not None and history.summary_when == 2000.0 and history.summary.mean == 0.0
    board = RunBoard()
    board.restore(history)
    items = run_items(analyze(BLUEPRINT, "t.weval.yml"))
    assert board.item_title(items[2], now=2000.0 + 7200) == "✗ 0.00 echo (2 h ago)"
    assert board.item_title(items[1], now=2000.0).endswith("(text changed since)")  # fingerprint "x" is not its text


def test_a_judged_point_shows_the_judges_own_reason() -> None:
    analysis = analyze(BLUEPRINT, "t.weval.yml")
    board = RunBoard()
    board.start(run_items(analysis), "p1")
    board.apply(Scored(Cell("p1", "echo"), 0.7, "borderline", {"pointAssessments": [
        {"keyPointText": 'Function: contains("hi")', "coverageExtent": 1.0, "reflection": "ok"},
        {"keyPointText": "is friendly", "coverageExtent": 0.75,
         "reflection": "Consensus from 1 judge(s). Average score: 0.75. See breakdown for individual reflections.",
         "individualJudgements": [{"judgeModelId": "holistic(openai:gpt-4o-mini)", "coverageExtent": 0.75,
                                   "reflection": "Friendly, but curt."}]}]}))
    [note] = run_notes(analysis, board)
    assert note.span.start_line == 7
    assert note.message == "is friendly borderline on echo: 0.75: Friendly, but curt."


def test_a_comparison_file_without_a_journal_is_read_too(tmp_path: Path) -> None:
    import json

    blueprint = tmp_path / "t.weval.yml"
    blueprint.write_text(BLUEPRINT)
    folder = tmp_path / "out" / "live" / "blueprints" / "t"
    folder.mkdir(parents=True)
    comparison = {
        "configId": "t", "runLabel": "abc", "timestamp": "2026-01-01T00-00-00-000Z",
        "sourceBlueprintFileName": "t.weval.yml", "promptIds": ["p1", "p2"],
        "allFinalAssistantResponses": {"p1": {"m[temp:0]": "hi there", "IDEAL_BENCHMARK": "x"},
                                       "p2": {"m[temp:0]": "<<error>>boom<</error>>"}},
        "errors": {"p2": {"m[temp:0]": "boom"}},
        "evaluationResults": {"llmCoverageScores": {"p1": {"m[temp:0]": {
            "avgCoverageExtent": 1.0, "pointAssessments": [{"keyPointText": "x", "coverageExtent": 1.0}]}}}},
    }
    (folder / "abc_2026-01-01T00-00-00-000Z_comparison.json").write_text(json.dumps(comparison, indent=2))
    other = dict(comparison, sourceBlueprintFileName="other.yml")
    (folder / "def_2026-01-01T00-00-00-000Z_comparison.json").write_text(json.dumps(other))
    history = load_history(tmp_path / "out", blueprint)
    assert set(history.results) == {"p1", "p2"}
    assert history.results["p1"]["m[temp:0]"].score == 1.0 and history.results["p1"]["m[temp:0]"].verdict == "pass"
    assert history.results["p1"]["m[temp:0]"].answer == "hi there"
    assert history.results["p2"]["m[temp:0]"].error == "boom"
    assert history.files == [str(folder / "abc_2026-01-01T00-00-00-000Z_comparison.json")]
    # With its journal beside it, the journal speaks for that run label and the file is not read.
    (folder / "abc.journal.jsonl").write_text('{"t":"run","kind":"weval","path":"/elsewhere.yml"}\n')
    assert load_history(tmp_path / "out", blueprint).results == {}


def test_a_command_line_run_of_a_cr_only_file_is_current_in_the_editor(tmp_path: Path) -> None:
    """A file saved with bare CR line ends, run from the command line, then opened in the editor: its items'
    results are shown as current. The command line read the file at "\\n" only and the editor at CR too, so
    every item's fingerprint differed and each result said "(text changed since)"."""
    from evalspec.cli import main
    from evalspec.incremental import DocumentAnalyzer

    raw = BLUEPRINT.replace("\n", "\r")
    blueprint = tmp_path / "t.weval.yml"
    blueprint.write_bytes(raw.encode())
    assert main(["run", str(blueprint), "-o", str(tmp_path / "out"), "--no-cache"]) in (0, 1)
    history = load_history(tmp_path / "out", blueprint)
    assert set(history.fingerprints) == {"p1", "p2"}
    board = RunBoard()
    board.restore(history)
    items = run_items(DocumentAnalyzer(blueprint).analyze(raw))  # as the language server analyses the document
    titles = [board.item_title(item, now=history.summary_when or 0.0) for item in items if item.kind == "prompt"]
    assert len(titles) == 2 and all(t and "echo" in t and "changed since" not in t for t in titles), titles
