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
