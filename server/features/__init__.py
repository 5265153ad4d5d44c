"""The editor's features, a module each: its handlers in the LSP process (`register(server)`) and the
jobs it has computed in an engine worker (`JOBS`, worker.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def on_snapshot(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A job computed on the document's current analysis (`fn(snapshot, *args)`, worker.Snapshot):
    None for a file that is not an eval file."""

    @functools.wraps(fn)
    def job(worker: Any, doc: Any, *args: Any) -> Any:
        snap = worker.snapshot(doc)
        return None if snap is None else fn(snap, *args)

    return job
