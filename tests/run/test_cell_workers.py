"""run/pool.py's stream_cells: a worker's failure ends the stream with that failure, and the other workers,
still waiting on their calls, are cancelled and done before it ends — none runs on while the run closes
(a full disk broke the journal under one worker while the others went on, and one of them opened a new
HTTP session after the run had closed its client: "Unclosed client session" at exit)."""

from __future__ import annotations

import asyncio

import pytest

from evalspec.run.pool import EventQueue, stream_cells


class Broken(Exception):
    pass


async def _stream(n_tasks: int, workers: int) -> tuple[list[str], list[int], list[int]]:
    queue: EventQueue = EventQueue()
    never = asyncio.Event()
    started: list[int] = []
    cancelled: list[int] = []
    seen: list[str] = []

    async def work(task: int) -> None:
        started.append(task)
        queue.put_nowait(f"started {task}")
        if task == 2:
            await asyncio.sleep(0.01)  # the others are waiting on their calls by now
            raise Broken("the journal broke")
        try:
            await never.wait()  # a call that has not answered yet
        except asyncio.CancelledError:
            cancelled.append(task)
            raise

    with pytest.raises(Broken):
        async for event in stream_cells(queue, range(n_tasks), work, workers):
            seen.append(event)  # type: ignore[arg-type]
    return seen, started, cancelled


def test_a_workers_failure_cancels_the_other_workers_before_the_stream_ends() -> None:
    async def main() -> None:
        seen, started, cancelled = await _stream(10, 4)
        assert sorted(started) == [0, 1, 2, 3]  # four workers, each on its first task
        assert sorted(cancelled) == [0, 1, 3]  # each still waiting was cancelled before the stream ended
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert others == []  # nothing left running behind the caller's back
        assert "started 2" in seen

    asyncio.run(main())


def test_the_stream_runs_every_task_once_when_nothing_fails() -> None:
    async def main() -> None:
        queue: EventQueue = EventQueue()
        done: list[int] = []

        async def work(task: int) -> None:
            await asyncio.sleep(0)
            done.append(task)
            queue.put_nowait(task)

        got = [event async for event in stream_cells(queue, range(50), work, 8)]
        assert sorted(done) == list(range(50)) and sorted(got) == list(range(50))  # type: ignore[type-var]

    asyncio.run(main())


def test_batches_hold_every_event_waiting_in_order_and_stop_at_the_end() -> None:
    """stream_cell_batches: the events waiting when the queue is read come as one list, in the order they
    were put; what was put after the end's None stays in the queue (the pipeline's own notices)."""
    from evalspec.run.pool import stream_cell_batches

    async def main() -> None:
        queue: EventQueue = EventQueue()

        async def work(task: int) -> None:
            await asyncio.sleep(0)
            for k in range(3):  # a cell's few events, put without a wait between them
                queue.put_nowait((task, k))

        batches = [batch async for batch in stream_cell_batches(queue, range(20), work, 4)]
        events = [e for batch in batches for e in batch]
        assert sorted(events) == [(t, k) for t in range(20) for k in range(3)]  # type: ignore[type-var]
        for t in range(20):
            assert [k for task, k in events if task == t] == [0, 1, 2]  # type: ignore[misc]
        assert len(batches) < len(events) and max(len(b) for b in batches) >= 3  # several events a list

        queue = EventQueue()

        async def last(task: int) -> None:
            queue.put_nowait("answer")

        stream = stream_cell_batches(queue, range(1), last, 1)
        assert await stream.__anext__() == ["answer"]
        await asyncio.sleep(0.01)  # the workers are done: the end's None is queued
        queue.put_nowait("notice")  # put after it (as the pipeline's "committed" notice can be)
        assert [batch async for batch in stream] == []
        assert queue.get_nowait() == "notice"  # left in the queue

    asyncio.run(main())
