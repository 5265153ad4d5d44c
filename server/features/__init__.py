"""The editor's features, a module each: the jobs it computes in an engine worker (`JOBS`, worker.py)
and, when it needs more than a job answering a request (`answers`), its handlers in the LSP process
(`register(server)`, main.py). `WITH_JOBS` and `REGISTERED` name them; `load` imports them."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

# The modules whose jobs a worker computes (importing one declares the requests its jobs answer), and
# those with a `register(server)`, in the order main.build_server calls it.
WITH_JOBS = ("code_actions", "code_lens", "completion", "diagnostics", "hover", "inlay_hints", "navigation",
             "rename", "run_jobs", "semantic_tokens", "signature_help", "symbols", "workspace_diagnostics")
REGISTERED = ("lifecycle", "diagnostics", "run", "code_lens", "inlay_hints", "workspace_diagnostics")
# (LSP method, its options, the empty answer, the job answering it): registered by main.build_server.
ANSWERED: list[tuple[str, Any, Callable[[], Any] | None, str]] = []


def load(names: tuple[str, ...]) -> list[ModuleType]:
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def jobs() -> dict[str, Callable[..., Any]]:
    """Job name → function(worker, doc, *args), of every module in WITH_JOBS."""
    return {name: fn for feature in load(WITH_JOBS) for name, fn in feature.JOBS.items()}


def on_snapshot(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A job computed on the document's current analysis (`fn(snapshot, *args)`, worker.Snapshot):
    None for a file that is not an eval file."""

    @functools.wraps(fn)
    def job(worker: Any, doc: Any, *args: Any) -> Any:
        snap = worker.snapshot(doc)
        return None if snap is None else fn(snap, *args)

    return job


def answers(method: str, options: Any = None, empty: Callable[[], Any] | None = lambda: None, *,
            snapshot: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The job named as the function answers request `method` about a document, given its params;
    `snapshot`: the function takes the document's Snapshot (on_snapshot), else (worker, doc)."""

    def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
        ANSWERED.append((method, options, empty, fn.__name__))
        return on_snapshot(fn) if snapshot else fn

    return declare
