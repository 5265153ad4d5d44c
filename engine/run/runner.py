"""The runner's API: plan a checked file, then run the plan as a stream of events.

    analysis = analyze_file(path)
    plan = plan_for(analysis, options)          # raises PlanError (nothing to run, bad -m, …)
    async for event in run(plan, options):      # events.py
        ...

The CLI renders the events; the language server renders the same events as progress and inline
results. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from .events import Event
from .options import RunOptions
from .plan.plan_for import Plan, PlanError, plan_for

__all__ = ["Plan", "PlanError", "plan_for", "run"]


def run(plan: Plan, options: RunOptions) -> AsyncIterator[Event]:
    """The run's events, in order: RunStarted, then per cell CallStarted / Retrying / Response / Scored or
    CellFailed (cells interleave), Notice at any time, RunFinished last. Closing the iterator early
    (or cancelling its task) stops the run; everything received is already in the run database."""
    from .pipeline import Pipeline
    if plan.kind == "weval":  # (an AgentV run loads no Weval plan module, nor a Weval run AgentV's)
        from .weval_stages import Weval

        return Pipeline(plan, options, Weval).events()
    from .agentv_stages import Agentv

    return Pipeline(plan, options, Agentv).events()
