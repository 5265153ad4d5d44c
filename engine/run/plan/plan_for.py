"""Stage one of a run: the plan. A checked file becomes a WevalPlan or an AgentvPlan (`Plan`), or a
PlanError says why it cannot run (errors in the file, nothing selected, a bad -m, files outside the
project). Each format's planner loads only when a file of that format is planned."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ...analysis import Analysis
from ...detect import FileKind
from ..options import RunOptions
from .error import PlanError
from .items import planned_fingerprints, prompt_fingerprints

if TYPE_CHECKING:
    from .agentv import AgentvPlan
    from .weval import WevalPlan

__all__ = ["Plan", "PlanError", "plan_for"]

OUTSIDE_PROJECT = "file-outside-project"  # agentv/context.py reports it

Plan: TypeAlias = "WevalPlan | AgentvPlan"


def plan_for(analysis: Analysis, options: RunOptions) -> Plan:
    """A WevalPlan or an AgentvPlan for a file without errors. Raises PlanError."""
    if analysis.errors:
        raise PlanError(f"{analysis.path}: the file has {len(analysis.errors)} error(s); fix them first")
    outside = [f for f in analysis.findings if f.code == OUTSIDE_PROJECT]
    if outside and not options.allow_outside_files:
        where = "; ".join(f"line {f.span.start_line + 1}{f' of {f.path}' if f.path else ''}" for f in outside[:5])
        raise PlanError(f"{analysis.path} refers to {len(outside)} file(s) outside its project ({where}{', …' if len(outside) > 5 else ''}); "
                        "nothing was run. Move them into the project, or pass --allow-outside-files to read and "
                        "send them")
    path = Path(analysis.path) if analysis.path is not None else Path("<buffer>")
    plan: Plan
    if analysis.kind is FileKind.WEVAL and analysis.blueprint is not None:
        from .weval import plan_weval

        plan = plan_weval(analysis.blueprint, path, options, analysis.weval.notes if analysis.weval else None)
    elif analysis.kind is FileKind.AGENTV and analysis.suite is not None:
        from .agentv import plan_agentv

        plan = plan_agentv(analysis.suite, path, options)
    else:
        raise PlanError(f"{path}: not a Weval blueprint or an AgentV eval file (nothing to run)")
    # The journal keeps them, so an editor opening the file later knows which results are older than the text.
    items = getattr(plan.tasks, "planned_items", None)  # WevalTasks, AgentvTasks: no task object a cell
    planned = items() if items is not None else {t.cell.item for t in plan.tasks}
    read = plan.__dict__.pop("_prompt_lines", None)  # a WevalPlan's prompts' ids, first and last lines
    if read is not None:
        # the same as planned_fingerprints: a file without errors has no repeated prompt id, so the file's
        # prompts with a planned id are the plan's, in the same order
        ids, lines = read
        plan.fingerprints = prompt_fingerprints(analysis, ids, lines, planned)
    else:
        plan.fingerprints = planned_fingerprints(analysis, planned)
    if plan.shard is not None:
        from .shard import source_digest

        plan.source_digest = source_digest(analysis.text, analysis.dependencies, path.parent)
    return plan
