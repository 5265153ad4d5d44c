"""Cost caps: `--max-cost USD` and AgentV's `execution.total_budget_usd`.

A cell starts only when what is spent, plus what the cells in flight may still spend, plus this
cell's own estimate (cost/estimate.py: outputs at max_tokens, so an upper bound on them) stays within
every cap. A started cell finishes, so the cap is not passed while the estimates hold. Once a cell is
refused no later cell starts: the rest are reported "not run" with the reason (never as passes), the
run exits non-zero, and `--resume` with a higher cap runs exactly those cells. What earlier attempts
of the run spent (journaled usage, cost/spend.py) counts against the cap.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import Cell
from .cost_text import usd


@dataclass(frozen=True)
class Cap:
    usd: float
    name: str  # "--max-cost" | "execution.total_budget_usd"


class Budget:
    def __init__(self, caps: list[Cap], spent: float = 0.0) -> None:
        self.caps = caps
        self.spent = spent
        self._reserved: dict[Cell, float] = {}  # in-flight cells: what their estimate has left
        self.stopped: str | None = None  # why no more cells start
        self.not_run = 0

    @property
    def active(self) -> bool:
        return bool(self.caps)

    @property
    def in_flight(self) -> float:
        return sum(self._reserved.values())

    def admit(self, cell: Cell, estimate: float) -> bool:
        """Reserve `estimate` for `cell`, or refuse it (and every later cell) when a cap would pass."""
        if self.stopped is None:
            needed = self.spent + self.in_flight + estimate
            binding = next((c for c in self.caps if needed > c.usd + 1e-12), None)
            if binding is None:
                self._reserved[cell] = self._reserved.get(cell, 0.0) + estimate
                return True
            self.stopped = (f"not run: {binding.name} {usd(binding.usd)} reached: {usd(self.spent)} spent, "
                            f"~{usd(self.in_flight)} in flight, this cell ~{usd(estimate)}")
        self.not_run += 1
        return False

    def holds(self, cell: Cell) -> bool:
        """Whether `cell` has been admitted and has not finished."""
        return cell in self._reserved

    def charge(self, cell: Cell, cost: float) -> None:
        """A call's real cost (spend.Spend.on_cost)."""
        self.spent += cost
        left = self._reserved.get(cell)
        if left is not None:
            self._reserved[cell] = max(0.0, left - cost)

    def release(self, cell: Cell) -> None:
        """The cell finished: its reservation's unspent rest is free again."""
        self._reserved.pop(cell, None)

    def resume_hint(self) -> str:
        names = " / ".join(dict.fromkeys(c.name for c in self.caps))
        return f"run the same command with --resume and a higher {names} to run them"
