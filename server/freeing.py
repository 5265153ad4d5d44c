"""Large analyses freed a slice at a time on a worker thread, never in one go on the event loop.

Dropping the last reference to the analysis of a 4 MB file frees its objects in one cascade of C calls
that holds the GIL throughout: 0.4-2 s for an AgentV suite of 16,000 tests or 60,000 prompts of
anchors and aliases (their analyses share nothing with the next one). Done on the event loop when a
new analysis replaced it, that held every request on every document.

`free_later(obj)` hands the object to one daemon thread instead. It waits until it holds the last
reference (requests may still be reading the old analysis), then empties the large lists and dicts
that only that object reaches, deepest first, a slice at a time: each slice frees a few thousand
objects, and the GIL changes hands between slices. Only containers whose one holder is another
container it already owns are emptied (counted by `sys.getrefcount`), so nothing reachable from a
newer analysis (which shares parsed items and checked prompts with the old) is touched. An object
still referenced elsewhere after `GIVE_UP_S` is simply dropped.
"""

from __future__ import annotations

import gc
import logging
import queue
import sys
import threading
import time
from typing import Any

from evalspec.yielding import yield_point

log = logging.getLogger(__name__)

SLICE = 256  # list items (or dict entries) freed per step
BIG = 2 * SLICE  # containers with more than this are emptied a slice at a time
MAX_VISITS = 400_000  # objects looked into per freed object, at most (the largest containers sit near the top)
GIVE_UP_S = 60.0
POLL_S = 0.1

# sys.getrefcount of an object held by exactly one container, seen as `child` in `_big_containers`:
# the container, the list gc.get_referents returned, the loop variable, and getrefcount's argument.
_ONE_HOLDER = 4
# ... and of an object held only by the free thread's pending list (its entry, `obj`, the argument).
_ONLY_PENDING = 3

_queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
_lock = threading.Lock()
_thread: threading.Thread | None = None


def free_later(obj: Any) -> None:
    """Free `obj` on the free thread, once nothing else refers to it. The caller must drop its own
    references (after this call, `obj` is the thread's)."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="evalspec-free", daemon=True)
            _thread.start()
    _queue.put(obj)


def _run() -> None:
    pending: list[list[Any]] = []  # [deadline, object]
    while True:
        try:
            item = _queue.get(timeout=POLL_S if pending else None)
            pending.append([time.monotonic() + GIVE_UP_S, item])
            del item
            continue  # take everything queued before looking
        except queue.Empty:
            pass
        now = time.monotonic()
        keep: list[list[Any]] = []
        while pending:
            entry = pending.pop()
            if _sole(entry):
                try:
                    dismantle(entry.pop())
                except Exception:  # freeing must never stop; the rest goes the ordinary way
                    log.exception("freeing an analysis slice by slice failed")
            elif entry[0] < now:
                entry.clear()  # still used elsewhere: whoever holds it last frees it
            else:
                keep.append(entry)
            del entry
        pending = keep


def _sole(entry: list[Any]) -> bool:
    obj = entry[1]
    return sys.getrefcount(obj) == _ONLY_PENDING


def dismantle(root: Any) -> int:
    """Free `root`, which the caller holds as its only reference, emptying its large containers a
    slice at a time first. Returns how many containers were emptied that way."""
    big = _big_containers(root)
    del root  # holds nothing else: what the emptied containers leave frees in small pieces below
    emptied = 0
    while big:
        container = big.pop()  # the deepest first: an item freed never holds a large container
        if isinstance(container, list):
            while container:
                del container[-SLICE:]
                yield_point()  # requests go first (loop_watch.py): this is background work
        else:
            while container:
                for _ in range(min(SLICE, len(container))):
                    container.popitem()
                yield_point()
        emptied += 1
        del container
    return emptied


def _big_containers(root: Any) -> list[Any]:
    """The lists and dicts longer than BIG that only `root` reaches (through containers only it
    reaches), in the order found, shallowest first."""
    found: list[Any] = []
    todo = [root]
    visits = 0
    while todo and visits < MAX_VISITS:
        obj = todo.pop(0) if len(todo) < 64 else todo.pop()  # breadth first near the top, then depth first
        visits += 1
        if not visits & 1023:
            yield_point()
        refs = gc.get_referents(obj)
        for child in refs:
            if not gc.is_tracked(child):  # atoms (str, int, bytes …) and containers of atoms only
                continue
            if sys.getrefcount(child) != _ONE_HOLDER:  # shared (with a newer analysis, a cache, a type …)
                continue
            if type(child) in (list, dict) and len(child) > BIG:
                found.append(child)
            todo.append(child)
        del refs
    return found
