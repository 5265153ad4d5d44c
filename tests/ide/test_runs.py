"""Runs seen from the editor: the items a lens can run, and the board that turns run events into lens
titles and hover text."""

from __future__ import annotations

from evalspec.analysis import analyze
from evalspec.ide.runs import RunBoard, item_at_line, run_items
from evalspec.run.events import (
    CallStarted,
    Cell,
    CellFailed,
    ModelSummary,
    Response,
    Retrying,
    RunFinished,
    RunStarted,
    RunSummary,
    Scored,
)

BLUEPRINT = """\
title: T
models: [openai:a]
---
- id: p1
  prompt: Hi
  should:
    - $contains: hi
- prompt: No id here
  should:
    - is polite
"""

AGENTV = """\
# evalspec: agentv
tests:
  - id: t1
    input: hi
    criteria: greets
  - id: t2
    input: bye
    criteria: waves
"""


def test_weval_items_are_the_suite_then_each_prompt_on_its_first_line() -> None:
    analysis = analyze(BLUEPRINT, "t.weval.yml")
    items = run_items(analysis)
    assert [(i.kind, i.span.start_line) for i in items] == [("suite", 0), ("prompt", 3), ("prompt", 7)]
    assert items[1].item_id == "p1"
    assert items[2].item_id == analysis.blueprint.prompts[1].id  # the generated id the runner uses
    assert items[1].fingerprint != items[2].fingerprint
    # What a hover on a line asks: the item whose lens sits there, if any.
    assert [item_at_line(analysis, line) for line in (0, 3, 4, 7)] == [None, "p1", None, items[2].item_id]


def test_agentv_items_are_the_suite_then_each_test() -> None:
    items = run_items(analyze(AGENTV, "t.eval.yaml"))
    assert [(i.kind, i.item_id, i.span.start_line) for i in items] == [
        ("suite", None, 1), ("test", "t1", 2), ("test", "t2", 5)]


def test_files_that_are_not_suites_have_nothing_to_run() -> None:
    assert run_items(analyze("services:\n  web: {image: x}\n", "compose.yml")) == []


def _summary(**kw) -> RunSummary:
    return RunSummary(kind="weval", run_label="L", models=(ModelSummary("a", **kw),))


def test_the_board_follows_a_run() -> None:
    items = run_items(analyze(BLUEPRINT, "t.weval.yml"))
    p1 = items[1]
    board = RunBoard()
    board.start(items, None)
    board.apply(RunStarted({"run_label": "L", "cells": 2}))
    assert board.suite_title() == "running: 0/2 done"
    board.apply(CallStarted(Cell("p1", "a")))
    assert board.item_title(p1) == "running…"
    board.apply(Retrying(Cell("p1", "a"), 1, 2.0, "429"))
    assert board.item_title(p1) == "running… (429, retrying in 2.0 s)"
    board.apply(Response(Cell("p1", "a"), "hi there"))
    board.apply(Scored(Cell("p1", "a"), 1.0, "pass", {"pointAssessments": [
        {"keyPointText": 'Function: contains("hi")', "coverageExtent": 1}]}))
    board.apply(CellFailed(Cell(items[2].item_id, "a"), "HTTP 500 from openai"))
    assert board.item_title(p1) == "✓ 1.00 a"
    assert board.item_title(items[2]) == "⚠ error a"
    board.apply(RunFinished(_summary(cells=2, scored=1, mean=1.0, passed=1, errors=1)))
    assert not board.running
    assert board.suite_title() == "last run: mean 1.00 · 1 pass · 0 fail · 1 error(s)"
    hover = board.item_markdown("p1")
    assert hover is not None
    assert "**a**: ✓ 1.00 (pass)" in hover and '- 1.00 Function: contains("hi")' in hover and "hi there" in hover
    assert "HTTP 500" in (board.item_markdown(items[2].item_id) or "")


def test_many_models_are_counted_and_edits_make_results_older() -> None:
    items = run_items(analyze(BLUEPRINT, "t.weval.yml"))
    board = RunBoard()
    board.start(items, "p1")
    for i, (score, verdict) in enumerate([(1.0, "pass"), (0.7, "borderline"), (0.2, "fail"), (0.9, "pass")]):
        board.apply(Scored(Cell("p1", f"m{i}"), score, verdict, {}))
    assert board.item_title(items[1]) == "4 models: mean 0.70 · 2 pass · 1 fail"
    edited = run_items(analyze(BLUEPRINT.replace("prompt: Hi", "prompt: Hello"), "t.weval.yml"))
    assert board.item_title(edited[1]).endswith("(text changed since)")
    assert not board.item_title(items[1]).endswith("(text changed since)")


