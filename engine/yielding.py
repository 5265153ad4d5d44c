"""Points where long work lets more urgent work in the same process go first, or stops.

The language server analyses files and builds large answers on worker threads while its event loop
answers requests. Python threads share one interpreter lock that changes hands only every few
milliseconds, and on a loaded machine the thread that holds it may not even be on a CPU: a request
waits for every worker in turn. Long loops (parsing item by item, checking prompt by prompt, walking a
tree for an outline) call `yield_point()` between items; the server installs a hook there that pauses
the worker while its event loop has something to do (`evalspec_lsp.loop_watch`). Without a hook (the
CLI) a yield point costs one global lookup.

The hook may also stop the work there, raising `Abandoned`: a request's computation that no request
waits for any more (they were all answered "still checking", or cancelled). Work whose result a memo
keeps for later requests runs `kept()` and is never stopped.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

_hook: Callable[[], None] | None = None
_local = threading.local()


class Abandoned(BaseException):
    """Raised at a yield point in work nobody waits for. A BaseException, as asyncio's CancelledError:
    the `except Exception` that turns a checker's failure into a finding must let it through."""


def set_yield_hook(hook: Callable[[], None] | None) -> None:
    """Call `hook` at every yield point, in whichever thread reaches it (None: no hook). The hook must
    return quickly when it has nothing to wait for, and raise nothing but `Abandoned`."""
    global _hook
    _hook = hook


def yield_point() -> None:
    """Long work is at a point where it may pause or stop (it holds no lock and nothing half-built is
    shared)."""
    hook = _hook
    if hook is not None:
        hook()


@contextlib.contextmanager
def kept() -> Iterator[None]:
    """Work whose result is kept (a memo other requests will read): not stopped while it runs."""
    _local.kept = getattr(_local, "kept", 0) + 1
    try:
        yield
    finally:
        _local.kept -= 1


def is_kept() -> bool:
    return bool(getattr(_local, "kept", 0))
