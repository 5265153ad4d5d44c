"""The editor's features, a module each: the jobs it computes in an engine worker (`JOBS`, worker.py)
and, when it needs more than a job answering a request (`answers`), its handlers in the LSP process
(`register(server)`, main.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# (LSP method, its options, the empty answer, the job answering it): registered by main.build_server.
ANSWERED: list[tuple[str, Any, Callable[[], Any] | None, str]] = []


@dataclass(frozen=True)
class Refused:
    """A job's answer that the request is refused (LSP RequestFailed, with `message` for the user)."""

    message: str


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
