"""AgentV `execution.trials`: run a test several times and combine the attempts.

`count` attempts (≥ 1); `strategy`: `pass_at_k` (default; the best attempt, stopping at the first
pass), `mean`, or `confidence_interval` (the lower bound of the 95% t-interval of the mean);
`cost_limit_usd`: no further attempt once the attempts so far cost that much. A cost that is unknown
(no price for the model) cannot be held to a limit: the attempts go on and the row says so.
The arithmetic is agentv_aggregate's (aggregate_trials); this module decides when to stop and which
attempt the row shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .agentv_aggregate import TRIAL_STRATEGIES, aggregate_trials


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


def stop_reason(settings: TrialSettings, attempts: Sequence[Attempt]) -> str | None:
    """Why no further attempt is made, or None to go on."""
    if len(attempts) >= settings.count:
        return "count"
    if settings.strategy == "pass_at_k" and any(a.verdict == "pass" for a in attempts):
        return "passed"
    if settings.cost_limit_usd is not None:
        costs = _costs(attempts)
        if all(c is not None for c in costs) and sum(c for c in costs if c is not None) >= settings.cost_limit_usd:
            return "cost_limit"
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


def combine(settings: TrialSettings, attempts: Sequence[Attempt], stopped: str | None) -> TrialsResult:
    """The row's score from its attempts. An attempt that was not scored or failed to run makes the
    whole result not scored under `mean` / `confidence_interval` (an average over the attempts that
    happened to score would be a different number); `pass_at_k` takes the best scored attempt."""
    scored = [(k, a) for k, a in enumerate(attempts) if a.score is not None and a.error is None]
    costs = _costs(attempts)
    details: dict[str, Any] = {"strategy": settings.strategy, "count": settings.count, "attempts": len(attempts),
                               "stopped": stopped,
                               "cost_usd": sum(c for c in costs if c is not None) if all(
                                   c is not None for c in costs) else None}
    if settings.cost_limit_usd is not None:
        details["cost_limit_usd"] = settings.cost_limit_usd
        if any(c is None for c in costs):
            details["cost_limit_note"] = "the cost of an attempt is unknown (no price for its model): the limit " \
                                         "could not be applied"
    if not scored or (settings.strategy != "pass_at_k" and len(scored) < len(attempts)):
        chosen = len(attempts) - 1
        return TrialsResult(None, None, chosen, details)
    scores = [a.score for _, a in scored if a.score is not None]
    verdicts = [a.verdict or "" for _, a in scored]
    agg = aggregate_trials(scores, settings.strategy, verdicts)
    details.update(agg.details)
    if settings.strategy == "pass_at_k":
        # The best attempt; a failed gate's verdict (fail at a high score) is kept from that attempt.
        chosen, best = max(scored, key=lambda ka: (ka[1].verdict == "pass", ka[1].score or 0.0))
        return TrialsResult(best.score, best.verdict, chosen, details)
    return TrialsResult(agg.score, agg.verdict, scored[-1][0], details)
