"""AgentvTasks' reads without a task a cell (cells, targets, judges) say what the tasks themselves say."""

from __future__ import annotations

from evalspec.agentv.model import AgentvTest
from evalspec.findings import Span
from evalspec.run.plan.agentv import AgentvTasks, TargetSpec


def _tasks() -> AgentvTasks:
    tests = [AgentvTest(id=f"t{k}", span=Span(k, 0, k, 1)) for k in range(4)]
    a, b, c = TargetSpec("a", judge="j"), TargetSpec("b"), TargetSpec("c", judge="b")
    judge_j, judge_b = TargetSpec("j"), TargetSpec("b")
    tasks = AgentvTasks(tests, {"a": judge_j, "b": None, "c": judge_b})
    for k, target in ((0, b), (0, a), (1, c), (2, a), (3, b), (3, c)):  # b first: its cells come first
        tasks.add(k, target)
    return tasks


def test_cells_targets_and_judges_are_the_tasks() -> None:
    tasks = _tasks()
    made = list(tasks)
    assert list(tasks.cells()) == [t.cell for t in made]
    assert list(tasks.cell_targets()) == [t.target.name for t in made] == ["b", "a", "c", "a", "b", "c"]
    assert [tasks.cell_at(n) for n in range(len(tasks))] == [t.cell for t in made]
    assert tasks.targets() == list({t.target.name: t.target for t in made}.values())
    assert tasks.judges() == list({t.judge.name: t.judge for t in made if t.judge}.values())
    assert [j.name for j in tasks.judges()] == ["j", "b"]
    assert [tasks.judge_of(t) for t in tasks.targets()] == [None, TargetSpec("j"), TargetSpec("b")]
    assert tasks.target_names() == ["b", "a", "c"]
