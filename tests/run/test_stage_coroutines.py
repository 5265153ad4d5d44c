"""The cell stages that never wait are plain functions (pipeline.run_stages awaits only what a stage returns
awaitable): a coroutine made and awaited per stage per cell was ~0.5 µs each, for nothing."""

from __future__ import annotations

import inspect

from evalspec.run import agentv_stages, weval_stages


def test_stages_that_never_wait_make_no_coroutine() -> None:
    for stage in (agentv_stages.resumed, agentv_stages.halted, agentv_stages.attempt, agentv_stages.trials,
                  agentv_stages.write, weval_stages.rubric, weval_stages.functions, weval_stages.judges,
                  weval_stages.aggregate, weval_stages.write):
        assert not inspect.iscoroutinefunction(stage), stage.__qualname__
    # the one case of Weval's rubric that waits (key points extracted from the ideal) is a coroutine of its own
    assert inspect.iscoroutinefunction(weval_stages._extracted)
