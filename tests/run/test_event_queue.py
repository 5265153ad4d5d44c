"""run/pool.py's EventQueue: the run's events in order, a waiting consumer woken by the next event, and a
cancelled wait that loses nothing (what asyncio.Queue did for the pipeline before)."""

from __future__ import annotations

import asyncio

import pytest

from evalspec.run.pool import EventQueue


def test_first_in_first_out_without_waiting() -> None:
    q: EventQueue[int] = EventQueue()
    assert q.empty() and q.qsize() == 0
    for n in range(5):
        q.put_nowait(n)
    assert q.qsize() == 5 and not q.empty()
    assert [q.get_nowait() for _ in range(3)] == [0, 1, 2]
    assert asyncio.run(q.get()) == 3  # an item waiting: taken at once
    assert q.get_nowait() == 4
    with pytest.raises(asyncio.QueueEmpty):
        q.get_nowait()


async def test_a_waiting_get_is_woken_by_the_next_item() -> None:
    q: EventQueue[str] = EventQueue()
    got = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    assert not got.done()  # nothing yet: it waits
    q.put_nowait("a")
    q.put_nowait("b")
    assert await asyncio.wait_for(got, 1) == "a"
    assert q.get_nowait() == "b"


async def test_two_waiting_gets_each_take_one_item_in_turn() -> None:
    q: EventQueue[int] = EventQueue()
    first, second = asyncio.create_task(q.get()), asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.put_nowait(1)
    q.put_nowait(2)
    assert await asyncio.wait_for(asyncio.gather(first, second), 1) == [1, 2]
    assert q.empty()


async def test_a_cancelled_get_loses_no_item() -> None:
    q: EventQueue[int] = EventQueue()
    cancelled, waiting = asyncio.create_task(q.get()), asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.put_nowait(7)  # wakes the first getter ...
    cancelled.cancel()  # ... which is cancelled before it runs: the item goes to the other one
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert await asyncio.wait_for(waiting, 1) == 7
    # A getter cancelled while it waits leaves nothing behind: the next item is the next get's.
    gone = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    q.put_nowait(8)
    assert await asyncio.wait_for(q.get(), 1) == 8
