"""The script stage of AgentV scoring: the user's own scorers, run as subprocesses only inside an
explicit run (score/code_judge.py, through script_process.py): `code-judge` assertions, custom assertion
types, and a `composite`'s code-judge aggregator. A code judge that names a `target` calls the judge
target through the run's loopback proxy (score_judges.AgentvJudges.target_proxy). A script that fails,
times out or answers nonsense leaves its assertion not scored, with the reason.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from typing import TYPE_CHECKING, Any

from ...scoring.agentv_aggregate import negate_result, verdict
from ...scoring.composite import Child, CompositeScore, results_object
from .agentv_entries import entry, skipped
from .agentv_scorable import NO_JUDGE
from .code_judge import judge_answer, run_code_judge, shell_argv, timeout_of

if TYPE_CHECKING:
    from ...agentv.model import Assertion
    from ..options import RunOptions
    from ..plan.agentv import AgentvPlan, AgentvTask
    from ..write.agentv_measured import Measured
    from .agentv_judges import AgentvJudges

class AgentvScripts:
    def __init__(self, plan: AgentvPlan, options: RunOptions, judges: AgentvJudges, limit: asyncio.Semaphore) -> None:
        self.plan = plan
        self.options = options
        self.judges = judges
        self.limit = limit  # code judges at once (code_judge.DEFAULT_CONCURRENCY)

    async def executed(self, task: AgentvTask, a: Assertion, measured: Measured) -> dict[str, Any]:
        """A `code-judge` or a custom assertion's script, run on the answer (score/code_judge.py), only inside
        this explicit run."""
        env = self.options.env
        proxy = None
        wants_target = a.config.get("target") if not a.custom else None  # a code judge's, not a custom type's
        if wants_target:
            if task.judge is None:
                return skipped(a, f"not scored: the code judge calls a target (`target`) and there is {NO_JUDGE}")
            proxy = self.judges.target_proxy(task, wants_target)
            env = {**env, **await proxy.start()}
        try:
            outcome = await judge_answer(a, task.test, measured, base=self.plan.path.parent, env=env,
                                         limit=self.limit)
        finally:
            if proxy is not None:
                await proxy.close()
        if outcome.score is None:
            return skipped(a, outcome.error or "not scored")
        score, result_verdict = outcome.score, verdict(outcome.score)
        hits, misses = list(outcome.hits), list(outcome.misses)
        if a.negate and outcome.error is None:
            score, result_verdict = negate_result(score, result_verdict)
            hits, misses = misses, hits
        out = entry(a, score, result_verdict, hits, misses, outcome.reasoning)
        if outcome.details is not None:
            out["details"] = outcome.details
        if outcome.error is not None:
            out["error"] = outcome.error
        if proxy is not None:
            out["target_proxy"] = proxy.usage()
        return out

    async def aggregate(self, a: Assertion, aggregator: dict[str, Any], children: list[Child]) -> CompositeScore | str:
        """A composite's code-judge aggregator: its script (`path`, a command line) gets `{results}` on
        stdin; a string says why there is no score."""
        command = aggregator.get("path") or aggregator.get("command") or aggregator.get("script")
        if isinstance(command, str) and command.strip():
            # A command line, split as a POSIX shell would (no shell runs it); Windows gets cmd.exe.
            try:
                argv = shell_argv(command) if sys.platform.startswith("win") else shlex.split(command)
            except ValueError as exc:
                return f"the code-judge aggregator's path cannot be split into a command: {exc}"
        elif isinstance(command, list) and command:
            argv = [str(x) for x in command]
        else:
            return "the code-judge aggregator has no `path` (its script)"
        base = a.source_path.parent if a.source_path is not None else self.plan.path.parent
        cwd = base / str(aggregator["cwd"]) if aggregator.get("cwd") else base
        outcome = await run_code_judge(argv, {"results": results_object(children)}, cwd=cwd,
                                       timeout=timeout_of(aggregator), env=self.options.env, limit=self.limit)
        if outcome.score is None:
            return (outcome.error or "the code-judge aggregator was not run").removeprefix("not scored: ")
        misses = list(outcome.misses) + ([outcome.error] if outcome.error else [])
        return CompositeScore(outcome.score, verdict(outcome.score), outcome.hits, tuple(misses), outcome.reasoning)
