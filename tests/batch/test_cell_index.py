"""The per-cell numbers a run keeps to its end (scores, where results and batch answers wait on disk) are
arrays by the cell's place in the plan (run/plan/cell_index.py): they must behave as the dicts they
replace, for a plan laid out prompt by prompt and for one that is not (a replay's models differ per
prompt), and cost a few bytes a cell instead of a dict entry and an int."""

from __future__ import annotations

import random
import tracemalloc
from dataclasses import dataclass

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
