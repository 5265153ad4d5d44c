"""Batches left running when the user stops a run: listed, and cancelled when asked (after Ctrl-C),
each cancellation journaled so `--resume` still collects what they finished."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...batch import batch_api_for
from ...providers.base import Provider, ProviderError
from ...providers.retry import retry_call
from ..journal.records import BatchCancelled
from ..journal.run_store import Journal
from ..options import RunOptions
from .batch_journal import BatchPart, load_parts
from .calls import Calls

if TYPE_CHECKING:
    from ..plan.plan_for import Plan


def plan_provider(plan: Plan, calls: Calls, model: str) -> Provider:
    """The provider a plan's batches of `model` were sent with: a Weval model id (custom models by their
    id) or an AgentV target's name."""
    from ..plan.weval import WevalPlan

    if isinstance(plan, WevalPlan):
        return calls.model(plan.model_specs.get(model, model)).provider
    for target in [*plan.targets, *plan.tasks.judges()]:  # an AgentV judge's batches by its name
        if target.name == model:
            if target.config is not None:
                return calls.target(target.name, target.config, base_dir=plan.path.parent)
            return calls.model(target.model or target.name).provider
    return calls.model(model).provider


async def cancel_open_batches(journal_path: Path, plan: Plan, options: RunOptions) -> list[str]:
    """Cancel every batch the journal names that has not ended (the user chose to, after Ctrl-C); each
    cancellation is journaled, so `--resume` polls the batch to its end and collects what it finished.
    Returns one line per batch for the user."""
    parts = [p for p in load_parts(journal_path).values() if p.open and not p.cancelled]
    if not parts:
        return []
    lines: list[str] = []
    calls = Calls(options, lambda event: None, concurrency=4)
    try:
        with Journal.after_run(journal_path) as journal:
            for part in parts:
                assert part.batch_id is not None
                batch_id = part.batch_id
                try:
                    api = batch_api_for(plan_provider(plan, calls, part.model), custom=True)
                    if api is None:
                        continue
                    status = await retry_call(lambda api=api, batch_id=batch_id: api.cancel(batch_id),  # type: ignore[misc]
                                              calls.policy)
                except ProviderError as err:
                    lines.append(f"batch {batch_id} ({part.model}): not cancelled: {err.message}")
                    continue
                journal.write(BatchCancelled(part.key))
                lines.append(f"batch {batch_id} ({part.model}): {status.state}")
    finally:
        await calls.aclose()
    return lines


def open_batches(journal_path: Path) -> list[BatchPart]:
    """The batches of a journal that were created and have not ended (nor been cancelled)."""
    return [p for p in load_parts(journal_path).values() if p.open and not p.cancelled]
