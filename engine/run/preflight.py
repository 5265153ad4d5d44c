"""What would fail before any call: missing API keys, unknown providers, unusable targets.

Providers are built exactly as the run builds them (which checks keys and settings) but nothing is
sent, so `--dry-run` can say "OPENROUTER_API_KEY is not set" without touching the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..providers.base import ProviderError
from .options import RunOptions
from .plan.weval import WevalPlan

if TYPE_CHECKING:
    from .runner import Plan


def problems(plan: Plan, options: RunOptions) -> list[str]:
    """One line per distinct problem: 30 models missing the same key are one line, not thirty."""
    return _grouped(_problems(plan, options))


def _grouped(lines: list[str]) -> list[str]:
    by_message: dict[str, list[str]] = {}
    for line in lines:
        who, sep, message = line.partition(": ")
        if not sep:
            who, message = "", line
        by_message.setdefault(message, []).append(who)
    out = []
    for message, whos in by_message.items():
        whos = [w for w in whos if w]
        if len(whos) > 2:
            out.append(f"{message} ({len(whos)}: {', '.join(whos[:2])}, …)")
        elif whos:
            out.append(f"{', '.join(whos)}: {message}")
        else:
            out.append(message)
    return out


def _problems(plan: Plan, options: RunOptions) -> list[str]:
    out: list[str] = []
    if isinstance(plan, WevalPlan):
        from ..providers.factory import provider_for_model

        if plan.replay is None:
            for model in plan.models:
                try:
                    provider_for_model(plan.model_specs.get(model, model), env=options.env)
                except ProviderError as err:
                    out.append(f"model {model}: {err.message}")
        # Judges matter only when some selected prompt has a judged point (or key points to extract).
        if "llm-coverage" in plan.eval_methods and any(plan.judged_points(p) for p in plan.prompts):
            bad = []
            for judge in plan.judges:
                try:
                    provider_for_model(judge.model, env=options.env)
                except ProviderError as err:
                    bad.append(f"judge {judge.model}: {err.message}")
            out += bad
            if plan.judges and len(bad) == len(plan.judges):
                out.append("no judge can be called: judged (text) points will be reported as not scored")
        if "embedding" in plan.eval_methods:
            try:
                provider_for_model(plan.blueprint.embedding_model, env=options.env)
            except ProviderError as err:
                out.append(f"embedding model {plan.blueprint.embedding_model}: {err.message}")
        return out
    return plan.problems(options)
