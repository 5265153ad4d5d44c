"""An AgentV run's bookkeeping in a few bytes a cell: the plan's tasks (plan/agentv.AgentvTasks: a test's
and a target's position, the task made when read), the rows (write/agentv.py: the bytes appended, in a
temporary file, 8 bytes a cell in memory) and how each cell ended (write/agentv_outcomes.py). What a run
writes and says must be what it was when each cell was an object: the cells in the same order on the
same targets and judges, and the results file byte for byte the rows the journal recorded, in the
plan's order, whatever order the cells finished in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalspec.agentv import test_store
from evalspec.analysis import analyze_file
from evalspec.jsonio import dumps_bytes
from evalspec.run.events import Cell
from evalspec.run.plan.agentv import AgentvTask
from evalspec.run.plan.shard import Shard
from evalspec.run.runner import plan_for
from evalspec.run.write import agentv as agentv_writer
from tests.fakeprovider import Reply
from tests.run_records import databases, records_of

from .conftest import AGENTV_TARGETS, SmartFake, env_for, of_type, options, run_events, write

TARGETS = AGENTV_TARGETS + """  - name: other
    provider: openai
    model: other-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
"""
SUITE = ("name: compact\ndescription: Compact cells.\nexecution:\n  targets: [default, other]\ntests:\n" + "".join(
    f"  - id: t{i}\n    input: hello {i}\n    criteria: says {i}\n    assert:\n"
    f"      - {{type: contains, value: \"{i}\"}}\n      - {{type: word_count, max: 3}}\n" for i in range(7))
    + "  - id: own\n    input: own target\n    criteria: c\n    execution:\n      target: grader\n"
    "    assert:\n      - {type: contains, value: own}\n"
    + "  - id: judged\n    input: judged one\n    criteria: says judged\n")


def _suite(tmp_path: Path) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", TARGETS)
    return write(tmp_path / "evals" / "s.eval.yaml", SUITE)


def _expected(plan: Any) -> list[tuple[Cell, int, str, str | None, int]]:
    """The cells as the planner listed them when each was an AgentvTask: every test in order, on its own
    target or the suite's two; each target's judge its judge_target."""
    judges = {"default": "grader", "other": None, "grader": None}
    out = []
    for k, test in enumerate(plan.tests):
        for name in (["grader"] if test.id == "own" else ["default", "other"]):
            out.append((Cell(test.id, name), k, name, judges[name], len(out)))
    return out


def _seen(tasks: Any) -> list[tuple[Cell, int, str, str | None, int]]:
    return [(t.cell, t.index, t.target.name, t.judge.name if t.judge else None, t.position) for t in tasks]


@pytest.mark.parametrize("bound", [test_store.DEFAULT_BOUND, 1])
def test_the_tasks_read_like_the_list_they_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    bound: int) -> None:
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", bound)  # 1: the tests are in a store, on disk
    plan = plan_for(analyze_file(_suite(tmp_path)), options(tmp_path, {}))
    assert isinstance(plan.tests, test_store.TestStore) == (bound == 1)
    expected = _expected(plan)
    assert len(expected) == 17 and len(plan.tasks) == 17
    assert _seen(plan.tasks) == expected
    assert _seen([plan.tasks[-1], plan.tasks[3]]) == [expected[-1], expected[3]]
    assert _seen(plan.tasks[2:5]) == expected[2:5]
    for task in plan.tasks:
        assert task.test.id == task.cell.item  # the task reads its own test back
        assert task == AgentvTask(task.cell, plan.tests, task.index, task.target, task.judge)
    if bound == 1:  # the id is the store's own string, not a copy per cell
        assert all(t.cell.item is plan.tests.id_at(t.index) for t in plan.tasks)
    assert plan.tasks == list(plan.tasks) and plan.tasks != list(plan.tasks)[:-1]
    assert plan.summary()["cells"] == 17 and plan.summary()["per_model"]["other"]["cells"] == 8


MIXED = SUITE + (
    "  - id: gated\n    input: [{role: system, content: be brief}, {role: user, content: 'a longer question here'}]\n"
    "    criteria: c\n    assert:\n      - {type: llm-judge, prompt: 'grade {{answer}}'}\n"
    "      - {type: regex, value: '[a-z]+', required: true}\n"
    "  - id: scripted\n    input: run it\n    criteria: c\n    assert:\n"
    "      - {type: code-judge, command: 'echo 1', name: sh}\n"
    "  - id: grouped\n    input: both\n    criteria: c\n    assert:\n      - type: composite\n"
    "        assert: [{type: contains, value: a}, {type: equals, value: b}]\n"
    "        aggregator: {type: weighted_average}\n"
    "  - id: unknown\n    input: custom\n    criteria: c\n    assert:\n      - {type: my-own-check}\n" + "".join(
        f"  - id: plain{i}\n    input: [{{role: user, content: [{{type: text, value: 'plain {i}'}}]}}]\n"
        f"    assert:\n      - {{type: contains, value: '{i}', required: true}}\n      - {{type: latency, max_ms: 9}}\n"
        for i in range(3)))


@pytest.mark.parametrize("args", [{}, {"models": ["echo"]}, {"judges": ["echo"]}])
def test_the_plan_of_stored_tests_is_the_plan_of_the_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          args: dict[str, Any]) -> None:
    """Past the bound the plan reads back only the tests whose input is not all it needs (own targets,
    judges, scripts, composites, custom types); its summary, tasks and warnings are the list's."""
    write(tmp_path / ".agentv" / "targets.yaml", TARGETS)
    path = write(tmp_path / "evals" / "s.eval.yaml", MIXED)
    listed = plan_for(analyze_file(path), options(tmp_path, {}, **args))
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 1)
    decoded: list[str] = []
    decode = test_store._TestCodec.decode

    def counted(self: Any, data: bytes) -> Any:
        test = decode(self, data)
        decoded.append(test.id)
        return test

    monkeypatch.setattr(test_store._TestCodec, "decode", counted)
    stored = plan_for(analyze_file(path), options(tmp_path, {}, **args))
    assert isinstance(stored.tests, test_store.TestStore) and not isinstance(listed.tests, test_store.TestStore)
    # the tests of a custom type (word_count), an own target, judges, a script, a composite are read back
    assert decoded == [*(f"t{i}" for i in range(7)), "own", "judged", "gated", "scripted", "grouped", "unknown"]
    assert stored.summary() == listed.summary()
    assert stored.summary()["per_model"] and stored.facts() == listed.facts()
    assert _seen(stored.tasks) == _seen(listed.tasks) and stored.warnings == listed.warnings


