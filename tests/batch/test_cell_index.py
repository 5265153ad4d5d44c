"""The per-cell numbers a run keeps to its end (scores, where results and batch answers wait on disk) are
arrays by the cell's place in the plan (run/plan/cell_index.py): they must behave as the dicts they
replace, for a plan laid out prompt by prompt and for one that is not (a replay's models differ per
prompt), and cost a few bytes a cell instead of a dict entry and an int."""

from __future__ import annotations

import random
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalspec.run.events import Cell
from evalspec.run.plan.cell_index import CellIndex, CellOffsets, CellScores


@dataclass(frozen=True)
class Task:
    cell: Cell


def regular(prompts: int, models: tuple[str, ...] = ("a[temp:0]", "b[temp:0]")) -> list[Task]:
    return [Task(Cell(f"p{i}", m)) for i in range(prompts) for m in models]


def irregular() -> list[Task]:
    # a replay: p1 has one model, p0 and p2 two, in another order for p2
    return [Task(Cell(*c)) for c in (("p0", "a"), ("p0", "b"), ("p1", "a"), ("p2", "b"), ("p2", "a"))]


@pytest.mark.parametrize("tasks", [regular(5), irregular(), regular(1, ("a",)), []],
                         ids=["regular", "irregular", "one", "empty"])
def test_every_cell_is_found_at_its_place_and_no_other(tasks: list[Task]) -> None:
    index = CellIndex(tasks)
    assert len(index) == len(tasks)
    for n, t in enumerate(tasks):
        assert index.get(t.cell) == n
        assert index.get((t.cell.item, t.cell.model)) == n  # a plain tuple is the same key
        assert index.cell(n) is t.cell
    for other in (Cell("p9", "a"), Cell("p0", "c"), Cell("p1", "b"), Cell("p0", "")):
        if other not in [t.cell for t in tasks]:
            assert index.get(other) is None


def test_a_plan_with_a_cell_twice_is_indexed_cell_by_cell() -> None:
    tasks = [Task(Cell("p0", "a")), Task(Cell("p1", "a")), Task(Cell("p0", "a"))]
    index = CellIndex(tasks)
    assert index.get(Cell("p1", "a")) == 1 and index.get(Cell("p0", "a")) in (0, 2)


@pytest.mark.parametrize("tasks", [regular(40), irregular()], ids=["regular", "irregular"])
def test_offsets_behave_as_a_dict(tasks: list[Task]) -> None:
    """Random sets, replacements, deletions and lookups, of the plan's cells and of cells it does not
    have (a key-point extraction's `Cell(prompt, "")`), against a dict."""
    rng = random.Random(7)
    keys = [t.cell for t in tasks] + [Cell(f"p{i}", "") for i in range(5)]
    offsets = CellOffsets(CellIndex(tasks))
    expected: dict[Cell, int] = {}
    for _ in range(3000):
        key = rng.choice(keys)
        op = rng.random()
        if op < 0.5:
            value = rng.choice([0, 1, 2**40 + 17, 2**63])  # 0 is a value, not "none"
            offsets[key] = value
            expected[key] = value
        elif op < 0.7:
            if key in expected:
                del offsets[key]
                del expected[key]
            else:
                with pytest.raises(KeyError):
                    del offsets[key]
        assert (key in offsets) == (key in expected)
        assert offsets.get(key, -1) == expected.get(key, -1)
        assert len(offsets) == len(expected)
    assert sorted(offsets) == sorted(expected)
    assert all(offsets[k] == v for k, v in expected.items())
    offsets.clear()
    assert len(offsets) == 0 and list(offsets) == [] and keys[0] not in offsets


def test_scores_keep_a_score_or_none_per_cell() -> None:
    tasks = regular(3)
    scores = CellScores(CellIndex(tasks))
    a, b, c = (t.cell for t in tasks[:3])
    assert a not in scores and len(scores) == 0
    with pytest.raises(KeyError):
        scores[a]
    scores[a] = 0.1 + 0.2  # kept exactly (a double)
    scores[b] = None
    assert scores[a] == 0.1 + 0.2 and scores[b] is None and a in scores and b in scores and c not in scores
    scores[b] = 1.0
    assert scores[b] == 1.0 and len(scores) == 2
    with pytest.raises(KeyError):
        scores[Cell("p9", "a[temp:0]")] = 0.5
    assert Cell("p9", "a[temp:0]") not in scores and "p0" not in scores


