"""Workers over a run's cells, and the one queue their events come out of.

A fixed pool of workers (not one task per cell) keeps memory flat on big runs; the global and
per-provider limits in generate/calls.py decide how many calls are really in flight. Closing the stream early
(the consumer stops, the task is cancelled) or a worker's failure cancels the workers: nothing runs on
behind the caller's back, and everything already received is in the journal.

`EventQueue` is the queue: asyncio.Queue's unbounded put/get without its task accounting (`join`,
`task_done`, which nothing here uses): a few events a cell go through it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import Generic, TypeVar

from .events import Event

T = TypeVar("T")
ItemT = TypeVar("ItemT")


class EventQueue(Generic[ItemT]):
    """An unbounded FIFO for one event loop: `put_nowait`, `get`, `get_nowait` (QueueEmpty when empty),
    `empty`, `qsize`, as asyncio.Queue's."""

    def __init__(self) -> None:
        self._items: deque[ItemT] = deque()
        self._getters: deque[asyncio.Future[None]] = deque()

    def put_nowait(self, item: ItemT) -> None:
        self._items.append(item)
        if self._getters:
            self._wake_one()

    def get_nowait(self) -> ItemT:
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    async def get(self) -> ItemT:
        while not self._items:
            getter = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except BaseException:
                getter.cancel()
                try:
                    self._getters.remove(getter)
                except ValueError:  # woken, then cancelled: another getter takes what it was woken for
                    if self._items:
                        self._wake_one()
                raise
        return self._items.popleft()

    def _wake_one(self) -> None:
        getters = self._getters
        while getters:
            getter = getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)


# Events waiting in the queue past which a worker lets the consumer run before its next cell. A cell
# that never waits (an instant provider, the response cache, a replay) gives the loop no chance to run
# the consumer: its events (each AgentV row, each answer) piled up, the whole run's in memory.
BACKLOG = 64


async def stream_cells(queue: EventQueue[Event | None], tasks: Iterable[T], work: Callable[[T], Awaitable[None]],
                       workers: int) -> AsyncGenerator[Event, None]:
    """Run `work` over `tasks` with `workers` workers; yield every event they put on `queue`."""
    async with contextlib.aclosing(stream_cell_batches(queue, tasks, work, workers)) as batches:
        async for batch in batches:
            for event in batch:
                yield event


async def stream_cell_batches(queue: EventQueue[Event | None], tasks: Iterable[T],
                              work: Callable[[T], Awaitable[None]], workers: int,
                              also: Iterable[Awaitable[None]] = ()) -> AsyncGenerator[list[Event], None]:
    """`stream_cells`' events, as the lists of those waiting in the queue each time it is read: each layer
    an event passes on its way to the consumer (pipeline.py's) is an async generator's step, ~0.5 µs, and a
    cell has a few events; a list takes that step once for all the events waiting. `also`: what runs beside
    the workers and must end before the stream does (another process's cells, run/split.py)."""
    pending = iter(tasks)

    async def worker() -> None:
        for task in pending:  # one shared iterator: each task is taken once
            await work(task)
            if queue.qsize() >= BACKLOG:
                await asyncio.sleep(0)  # the consumer takes every event queued before this worker goes on

    running = [*(asyncio.ensure_future(worker()) for _ in range(max(1, workers))),
               *(asyncio.ensure_future(a) for a in also)]
    gathered = asyncio.gather(*running)
    gathered.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        ended = False
        while not ended:
            # Taken without a coroutine while events wait (most of them: each answer's few, those a commit
            # held back); awaited only when the queue is empty.
            event = queue.get_nowait() if queue.qsize() else await queue.get()
            if event is None:
                break
            batch = [event]
            while queue.qsize():  # every event waiting, up to the end's None (what follows it stays queued)
                event = queue.get_nowait()
                if event is None:
                    ended = True
                    break
                batch.append(event)
            yield batch
        await gathered  # re-raises a worker's exception (a bug: provider errors are events)
    finally:
        # A worker's failure ends the gather at once while the others run on: they are cancelled too, and
        # waited for, so that none makes a call (or a new HTTP session) once the run is closing.
        left = [task for task in running if not task.done()]
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left)
        if not gathered.cancelled():
            gathered.exception()  # retrieved: when the run is abandoned its first failure no longer matters