def test_a_one_prompt_run_keeps_the_other_prompts_results() -> None:
    items = run_items(analyze(BLUEPRINT, "t.weval.yml"))
    other = items[2].item_id
    board = RunBoard()
    board.start(items, None)
    board.apply(Scored(Cell("p1", "a"), 1.0, "pass", {}))
    board.apply(Scored(Cell(other, "a"), 0.0, "fail", {}))
    board.apply(RunFinished(_summary()))
    board.start(items, "p1")
    assert board.item_title(items[1]) is None  # about to be replaced
    assert board.item_title(items[2]) == "✗ 0.00 a"
    board.stop(interrupted=True)
    assert board.interrupted and not board.running


def test_a_cancelled_run_marks_calls_in_flight_and_keeps_a_summary() -> None:
    items = run_items(analyze(BLUEPRINT, "t.weval.yml"))
    other = items[2].item_id
    board = RunBoard()
    board.start(items, None)
    board.apply(RunStarted({"run_label": "L", "cells": 2}))
    board.apply(Scored(Cell("p1", "a"), 1.0, "pass", {}))
    board.apply(CallStarted(Cell(other, "a")))
    board.stop(cancelled=True)
    assert board.item_title(items[2]) == "⊘ cancelled a"
    assert board.suite_title() == "cancelled: mean 1.00 · 1 pass · 0 fail"
    assert board.item_title(items[1]) == "✓ 1.00 a"


def test_renamed_ids_keep_their_results_and_later_events_follow() -> None:
    items = run_items(analyze(BLUEPRINT, "t.weval.yml"))
    board = RunBoard()
    board.start(items, None)
    board.apply(CallStarted(Cell("p1", "a")))
    renamed = run_items(analyze(BLUEPRINT.replace("id: p1", "id: first"), "t.weval.yml"))
    board.follow(items, renamed)
    board.apply(Scored(Cell("p1", "a"), 0.0, "fail", {}))  # the runner still says p1
    assert board.item_title(renamed[1]) == "✗ 0.00 a (text changed since)"
    assert "p1" not in board.results


def test_ages_read_like_a_person_says_them() -> None:
    from evalspec.ide.runs import age

    assert age(1000.0, 1030.0) == "just now"
    assert age(1000.0, 1000.0 + 5 * 60) == "5 min ago"
    assert age(1000.0, 1000.0 + 3 * 3600) == "3 h ago"
    assert age(1000.0, 1000.0 + 86400) == "1 day ago"


def test_events_read_back_from_their_json_feed_the_board_alike() -> None:
    """A run in its own process (engine/ide/run_process.py) sends its events as `to_json()` lines: read
    back, each is the event it was, and a board fed the JSON ends as one fed the events."""
    import json

    from evalspec.run.events import BatchProgress, Notice, RateLimit, from_json

    cell = Cell("p1", "a")
    summary = RunSummary(kind="weval", run_label="L", files=("r.json",), notes=("n",), cost={"usd": 0.1},
                         models=(ModelSummary("a", cells=2, scored=1, mean=0.5, passed=1, errors=1),))
    events = [RunStarted({"run_label": "L", "cells": 2, "journal": "/x/L.run.db"}), CallStarted(cell),
              Retrying(cell, 1, 2.0, "429"), RateLimit("openai", "429", 2, 4, 4, wait=1.5, throttled=2),
              Response(cell, "hi", usage=(3, 4), cached=True), Notice("no judge key", "warning"),
              BatchProgress(({"model": "a", "state": "in_progress"},)),
              Scored(cell, 1.0, "pass", {"pointAssessments": [{"coverageExtent": 1}]}),
              CellFailed(Cell("p2", "a"), "HTTP 500"), RunFinished(summary)]
    direct, from_lines = RunBoard(), RunBoard()
    for event in events:
        data = json.loads(json.dumps(event.to_json()))
        assert from_json(data) == event
        direct.apply(event)
        assert from_lines.apply_json(data) == event
    assert from_lines == direct and from_lines.summary == summary and from_lines.journal == "/x/L.run.db"
    assert from_json({"type": "stopped", "files": []}) is None  # not an event: the process's last word
    assert from_lines.apply_json({"type": "something new"}) is None and from_lines == direct