def test_per_cell_numbers_cost_bytes_not_a_dict_entry_each() -> None:
    """200,000 cells (100,000 prompts × 2 models): the index is per prompt, and the scores and offsets
    of every cell together take less than a dict of the cells would alone."""
    tasks = regular(100_000)
    tracemalloc.start()
    try:
        index = CellIndex(tasks)
        scores = CellScores(index)
        offsets = CellOffsets(index)
        for n, t in enumerate(tasks):
            scores[t.cell] = n / 3
            offsets[t.cell] = n << 32 | 1000
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 14 << 20  # measured 10 MB: the index 6.7 (a dict by prompt), 1.6 a map (a dict by cell: 16)
    assert scores[tasks[-1].cell] == (len(tasks) - 1) / 3 and offsets[tasks[5].cell] == 5 << 32 | 1000


@dataclass(frozen=True)
class PlacedTask:
    cell: Cell
    index: int  # the item's place among the plan's items (a WevalTask's)


def test_item_positions_read_each_item_s_place_from_the_index() -> None:
    """The writer's prompt id → position (weval_results.comparison_object) comes from the index, as the
    dict of them would; a plan not laid out item by item has none (the writer makes the dict)."""
    tasks = [PlacedTask(Cell(f"p{i}", m), i) for i in range(6) for m in ("a", "b")]
    positions = CellIndex(tasks).item_positions()
    assert positions is not None
    assert dict(positions) == {f"p{i}": i for i in range(6)}
    assert "p5" in positions and "p6" not in positions and positions.get("p6") is None
    assert CellIndex([PlacedTask(Cell("p0", "a"), 0), PlacedTask(Cell("p0", "a"), 0)]).item_positions() is None


def test_a_weval_plan_s_tasks_read_as_the_list_of_tasks_they_replace(tmp_path: Path) -> None:
    """plan/weval.py's WevalTasks (a Cell, a position and a small number a cell) reads back every task as the
    list of WevalTask objects did: its cell (the same object each time: parts and states share it), prompt,
    model, temperature, system prompt and its index; sliced, compared, and shared by a shard."""
    from evalspec.analysis import analyze
    from evalspec.run.options import RunOptions
    from evalspec.run.plan.shard import Shard
    from evalspec.run.plan.weval import WevalTask, WevalTasks, plan_weval

    text = "\n".join(["title: T", "models: [echo, openai:gpt-4o-mini]", "temperatures: [0, 0.5]",
                      "systems: [first, null]", "---",
                      *(f"- id: p{i}\n  prompt: q{i}\n  should: [s]" for i in range(7))]) + "\n"
    bp = analyze(text, tmp_path / "t.weval.yml", env={}).blueprint
    assert bp is not None
    plan = plan_weval(bp, tmp_path / "t.weval.yml", RunOptions())
    tasks = plan.tasks
    assert isinstance(tasks, WevalTasks) and len(tasks) == 7 * 2 * 2 * 2
    made = [WevalTask(t.cell, t.prompts, t.index, t.model, t.temperature, t.system, t.sp_index) for t in tasks]
    assert tasks == made and list(tasks) == made and tasks[3:9] == made[3:9] and tasks[-1] == made[-1]
    assert tasks[5].cell is tasks[5].cell is tasks.cells()[5]
    assert {(t.model, t.temperature, t.system, t.sp_index) for t in tasks} == {
        (m, temp, system, idx) for m in ("echo", "openai:gpt-4o-mini") for temp in (0.0, 0.5)
        for idx, system in ((0, "first"), (1, None))}
    assert [t.prompt.id for t in tasks[::8]] == [f"p{i}" for i in range(7)]
    assert tasks[9].cell == (tasks[9].prompt.id, tasks[9].cell.model)
    shard = plan_weval(bp, tmp_path / "t.weval.yml", RunOptions(shard=Shard(1, 2)))
    assert [t.cell for t in shard.tasks] == [t.cell for t in tasks if Shard(1, 2).holds(t.cell.item)]
    assert all(t.prompt.id == t.cell.item for t in shard.tasks)
