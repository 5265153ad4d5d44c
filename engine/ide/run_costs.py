"""What running a file, or one of its prompts or tests, will cost: the Run lenses' `≈ $0.04, 36 calls`.

`run_costs(analysis, options)` plans the run as `evalspec run --dry-run` does (run/plan/plan_for.py,
the same RunOptions: models, judges, eval methods) and sizes it with the same estimate
(run/cost/estimate.py) at the same prices: the whole file under the key None, and each item (prompt or
test id) as the estimate of the plan narrowed to that item's cells, which is what `--dry-run --prompt ID`
says. A call whose model has no price makes the figure "unknown", never a guess. Nothing is sent.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

# A file whose plan has more cells is not sized for its lenses (the Plan command still does): planning
# and estimating a few thousand cells takes a fraction of a second; more would hold the lenses back.
MAX_CELLS = 5_000


@dataclass(frozen=True, slots=True)
class RunCost:
    usd: float | None  # None: some call has no price
    calls: int
    at_least: bool = False  # the estimate leaves something out (estimate.Estimate.notes)
    unpriced: tuple[str, ...] = ()

    def text(self) -> str:
        """`≈ $0.04, 36 calls`; `cost unknown (no price for x), 36 calls`."""
        calls = f"{self.calls:,} call{'s' if self.calls != 1 else ''}"
        if self.usd is None:
            names = ", ".join(self.unpriced[:2]) + (", …" if len(self.unpriced) > 2 else "")
            return f"cost unknown (no price for {names}), {calls}"
        return f"{'≥' if self.at_least else '≈'} {dollars(self.usd)}, {calls}"


def dollars(usd: float) -> str:
    if usd == 0:
        return "$0"
    if usd < 0.01:
        return "< $0.01"
    if usd < 100:
        return f"${usd:.2f}"
    return f"${usd:,.0f}"


@dataclass(frozen=True, slots=True)
class RunCosts:
    by_item: dict[str | None, RunCost]  # None: the whole file
    problem: str | None = None  # why nothing was sized (a plan error, too many cells)


def run_costs(analysis: Any, options: Any) -> RunCosts:
    from ..pricing import PriceTable
    from ..run.cost.estimate import estimate
    from ..run.plan.error import PlanError
    from ..run.plan.plan_for import plan_for
    from ..run.plan.weval import WevalPlan

    try:
        plan = plan_for(analysis, dataclasses.replace(options, select=[]))
        if len(plan.tasks) > MAX_CELLS:
            return RunCosts({}, f"{len(plan.tasks):,} cells: too many to size in the editor (use Plan)")
        prices = getattr(plan, "prices", None) or PriceTable.load(options.prices, options.env)
    except (PlanError, ValueError) as exc:  # ValueError: a bad price file, a bad model id
        return RunCosts({}, str(exc))
    out: dict[str | None, RunCost] = {None: _cost(estimate(plan, prices))}
    tasks: dict[str, list[Any]] = {}
    for task in plan.tasks:
        tasks.setdefault(task.cell.item, []).append(task)
    if isinstance(plan, WevalPlan):
        for prompt in plan.prompts:
            part = dataclasses.replace(plan, tasks=tasks.get(prompt.id, []), prompts=[prompt])
            out[prompt.id] = _cost(estimate(part, prices))
    else:
        for test in plan.tests:
            narrowed = dataclasses.replace(plan, tasks=tasks.get(test.id, []), tests=[test])  # type: ignore[arg-type]
            out[test.id] = _cost(estimate(narrowed, prices))
    return RunCosts(out)


def _cost(estimate: Any) -> RunCost:
    unpriced = tuple(estimate.unpriced)
    calls = sum(line.calls for line in estimate.lines)
    return RunCost(None if unpriced else estimate.total(), calls, bool(estimate.notes), unpriced)
