"""The cell pipeline's engine (engine/run/pipeline.py): a format's declared stages run in order, a stage
ends its cell or its attempt, `Around` releases what it holds however its stages end, `Repeat` runs
attempts until told to stop, and the shared stages (`admitted`, `awaited`) do what each format relied
on. The formats' own runs are tested end to end by the rest of tests/run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from evalspec.run.pipeline import (
    DONE,
    NEXT_ATTEMPT,
    Around,
    CellWork,
    Flow,
    Repeat,
    admitted,
    awaited,
    run_stages,
)
from evalspec.run.weval_stages import Weval

NO_RUN: Any = None  # `awaited` reads nothing of its run


@dataclass(eq=False)
class Work(CellWork[Any]):
    log: list[str] = field(default_factory=list)


def _work() -> Work:
    return Work(SimpleNamespace(cell=("item", "model")))


def step(name: str, flow: Flow | None = None, *, on_attempt: int | None = None) -> Any:
    async def stage(run: Any, work: Work) -> Flow | None:
        work.log.append(f"{name}{work.attempt}" if on_attempt is not None else name)
        if on_attempt is None or work.attempt == on_attempt:
            return flow
        return None

    return stage


def holding(name: str) -> Any:
    @contextlib.asynccontextmanager
    async def enter(run: Any, work: Work) -> AsyncIterator[Flow | None]:
        work.log.append(f"take {name}")
        try:
            yield None
        finally:
            work.log.append(f"release {name}")

    return enter


def _run(stages: tuple[Any, ...], work: Work | None = None, run: Any = None) -> tuple[Flow | None, Work]:
    work = work or _work()
    return asyncio.run(run_stages(run, stages, work)), work


def test_stages_run_in_order_and_done_ends_the_cell() -> None:
    flow, work = _run((step("a"), step("b", DONE), step("c")))
    assert flow is DONE and work.log == ["a", "b"]


def test_around_holds_its_stages_and_releases_however_they_end() -> None:
    flow, work = _run((Around(holding("ws"), (step("a"), step("b", DONE))), step("after")))
    assert flow is DONE and work.log == ["take ws", "a", "b", "release ws"]  # DONE skips what follows

    async def boom(run: Any, work: Work) -> Flow | None:
        raise RuntimeError("a bug")

    work = _work()
    with pytest.raises(RuntimeError):
        _run((Around(holding("ws"), (boom,)),), work)
    assert work.log == ["take ws", "release ws"]


def test_around_that_yields_done_skips_its_stages() -> None:
    @contextlib.asynccontextmanager
    async def refused(run: Any, work: Work) -> AsyncIterator[Flow | None]:
        yield DONE

    flow, work = _run((Around(refused, (step("inside"),)), step("after")))
    assert flow is DONE and work.log == []


def test_repeat_runs_attempts_until_stopped() -> None:
    stages = (Repeat((step("gen", on_attempt=-1), step("score", on_attempt=-1)),
                     lambda run, work: 5, lambda run, work: work.attempt == 2), step("combine"))
    flow, work = _run(stages)
    assert flow is None
    assert work.log == ["gen0", "score0", "gen1", "score1", "gen2", "score2", "combine"]


def test_next_attempt_skips_the_rest_of_an_attempt_and_its_stop_check() -> None:
    stages = (Repeat((step("gen", NEXT_ATTEMPT, on_attempt=0), step("score", on_attempt=-1)),
                     lambda run, work: 3, lambda run, work: True), step("combine"))
    flow, work = _run(stages)
    # attempt 0 ended early (its stop check not asked); attempt 1 ran whole and stopped the trials
    assert flow is None and work.log == ["gen0", "gen1", "score1", "combine"]


def test_done_inside_an_attempt_ends_the_cell() -> None:
    stages = (Repeat((step("gen", DONE, on_attempt=1),), lambda run, work: 3, lambda run, work: False),
              step("combine"))
    flow, work = _run(stages)
    assert flow is DONE and work.log == ["gen0", "gen1"]


class Guard:
    def __init__(self, refuse: str | None) -> None:
        self.refuse = refuse
        self.log: list[str] = []

    def admit(self, task: Any) -> str | None:
        self.log.append("admit")
        return self.refuse

    def release(self, cell: Any) -> None:
        self.log.append("release")


def test_admitted_runs_an_admitted_cell_and_releases_its_reservation() -> None:
    run = SimpleNamespace(cost=Guard(None), not_run=lambda work, why: pytest.fail("not refused"))
    flow, work = _run((Around(admitted, (step("generate"),)),), run=run)
    assert flow is None and work.log == ["generate"] and run.cost.log == ["admit", "release"]


def test_a_cell_a_cost_cap_refuses_is_not_run() -> None:
    refused: list[str] = []
    run = SimpleNamespace(cost=Guard("not run: --max-cost reached"), not_run=lambda work, why: refused.append(why))
    flow, work = _run((Around(admitted, (step("generate"),)), step("write")), run=run)
    assert flow is DONE and work.log == [] and refused == ["not run: --max-cost reached"]
    assert run.cost.log == ["admit"]


def test_awaited_fills_each_entry_in_its_place_side_by_side_or_in_order() -> None:
    started: list[int] = []

    async def score(i: int, delay: float) -> str:
        started.append(i)
        await asyncio.sleep(delay)
        return f"entry {i}"

    async def both() -> tuple[Work, Work]:
        together, in_order = _work(), _work()
        for work in (together, in_order):
            work.entries = ["at once", None, None]
            work.waiting = [(2, score(2, 0)), (1, score(1, 0.01))]  # added out of order
        in_order.together = False
        start = asyncio.get_running_loop().time()
        await awaited(NO_RUN, together)
        assert asyncio.get_running_loop().time() - start < 0.5
        started.clear()
        await awaited(NO_RUN, in_order)
        return together, in_order

    together, in_order = asyncio.run(both())
    assert together.entries == in_order.entries == ["at once", "entry 1", "entry 2"]
    assert started == [1, 2] and in_order.waiting == []


def test_weval_declares_its_stages_as_data() -> None:
    """A reader finds a format's stages in its declaration, by the names the issue gives them."""
    def names(stages: tuple[Any, ...]) -> list[str]:
        out: list[str] = []
        for s in stages:
            out += names(s.stages) if isinstance(s, Around | Repeat) else [s.__name__]
        return out

    assert names(Weval.stages.cell) == ["resumed", "generate", "rubric", "functions", "judges", "awaited",
                                        "aggregate", "write"]
    assert [s.__name__ for s in Weval.stages.after] == ["embeddings"]


