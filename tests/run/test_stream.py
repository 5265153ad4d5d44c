"""The event stream and its limits: early close, per-provider caps, rendering, noCache."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from run_records import records_of

from evalspec.providers.base import ChatRequest, ChatResult
from evalspec.run.events import (
    Cell,
    CellFailed,
    ModelSummary,
    Retrying,
    RunFinished,
    RunStarted,
    RunSummary,
    Scored,
)
from evalspec.run.generate.calls import Calls
from evalspec.run.options import RunOptions
from evalspec.run.render import HumanRenderer, format_table

from .conftest import SmartFake, comparison, env_for, options, write


class _Gate:
    """A provider whose calls wait on an event, counting how many are in flight."""

    name = "gate"

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0
        self.release = asyncio.Event()

    async def chat(self, req: ChatRequest, *, on_retry=None) -> ChatResult:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await self.release.wait()
        self.in_flight -= 1
        return ChatResult("ok")


def test_global_and_per_provider_limits() -> None:
    async def scenario() -> tuple[int, int]:
        calls = Calls(RunOptions(provider_concurrency={"slow": 2}), lambda e: None, concurrency=5)
        slow, fast = _Gate(), _Gate()
        req = ChatRequest.of("m", "hi")
        jobs = [asyncio.ensure_future(calls.chat(slow, req, Cell("p", "s"), limit_key="slow")) for _ in range(6)]
        jobs += [asyncio.ensure_future(calls.chat(fast, req, Cell("p", "f"), limit_key="fast")) for _ in range(6)]
        for _ in range(20):
            await asyncio.sleep(0)
        peaks = (slow.peak, slow.peak + fast.peak)
        slow.release.set()
        fast.release.set()
        await asyncio.gather(*jobs)
        return peaks

    slow_peak, total_peak = asyncio.run(scenario())
    assert slow_peak == 2  # the provider cap
    assert total_peak == 5  # the global cap


def test_closing_the_stream_early_stops_the_run(tmp_path: Path, smart: SmartFake, monkeypatch) -> None:
    from evalspec.analysis import analyze_file
    from evalspec.run.journal import run_store
    from evalspec.run.runner import plan_for, run

    # A cell is reported once its records are committed: with the run's commit interval (0.5 s) the
    # fake answers all the prompts before the first report; the stream's closing is what is tested here.
    monkeypatch.setattr(run_store, "COMMIT_EVERY", 0.01)

    lines = ["models: [openai:candidate]", "---"]
    lines += [f"- id: p{i}\n  prompt: q{i}\n  should: [$contains: q]" for i in range(300)]
    bp = write(tmp_path / "c.weval.yml", "\n".join(lines) + "\n")
    opts = options(tmp_path, env_for(smart), concurrency=2)
    plan = plan_for(analyze_file(bp), opts)

    async def scenario() -> int:
        stream = run(plan, opts)
        async for event in stream:
            if event.type == "scored":
                break
        await stream.aclose()
        await asyncio.sleep(0.05)
        return len([t for t in asyncio.all_tasks() if t is not asyncio.current_task()])

    assert asyncio.run(scenario()) == 0
    assert smart.count < 300  # (30 were all answered before the first report at times: a commit's wait)
    journal = records_of(next((tmp_path / "out").glob("live/blueprints/*/*.run.db")))
    assert {"t": "done"} not in journal and any(r["t"] == "score" for r in journal)


def test_tty_progress_bar_shows_retries_and_the_table() -> None:
    out, err = io.StringIO(), io.StringIO()
    r = HumanRenderer(out, err, tty=True)
    cell = Cell("p1", "openai:x[temp:0]")
    r(RunStarted({"kind": "weval", "file": "f.yml", "run_label": "abc", "cells": 2}))
    r(Retrying(cell, 1, 2.0, "429"))
    assert "retrying 1 (429; back-off" in err.getvalue()
    r(Scored(cell, 0.9, "pass"))
    r(CellFailed(Cell("p2", "openai:x[temp:0]"), "boom", "server"))
    summary = RunSummary("weval", "abc", (ModelSummary("openai:x[temp:0]", 2, 1, 0.9, 1, 0, 0, 0, 1),),
                         files=("r.json",), calls=2, notes=("1 judged point(s) not scored: no key",))
    r(RunFinished(summary))
    r.close()
    bar = err.getvalue()
    assert "2/2" in bar and "errors 1" in bar and "error: p2 × openai:x[temp:0]: boom" in bar
    table = out.getvalue()
    assert "openai:x[temp:0]" in table and "0.900" in table and "note: 1 judged point(s) not scored" in table
    assert format_table(summary).splitlines()[0].split() == ["model", "cells", "mean", "pass", "borderline", "fail",
                                                             "not", "scored", "errors"]


def test_no_cache_prompts_bypass_the_cache(tmp_path: Path, smart: SmartFake) -> None:
    from .conftest import run_events

    bp = write(tmp_path / "n.weval.yml", """models: [openai:candidate]
---
- id: cached
  prompt: Hi
  should: [$contains: Hi]
- id: fresh
  prompt: Hello
  noCache: true
  should: [$contains: Hello]
""")
    run_events(bp, options(tmp_path, env_for(smart), cache=True))
    assert smart.count == 2
    smart.reset()
    run_events(bp, options(tmp_path, env_for(smart), cache=True))
    assert [r["messages"][-1]["content"] for r in smart.chat_requests()] == ["Hello"]
    assert comparison(tmp_path / "out")["allFinalAssistantResponses"]["cached"]["openai:candidate[temp:0]"] == "ECHO: Hi"
