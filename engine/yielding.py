"""Points where long work lets more urgent work in the same process go first.

The language server analyses files and builds large answers on worker threads while its event loop
answers requests. Python threads share one interpreter lock that changes hands only every few
milliseconds, and on a loaded machine the thread that holds it may not even be on a CPU: a request
waits for every worker in turn. Long loops (parsing item by item, checking prompt by prompt, walking a
tree for an outline) call `yield_point()` between items; the server installs a hook there that pauses
the worker while its event loop has something to do (`evalspec_lsp.loop_watch`). Without a hook (the
CLI) a yield point costs one global lookup.
"""

from __future__ import annotations

from collections.abc import Callable

_hook: Callable[[], None] | None = None


def set_yield_hook(hook: Callable[[], None] | None) -> None:
    """Call `hook` at every yield point, in whichever thread reaches it (None: no hook). The hook must
    return quickly when it has nothing to wait for, and must not raise."""
    global _hook
    _hook = hook


def yield_point() -> None:
    """Long work is at a point where it may pause (it holds no lock and nothing half-built is shared)."""
    hook = _hook
    if hook is not None:
        hook()