@pytest.mark.parametrize("bound", [test_store.DEFAULT_BOUND, 1])
def test_a_shards_tasks_are_its_share_of_the_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   bound: int) -> None:
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", bound)
    suite = _suite(tmp_path)
    whole = _expected(plan_for(analyze_file(suite), options(tmp_path, {})))
    cells: list[Cell] = []
    for i in (1, 2, 3):
        plan = plan_for(analyze_file(suite), options(tmp_path, {}, shard=Shard(i, 3)))
        held = [c for c in whole if Shard(i, 3).holds(c[0].item)]
        # the shard's own tests and positions; the same cells, targets and judges, in the same order
        assert [(c, n, j) for c, _, n, j, _ in _seen(plan.tasks)] == [(c, n, j) for c, _, n, j, _ in held]
        assert [t.position for t in plan.tasks] == list(range(len(held)))
        assert all(t.test.id == t.cell.item and plan.tests[t.index].id == t.cell.item for t in plan.tasks)
        cells += [t.cell for t in plan.tasks]
    assert sorted(cells) == sorted(c[0] for c in whole)


def _decide(req: dict[str, Any]) -> Any:
    text = json.dumps(req.get("messages"))
    if "Is the answer" in text or ("says" in text and "grader" in str(req.get("model"))):
        return json.dumps({"score": 0.5, "hits": ["h"], "misses": ["m"], "reasoning": "half"})
    if "hello 3" in text and req.get("model") == "other-model":
        return Reply.error(400, "refused")  # a failed cell: its error row
    return f"answer {text[-20:]}"


def _journal_rows(out: Path) -> dict[Cell, bytes]:
    (journal,) = databases(out)
    rows = {}
    for rec in records_of(journal):
        if rec.get("t") == "score":
            rows[Cell(*rec["c"])] = dumps_bytes(rec["r"])
    return rows


@pytest.mark.parametrize("bound", [test_store.DEFAULT_BOUND, 1])
def test_the_results_file_is_the_journals_rows_in_the_plans_order(tmp_path: Path, smart: SmartFake,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    bound: int) -> None:
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", bound)
    # the export reads the rows a few cells at a time (write/agentv.py): blocks that end inside a test's cells
    monkeypatch.setattr(agentv_writer, "_BLOCK", 3)
    smart.decide = _decide
    suite = _suite(tmp_path)
    plan = plan_for(analyze_file(suite), options(tmp_path, {}))
    order = [t.cell for t in plan.tasks]
    files, summaries = [], []
    for concurrency in (1, 5):  # one at a time, then finishing out of order
        out = tmp_path / f"o{concurrency}"
        events = run_events(suite, options(tmp_path, env_for(smart), output=out, concurrency=concurrency))
        (results,) = [p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl")]
        journal = _journal_rows(out)
        assert set(journal) == set(order)
        assert results.read_bytes() == b"".join(journal[c] + b"\n" for c in order)
        files.append(results.read_bytes())
        (finished,) = of_type(events, "run_finished")
        summaries.append(finished.summary)
        rows = [json.loads(line) for line in results.read_bytes().splitlines()]
        # the summary counts what the rows say
        for m in finished.summary.models:
            mine = [r for r in rows if r["target"] == m.model]
            assert m.cells == len(mine)
            assert m.errors == sum(1 for r in mine if r["execution_status"] == "execution_error")
            assert m.passed == sum(1 for r in mine if r["verdict"] == "pass" and not r["error"])
            scored = [r["score"] for r in mine if r["score"] is not None and not r["error"]]
            assert m.scored == len(scored) and m.mean == (sum(scored) / len(scored) if scored else None)
        assert any(m.errors == 1 for m in finished.summary.models)
    masked = [_masked(f) for f in files]
    assert masked[0] == masked[1]
    assert summaries[0].models == summaries[1].models and summaries[0].notes == summaries[1].notes
    assert any("not scored" in n for n in summaries[0].notes)


def _masked(data: bytes) -> list[dict[str, Any]]:
    return [{k: v for k, v in json.loads(line).items() if k not in ("timestamp", "duration_ms", "latency_ms")}
            for line in data.splitlines()]