def test_an_around_the_run_does_not_need_is_its_stages_in_its_place() -> None:
    """cell_stages: each Around whose `needed(run)` is False (no cost cap, no workspace, no batch rounds)
    becomes its own stages, asked once a run; one it needs stays, and the cells enter it as before."""
    from evalspec.run.pipeline import capped, cell_stages

    a, b, c, d = step("a"), step("b"), step("c"), step("d")
    declared = (a, Around(holding("outer"), (b, Around(holding("inner"), (c,), lambda run: run.inner)),
                          lambda run: run.outer), Repeat((d,), lambda run, work: 1, lambda run, work: False))
    none = SimpleNamespace(outer=False, inner=False)
    flat = cell_stages(none, declared)
    assert flat[:3] == (a, b, c) and isinstance(flat[3], Repeat) and flat[3].stages == (d,)
    flow, work = _run(flat, run=none)
    assert flow is None and work.log == ["a", "b", "c", "d"]
    kept = cell_stages(SimpleNamespace(outer=True, inner=False), declared)
    flow, work = _run(kept)
    assert work.log == ["a", "take outer", "b", "c", "release outer", "d"]
    assert capped(SimpleNamespace(cost=SimpleNamespace(budget=SimpleNamespace(active=False)))) is False
    for fmt in (Weval,):  # a run without a cost cap enters no `admitted`
        run = SimpleNamespace(cost=SimpleNamespace(budget=SimpleNamespace(active=False)))
        assert not any(isinstance(s, Around) for s in cell_stages(run, fmt.stages.cell))
