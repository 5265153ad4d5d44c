"""Which AgentV assertions a run can score, and why not — one answer for the runner and `--dry-run` —
and which stage scores each: its registry entry's (`stage_of`; a custom type's script is a SCRIPT).

Whether evalspec runs a type at all is the registry's `runnable` flag (registry/agentv_assertions.py),
the same flag completion and hover read. On top of it, a run needs a judge for judged types (and a
composite needs every child scorable). What cannot be scored is reported as "not scored: <reason>"
and never counts as a pass (scoring/agentv_aggregate.outcome_of).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...agentv.model import Assertion
from ...registry.stages import Stage
from ...scoring.agentv_aggregate import NOT_SCORED

NO_JUDGE = "no judge — set judge_target on the target in targets.yaml, or pass --judge MODEL"
__all__ = ["NOT_SCORED", "NO_JUDGE", "NotScoredReport", "dry_run_report", "needs_judge", "stage_of", "unscorable"]


def stage_of(a: Assertion) -> Stage:
    """The stage that scores `a`: its type's registry entry's; a custom type runs its script."""
    t = a.registered
    return t.stage if t is not None else Stage.SCRIPT


def needs_judge(a: Assertion) -> bool:
    """Does scoring `a` call the test's judge target (an agent-judge with its own `target` does not; a
    composite does when its aggregator is an llm-judge)?"""
    stage = stage_of(a)
    if stage is Stage.JUDGE:
        return True
    if stage is Stage.AGENT_JUDGE:
        return not a.config.get("target")  # its own target judges
    return stage is Stage.GROUP and _judged_aggregator(a)


def reads_workspace(a: Assertion) -> bool:
    """Does scoring `a` read the test's workspace (its changes): a script's, an agent judge's?"""
    return stage_of(a) in (Stage.SCRIPT, Stage.AGENT_JUDGE) or any(reads_workspace(c) for c in a.children)


def unscorable(a: Assertion, *, judge: bool) -> str | None:
    """Why `a` cannot be scored in this run (None: it can). `judge`: the test's target has a judge."""
    kind = a.registered
    if kind is None:
        # A custom type's .agentv/assertions script runs as a code judge; without one nothing can score it.
        from .code_judge import custom_assertion_missing

        return custom_assertion_missing(a)
    if not kind.runnable:
        return f"evalspec does not score '{a.type}' assertions yet"
    stage = kind.stage
    if stage.deterministic:  # (most assertions: no judge, script or children to look at)
        return None
    if stage is Stage.SCRIPT and a.config.get("target") and not judge:
        return f"the code judge calls a target (`target`) and there is {NO_JUDGE}"
    if stage is Stage.SCRIPT:
        from .code_judge import code_judge_missing

        why = code_judge_missing(a)
        if why is not None:
            return why
    if needs_judge(a) and not judge:
        return NO_JUDGE
    if stage is Stage.GROUP:
        for child in a.children:
            why = unscorable(child, judge=judge)
            if why is not None:
                return f"its child '{child.name}' cannot be scored: {why}"
    return None


def _judged_aggregator(a: Assertion) -> bool:
    aggregator = a.config.get("aggregator")
    kind = aggregator.get("type") if isinstance(aggregator, dict) else None
    return isinstance(kind, str) and kind.replace("_", "-") == "llm-judge"


def dry_run_report(tasks: Iterable[Any]) -> list[dict[str, Any]]:
    """Every assertion a run of `tasks` will not score, grouped by (assertion, reason): how many cells,
    and the first few `test × target` cells. Nothing is called."""
    report = NotScoredReport()
    for task in tasks:
        report.add(task.cell, task.judge is not None, task.test)
    return report.groups()


class NotScoredReport:
    """dry_run_report, a cell at a time (`add(cell, whether it has a judge, its test)`: a pass over the
    plan reads each test once)."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str, str], dict[str, Any]] = {}

    def add(self, cell: Any, has_judge: bool, test: Any) -> None:
        if test.uses_default_judge and not has_judge:
            self._add(("llm-judge", "llm-judge", NO_JUDGE), cell, test)
            return
        for a in test.assertions or []:
            why = unscorable(a, judge=has_judge)
            if why is not None:
                self._add((a.name, a.type, why), cell, test)

    def groups(self) -> list[dict[str, Any]]:
        return list(self._groups.values())

    def _add(self, key: tuple[str, str, str], cell: Any, test: Any) -> None:
        entry = self._groups.setdefault(key, {"name": key[0], "type": key[1], "reason": key[2], "cells": 0,
                                              "first": [], "required": False})
        entry["cells"] += 1
        if len(entry["first"]) < 3:
            entry["first"].append(str(cell))
        if any(a.name == key[0] and a.type == key[1] and a.required for a in test.assertions):
            entry["required"] = True
