"""The loop watch (server/loop_watch.py): worker threads pause at the engine's yield points while the
event loop has work, and only then. Ordering, not timings: the bounds on a pause are set far beyond
what a test waits, so a worker that did not wait would be seen passing a yield point."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator

import pytest

from evalspec.yielding import yield_point
from evalspec_lsp import loop_watch
from evalspec_lsp.loop_watch import LoopWatch

GUARD_S = 20.0


@pytest.fixture
def unbounded(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every yield point looks at the loop, and a pause lasts as long as the loop has work."""
    monkeypatch.setattr(loop_watch, "CHECK_EVERY_S", 0.0)
    monkeypatch.setattr(loop_watch, "MAX_PAUSE_S", 60.0)
    monkeypatch.setattr(loop_watch, "STUCK_AFTER_S", 60.0)
    yield
    loop_watch.uninstall()


@pytest.fixture
def idle_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_an_idle_loop_has_no_work(idle_loop: asyncio.AbstractEventLoop) -> None:
    watch = LoopWatch(idle_loop)
    watch.waiting = True  # as inside its selector
    idle_loop.call_later(3600, lambda: None)
    assert watch.watching and not watch.loop_has_work()


def test_a_due_timer_is_work(idle_loop: asyncio.AbstractEventLoop) -> None:
    watch = LoopWatch(idle_loop)
    watch.waiting = True
    idle_loop.call_at(idle_loop.time() - 1, lambda: None)  # a request's budget that ran out
    assert watch.loop_has_work()


def test_a_ready_descriptor_is_work(idle_loop: asyncio.AbstractEventLoop) -> None:
    watch = LoopWatch(idle_loop)
    watch.waiting = True
    idle_loop.call_soon_threadsafe(lambda: None)  # what a worker does to hand over its result
    assert watch.loop_has_work()


def test_a_loop_out_of_its_selector_has_work_until_it_looks_stuck(idle_loop: asyncio.AbstractEventLoop,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    watch = LoopWatch(idle_loop)
    watch.waiting = False
    watch.busy_since = time.perf_counter()
    assert watch.loop_has_work()
    watch.busy_since -= loop_watch.STUCK_AFTER_S + 1  # blocked (a client that does not read): carry on
    assert not watch.loop_has_work()


def test_a_worker_waits_while_the_loop_runs_a_callback(unbounded: None) -> None:
    passed = 0  # yield points a worker went through
    stop = threading.Event()

    def worker() -> None:
        nonlocal passed
        while not stop.is_set():
            yield_point()
            passed += 1

    seen: dict[str, int] = {}

    async def main() -> None:
        assert loop_watch.install(asyncio.get_running_loop()) is not None
        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        while passed < 3:  # the worker runs while the loop waits
            await asyncio.sleep(0.01)
        seen["before"] = passed
        time.sleep(0.3)  # a callback of the loop at work (the lock is free: the worker could run)
        seen["after"] = passed
        started = passed
        while passed < started + 3:  # back in the selector: the worker goes on
            await asyncio.sleep(0.01)
        stop.set()
        thread.join(GUARD_S)

    asyncio.run(asyncio.wait_for(main(), GUARD_S))
    assert seen["after"] - seen["before"] <= 1  # at most the step it was in when the callback began


def test_the_loop_thread_never_waits_for_itself(unbounded: None) -> None:
    async def main() -> int:
        watch = loop_watch.install(asyncio.get_running_loop())
        assert watch is not None
        for _ in range(100):
            yield_point()  # the loop is running this very code: busy, but it must not wait on itself
        return watch.pauses

    assert asyncio.run(asyncio.wait_for(main(), GUARD_S)) == 0


def test_a_late_timer_is_noted_as_lag_which_fades(idle_loop: asyncio.AbstractEventLoop,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    watch = LoopWatch(idle_loop)
    assert watch.lag.recent() == 0.0

    async def late_timer() -> None:
        fired = asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, fired.set)
        time.sleep(0.3)  # the loop is held past the timer's time: it runs late
        await fired.wait()

    idle_loop.run_until_complete(late_timer())
    seen = watch.lag.recent()
    assert seen >= 0.2
    # Later it counts for less, and a smaller lateness does not replace a larger recent one.
    watch.lag.note(0.05)
    assert watch.lag.recent() >= 0.2
    clock = time.perf_counter() + 4 * loop_watch.LAG_HALF_LIFE_S
    monkeypatch.setattr(loop_watch.time, "perf_counter", lambda: clock)
    assert watch.lag.recent() <= seen / 15


def test_a_late_loop_shortens_the_request_budget(idle_loop: asyncio.AbstractEventLoop) -> None:
    from evalspec_lsp import server as server_module
    from evalspec_lsp.server import ANSWER_WITHIN_S, MIN_BUDGET_S, REQUEST_BUDGET_S, EvalspecServer

    server = EvalspecServer()
    watch = LoopWatch(idle_loop)
    loop_watch._installed = watch
    try:
        assert server.remaining_budget() == REQUEST_BUDGET_S  # an idle loop: the whole budget
        watch.lag.note(0.3)  # requests waited 0.3 s before they were read, and will after the deadline
        assert MIN_BUDGET_S < server.remaining_budget() <= ANSWER_WITHIN_S - 0.6 + 0.01
        watch.lag.note(2.0)
        assert server.remaining_budget() == MIN_BUDGET_S  # never nothing: an answer ready now is given
        server.settings.request_budget_s = 30.0  # asked for (a slow CI): kept as asked
        assert server.remaining_budget() == 30.0
    finally:
        loop_watch.uninstall()
    assert server_module.loop_watch.installed() is None


def test_a_long_stretch_of_work_is_noted_as_lag(idle_loop: asyncio.AbstractEventLoop) -> None:
    watch = LoopWatch(idle_loop)

    async def busy() -> None:
        await asyncio.sleep(0)
        time.sleep(0.3)  # one callback holding the loop: a message arriving now waits this long
        await asyncio.sleep(0)

    idle_loop.run_until_complete(busy())
    assert watch.lag.recent() >= 0.2


def test_with_info_logging_a_stalled_loop_is_logged_with_where_it_is(monkeypatch: pytest.MonkeyPatch,
                                                                      unbounded: None) -> None:
    """What held the loop, for the log a slow answer is looked up in (`--log-file`)."""
    monkeypatch.setattr(loop_watch, "STALL_S", 0.05)
    logged = threading.Event()
    records: list[logging.LogRecord] = []

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)
            logged.set()

    handler = Seen(logging.INFO)
    level = loop_watch.log.level
    loop_watch.log.setLevel(logging.INFO)  # (setLevel: the logger caches what is enabled)
    loop_watch.log.addHandler(handler)
    try:
        async def main() -> None:
            assert loop_watch.install(asyncio.get_running_loop()) is not None
            await asyncio.sleep(0)
            assert logged.wait(GUARD_S)  # the loop itself is held here until the stall is logged

        asyncio.run(asyncio.wait_for(main(), GUARD_S))
    finally:
        loop_watch.log.removeHandler(handler)
        loop_watch.log.setLevel(level)
    message = records[0].getMessage()
    assert "the event loop has run" in message and "test_loop_watch.py" in message and " main" in message, message
