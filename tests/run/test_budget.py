"""budget.Budget: a cell starts only when spent + in flight + its estimate stay within every cap."""

from __future__ import annotations

from evalspec.run.cost.budget import Budget, Cap
from evalspec.run.events import Cell

A, B, C, D = (Cell(x, "m") for x in "abcd")


def test_reservations_charges_and_the_first_refusal_stop_everything_after() -> None:
    budget = Budget([Cap(10.0, "--max-cost")])
    assert budget.admit(A, 4.0) and budget.admit(B, 4.0)  # 8 in flight
    assert budget.in_flight == 8.0
    budget.charge(A, 1.0)  # a's call cost 1: 3 of its estimate left in flight
    assert (budget.spent, budget.in_flight) == (1.0, 7.0)
    budget.release(A)  # a finished: 1 spent, b's 4 in flight
    assert budget.in_flight == 4.0 and budget.holds(B) and not budget.holds(A)
    assert budget.admit(C, 5.0)  # 1 + 4 + 5 = 10: exactly at the cap, allowed
    assert not budget.admit(D, 0.01)  # would pass it
    assert budget.stopped == ("not run: --max-cost $10.00 reached: $1.00 spent, ~$9.00 in flight, "
                              "this cell ~$0.010000")
    budget.release(B)
    budget.release(C)
    assert not budget.admit(Cell("e", "m"), 0.0)  # once refused, no later cell starts, even a free one
    assert budget.not_run == 2


def test_the_tightest_cap_is_named() -> None:
    budget = Budget([Cap(10.0, "--max-cost"), Cap(2.0, "execution.total_budget_usd")], spent=1.5)
    assert not budget.admit(A, 1.0)
    assert budget.stopped is not None and budget.stopped.startswith("not run: execution.total_budget_usd $2.00")
    assert "--max-cost / execution.total_budget_usd" in budget.resume_hint()
