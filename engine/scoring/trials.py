"""AgentV `execution.trials`: run a test several times and combine the attempts.

`count` attempts (≥ 1); `strategy`: `pass_at_k` (default; the best attempt, stopping at the first
pass), `mean`, or `confidence_interval` (the lower bound of the 95% t-interval of the mean);
`cost_limit_usd`: no further attempt once the known costs of the attempts so far reach it (an attempt
of unknown cost adds nothing, as in AgentV; the row says so). The arithmetic is agentv_aggregate's
(aggregate_trials); this module decides when to stop and which attempt the row shows (AgentV's: the
first attempt with the best score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .agentv_aggregate import TRIAL_STRATEGIES, aggregate_trials, execution_status, verdict


@dataclass(frozen=True)
class TrialSettings:
    count: int = 1
    strategy: str = "pass_at_k"
    cost_limit_usd: float | None = None

    @classmethod
    def of(cls, raw: Mapping[str, Any] | None) -> TrialSettings:
        if not raw:
            return cls()
        count = raw.get("count")
        strategy = raw.get("strategy") or "pass_at_k"
        limit = raw.get("cost_limit_usd")
        return cls(count=count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else 1,
                   strategy=strategy if strategy in TRIAL_STRATEGIES else "pass_at_k",
                   cost_limit_usd=float(limit) if isinstance(limit, int | float) and not isinstance(limit, bool)
                   and limit > 0 else None)

    @property
    def repeated(self) -> bool:
        return self.count > 1


@dataclass(frozen=True)
class Attempt:
    score: float | None  # None: not scored (or an execution error)
    verdict: str | None
    cost_usd: float | None
    error: str | None = None
    reported: bool = True  # False: cost_usd is evalspec's price for a target that reports no cost (a chat API)


def stop_reason(settings: TrialSettings, attempts: Sequence[Attempt]) -> str | None:
    """Why no further attempt is made, or None to go on (AgentV's order: the cost limit, then a pass
    under pass_at_k, then the count)."""
    if settings.cost_limit_usd is not None:
        spent = 0.0
        for a in attempts:  # AgentV adds what the target reported (`costUsd ?? 0`)
            if a.cost_usd is not None and a.reported:
                spent += a.cost_usd
        if spent >= settings.cost_limit_usd:
            return "cost_limit"
    if settings.strategy == "pass_at_k" and attempts and attempts[-1].score is not None \
            and verdict(attempts[-1].score) == "pass":
        return "passed"
    if len(attempts) >= settings.count:
        return "count"
    return None


def _costs(attempts: Sequence[Attempt]) -> list[float | None]:
    """Each attempt's cost: one that failed before an answer (an HTTP error) cost nothing; None only for
    an answer whose model has no price."""
    return [0.0 if a.error is not None and a.cost_usd is None else a.cost_usd for a in attempts]


@dataclass(frozen=True)
class TrialsResult:
    score: float | None
    verdict: str | None
    chosen: int  # the attempt whose answer and assertion scores the row shows
    details: dict[str, Any]
    execution_status: str = "quality_failure"


def _status(attempts: Sequence[Attempt], statuses: Sequence[str] | None) -> str:
    """AgentV: ok when an attempt is ok, execution_error when every attempt failed to run, else
    quality_failure."""
    found = list(statuses) if statuses is not None else [
        "execution_error" if a.error is not None else execution_status(a.score) for a in attempts]
    if "ok" in found:
        return "ok"
    return "execution_error" if found and all(s == "execution_error" for s in found) else "quality_failure"


def combine(settings: TrialSettings, attempts: Sequence[Attempt], stopped: str | None,
            statuses: Sequence[str] | None = None) -> TrialsResult:
    """The row's score from its attempts. An attempt that was not scored or failed to run makes the
    whole result not scored under `mean` / `confidence_interval` (an average over the attempts that
    happened to score would be a different number); `pass_at_k` takes the best scored attempt.
    `statuses`: each attempt's execution_status (else from its score)."""
    scored = [(k, a) for k, a in enumerate(attempts) if a.score is not None and a.error is None]
    costs = _costs(attempts)
    details: dict[str, Any] = {"strategy": settings.strategy, "count": settings.count, "attempts": len(attempts),
                               "stopped": stopped,
                               "cost_usd": sum(c for c in costs if c is not None) if all(
                                   c is not None for c in costs) else None}
    status = _status(attempts, statuses)
    if settings.cost_limit_usd is not None:
        details["cost_limit_usd"] = settings.cost_limit_usd
        details["cost_limited"] = stopped == "cost_limit"
        if any(not a.reported for a in attempts):
            details["cost_limit_note"] = "the target reports no cost (a chat API): as in AgentV, its attempts " \
                                         "add nothing to the limit"
        elif any(c is None for c in costs):
            details["cost_limit_note"] = "the cost of an attempt is unknown (no price for its model, or the " \
                                         "target reports none): it adds nothing to the limit"
    if not scored or (settings.strategy != "pass_at_k" and len(scored) < len(attempts)):
        return TrialsResult(None, None, len(attempts) - 1, details, status)
    scores = [a.score for _, a in scored if a.score is not None]
    agg = aggregate_trials(scores, settings.strategy, [verdict(s) for s in scores])
    details.update(agg.details)
    chosen = scored[0][0]
    best = scored[0][1].score or 0.0
    for k, a in scored[1:]:  # the first attempt with the best score (AgentV's reduce, strict >)
        if (a.score or 0.0) > best:
            chosen, best = k, a.score or 0.0
    return TrialsResult(agg.score, agg.verdict, chosen, details, status)
