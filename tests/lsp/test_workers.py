"""A request's work counts as under way (background work gives way to it) from when it is submitted
until its result is back on the event loop, not only while a worker runs it (server/workers.py,
documents.in_thread). Ordering, not timings."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from evalspec.analysis import analyze
from evalspec.yielding import set_yield_hook, yield_point
from evalspec_lsp import workers
from evalspec_lsp.documents import in_thread

GUARD_S = 20.0  # against a hang, not a timing


def test_a_request_job_counts_from_its_submission_to_its_end() -> None:
    go, ran = threading.Event(), threading.Event()
    workers.no_foreground.wait(GUARD_S)
    workers.submit(lambda: (go.wait(GUARD_S), ran.set()), foreground=True)
    # Not started yet (it waits for `go`, and a worker may not even have picked it up): counted already.
    assert workers.foreground_running() and not workers.no_foreground.is_set()
    go.set()
    assert ran.wait(GUARD_S)
    assert workers.no_foreground.wait(GUARD_S) and not workers.foreground_running()


def test_background_jobs_are_not_counted() -> None:
    go, ran = threading.Event(), threading.Event()
    workers.no_foreground.wait(GUARD_S)
    workers.submit(lambda: (go.wait(GUARD_S), ran.set()), foreground=False)
    assert not workers.foreground_running()
    go.set()
    assert ran.wait(GUARD_S)


def test_a_request_job_counts_until_its_result_is_on_the_loop() -> None:
    async def main() -> None:
        workers.no_foreground.wait(GUARD_S)
        done = threading.Event()

        def job() -> int:
            done.set()
            return 7

        future = in_thread(job, foreground=True)
        # The loop is held here: the worker has made the result, the loop has not taken it yet.
        assert done.wait(GUARD_S)
        assert workers.foreground_running()
        assert await asyncio.wait_for(future, GUARD_S) == 7
        assert await asyncio.to_thread(workers.no_foreground.wait, GUARD_S)

    asyncio.run(main())


def test_a_failed_request_job_is_no_longer_counted_either() -> None:
    async def main() -> None:
        def job() -> None:
            raise ValueError("boom")

        future = in_thread(job, foreground=True)
        try:
            await asyncio.wait_for(future, GUARD_S)
        except ValueError:
            pass
        else:
            raise AssertionError("the job's failure was not passed on")
        assert await asyncio.to_thread(workers.no_foreground.wait, GUARD_S)

    asyncio.run(main())


def test_a_result_left_on_a_loop_that_closed_is_no_longer_counted() -> None:
    """The loop stops before it takes a request's result and is closed (pytest-asyncio's loops end so):
    the count ends with the dropped callback. It stayed up for good, and every later background job
    paused at each yield point for as long as a pause may last (five tests failed after one such test)."""
    workers.no_foreground.wait(GUARD_S)
    loop = asyncio.new_event_loop()
    go = threading.Event()

    async def request() -> asyncio.Future[int]:
        return in_thread(lambda: go.wait(GUARD_S) and 7, foreground=True)

    future = loop.run_until_complete(request())  # the loop stops with the job still running
    go.set()
    for _ in range(int(GUARD_S / 0.01)):  # until the worker has handed its result to the stopped loop
        if loop._ready:  # type: ignore[attr-defined]
            break
        threading.Event().wait(0.01)
    assert loop._ready and workers.foreground_running()  # type: ignore[attr-defined]
    loop.close()
    assert not future.done()
    assert workers.no_foreground.wait(GUARD_S) and not workers.foreground_running()


def test_a_hold_ends_once() -> None:
    workers.no_foreground.wait(GUARD_S)
    first, second = workers.ForegroundHold(), workers.ForegroundHold()
    first.release()
    first.release()
    assert workers.foreground_running()  # the second is still held
    del second
    assert not workers.foreground_running() and workers.no_foreground.is_set()
    del first
    assert not workers.foreground_running()


def _stop_hook() -> Iterator[None]:
    set_yield_hook(workers.stop_if_requested)  # what the loop watch's hook does first
    try:
        yield
    finally:
        set_yield_hook(None)


stop_hook = pytest.fixture(_stop_hook)


def test_a_job_nobody_waits_for_stops_at_its_next_yield_point(stop_hook: None) -> None:
    async def main() -> None:
        started, passed = threading.Event(), []
        stop = workers.Stop()

        def job() -> None:
            started.set()
            while len(passed) < 10_000_000:  # far longer than the test waits, unless it stops
                yield_point()
                passed.append(1)

        future = in_thread(job, foreground=True, stop=stop)
        assert await asyncio.to_thread(started.wait, GUARD_S)
        stop.requested = True
        with pytest.raises(asyncio.CancelledError):  # stopped: cancelled, no exception left unretrieved
            await asyncio.wait_for(future, GUARD_S)
        assert future.cancelled() and len(passed) < 10_000_000
        assert await asyncio.to_thread(workers.no_foreground.wait, GUARD_S)

    asyncio.run(main())


def test_work_a_memo_keeps_is_not_stopped_with_the_request_that_started_it(stop_hook: None) -> None:
    """The layout of a million documents takes seconds: stopped with each request past its budget, it was
    never finished, and every later request would start it again."""
    analysis = analyze("title: t\nmodels: [a:b]\n---\n- prompt: hi\n", "w.yml")
    stop = workers.Stop()
    computing, finish = threading.Event(), threading.Event()

    def slow_memo(_: Any) -> str:
        computing.set()
        finish.wait(GUARD_S)
        yield_point()  # the request stopped meanwhile: the memo's work goes on
        return "made"

    def job() -> str:
        value = analysis.memoised("test.slow", slow_memo)
        yield_point()  # the request's own work, past the memo: it stops here
        return value

    async def main() -> None:
        future = in_thread(job, foreground=True, stop=stop)
        assert await asyncio.to_thread(computing.wait, GUARD_S)
        stop.requested = True
        finish.set()
        with pytest.raises(asyncio.CancelledError):  # the request's own work stops after the memo
            await asyncio.wait_for(future, GUARD_S)

    asyncio.run(main())
    assert analysis.memo["test.slow"] == "made"
