"""A run's costs, wired into its runner: the real spend (cost/spend.py) and the caps (cost/budget.py).

Both runners hold one `CostGuard`: it hands `Calls` the ledger every chat call reports to, journals
each call's usage, restores the earlier usage of a resumed run, and decides whether a cell may start
under `--max-cost` / AgentV's `execution.total_budget_usd` from the cell's estimate (cost/estimate.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...pricing import PriceTable
from ..events import Cell
from ..journal.records import Usage
from ..options import RunOptions
from .budget import Budget, Cap
from .cost_text import total_text
from .estimate import EMBEDDINGS, agentv_cell_calls, cost_of_calls, weval_cell_calls, weval_prompt_calls
from .spend import Spend

if TYPE_CHECKING:
    from ..plan.agentv import AgentvTask
    from ..plan.plan_for import Plan
    from ..plan.weval import WevalTask

MAX_COST = "--max-cost"
TOTAL_BUDGET = "execution.total_budget_usd"
NOT_RUN = "not_run"  # the CellFailed kind of a cell a cap kept from starting


class CostGuard:
    def __init__(self, plan: Plan, options: RunOptions, prices: PriceTable, *, suite_budget: float | None = None,
                 batch: bool = False) -> None:
        self.plan = plan
        self.spend = Spend(prices, per_cell=plan.kind != "weval")  # AgentV rows say their judges' cost
        caps = []
        if options.max_cost is not None:
            caps.append(Cap(options.max_cost, MAX_COST))
        if suite_budget is not None:
            caps.append(Cap(suite_budget, TOTAL_BUDGET))
        self.budget = Budget(caps)
        self.batch = batch
        self._extractions: set[str] = set()  # Weval prompts whose key-point extraction is reserved
        if self.budget.active:
            self.spend.on_cost = self.budget.charge
        if plan.kind == "agentv":
            from .estimate import target_price_names

            # targets.yaml targets call with no model name: price them by their config (each target and
            # its judge, in the order of their first cells: no task made per cell)
            for target in plan.tasks.targets():
                self.spend.hints.setdefault(target.name, target_price_names(target))
                judge = plan.tasks.judge_of(target)
                if judge is not None:
                    self.spend.hints.setdefault(judge.name, target_price_names(judge))

    def attach(self, sink: Any, earlier: Iterable[Usage]) -> None:
        """Journal each call's usage through `sink` (the journal, or a function holding the record back to
        go out with the runner's next write); count what the earlier attempts of a resumed run spent
        (`earlier`: the journal's usage records, none for a fresh run)."""
        if self.spend.restore(earlier):  # read once, not held (a resumed run's journal has one a call)
            self.budget.spent = self.spend.total
        if callable(sink):
            self.spend.sink = sink
        elif sink is not None:
            self.spend.sink = sink.write

    def check(self) -> str | None:
        """Before the run: raises PlanError when `--max-cost` cannot be held (a model the run calls has no
        price); a warning when only the suite's `total_budget_usd` is set (AgentV goes on with it)."""
        if not self.budget.active:
            return None
        from ..plan.error import PlanError
        from .estimate import estimate

        # Embeddings come after every cell and report no usage: they are outside the caps (docs/guide/costs.md).
        est = estimate(self.plan, self.spend.prices)
        unpriced = list(dict.fromkeys(line.priced_as or line.model for line in est.lines
                                      if line.price is None and line.calls and line.role != EMBEDDINGS))
        if not unpriced:
            return None
        if any(c.name == MAX_COST for c in self.budget.caps):
            raise PlanError(f"--max-cost cannot be held: no price for {', '.join(unpriced)}; add them to a price "
                            "file (--prices FILE or $EVALSPEC_PRICES)")
        return (f"{TOTAL_BUDGET} counts only the calls with a price: no price for {', '.join(unpriced)} "
                "(add them with --prices FILE)")

    def admit(self, task: WevalTask | AgentvTask) -> str | None:
        """None when the cell may start (its estimate reserved); else why it is not run."""
        if not self.budget.active or self.budget.holds(task.cell):
            return None  # no cap, or admitted already (batch mode admits a cell before it batches its call)
        from ..plan.agentv import AgentvPlan, AgentvTask
        from ..plan.weval import WevalPlan, WevalTask

        prompt = None
        if isinstance(self.plan, WevalPlan) and isinstance(task, WevalTask):
            calls = weval_cell_calls(self.plan, task)
            if task.prompt.id not in self._extractions:
                prompt = task.prompt
                calls += weval_prompt_calls(self.plan, prompt)
        elif isinstance(self.plan, AgentvPlan) and isinstance(task, AgentvTask):
            calls = agentv_cell_calls(self.plan, task)
        else:
            raise TypeError(f"a {type(task).__name__} is not a cell of a {type(self.plan).__name__}")
        cost, _unpriced = cost_of_calls(calls, self.spend.prices, batch=self.batch)
        if self.budget.admit(task.cell, cost):
            if prompt is not None:
                self._extractions.add(prompt.id)
            return None
        return self.budget.stopped

    def refuses(self, task: WevalTask | AgentvTask) -> bool:
        """Batch mode, before a cell's call is batched: admit it now (admit() then lets it start), or say
        it will be refused. A refusal is counted once, when the cell itself is refused."""
        if self.budget.stopped is not None:
            return True
        if self.admit(task) is None:
            return False
        self.budget.not_run -= 1
        return True

    def release(self, cell: Cell) -> None:
        if self.budget.active:
            self.budget.release(cell)

    @property
    def stopped(self) -> str | None:
        """Why cells were not run (with how many and how to go on), or None."""
        if self.budget.stopped is None:
            return None
        return (f"{self.budget.not_run:,} cell(s) {self.budget.stopped}; {self.budget.resume_hint()}")

    def summary(self) -> dict[str, Any]:
        out = self.spend.to_json()
        caps = {c.name: c.usd for c in self.budget.caps}
        if caps:
            out["caps"] = caps
        if self.budget.stopped is not None:
            out["stopped"] = self.budget.stopped
            out["not_run"] = self.budget.not_run
        return out

    def total_text(self) -> str:
        return total_text(self.spend.total, self.spend.unpriced)
