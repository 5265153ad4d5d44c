"""Workers over a run's cells, and the one queue their events come out of.

A fixed pool of workers (not one task per cell) keeps memory flat on big runs; the global and
per-provider limits in generate/calls.py decide how many calls are really in flight. Closing the stream early
(the consumer stops, the task is cancelled) cancels the workers: nothing runs on behind the caller's
back, and everything already received is in the journal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import TypeVar

from .events import Event

T = TypeVar("T")

# Events waiting in the queue past which a worker lets the consumer run before its next cell. A cell
# that never waits (an instant provider, the response cache, a replay) gives the loop no chance to run
# the consumer: its events (each AgentV row, each answer) piled up, the whole run's in memory.
BACKLOG = 64


async def stream_cells(queue: asyncio.Queue[Event | None], tasks: Iterable[T], work: Callable[[T], Awaitable[None]],
                       workers: int) -> AsyncGenerator[Event, None]:
    """Run `work` over `tasks` with `workers` workers; yield every event they put on `queue`."""
    pending = iter(tasks)

    async def worker() -> None:
        for task in pending:  # one shared iterator: each task is taken once
            await work(task)
            if queue.qsize() >= BACKLOG:
                await asyncio.sleep(0)  # the consumer takes every event queued before this worker goes on

    gathered = asyncio.gather(*(worker() for _ in range(max(1, workers))))
    gathered.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        await gathered  # re-raises a worker's exception (a bug: provider errors are events)
    finally:
        if not gathered.done():
            gathered.cancel()
            await asyncio.wait([gathered])
        if not gathered.cancelled():
            gathered.exception()  # retrieved: when the run is abandoned its first failure no longer matters
