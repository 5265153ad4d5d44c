#!/usr/bin/env python3
"""`evalspec` with its memory logged at each phase of a run: `python bench/phase_rss.py LOG run ARGS...`.

Runs the real CLI in this process (`evalspec.cli.main(ARGS)`) with hooks at the phase boundaries and
appends a line to LOG at each: seconds since the start, the phase that begins, the RSS now, and the peak
RSS since the previous line (Linux's VmHWM, reset at each line through /proc/self/clear_refs) and since
the start. The phases: analysis, plan, each batch-mode phase (`batch N`: the stage's submission, polling
and collection of one phase's requests), key points taken, cells, after the cells, write, end. Meant as
the command `bench/batch_run.py --phases PREFIX` starts (through bench/peak_rss.py); stdout and stderr are
the CLI's own. The reset of VmHWM is the kernel's peak for wait4's ru_maxrss too: what bench/peak_rss.py
reports of a run through this is its peak since the last line (a killed run's, since its last phase
began); the run's peak is the larger of that and the log's 'peak so far'.

PHASE_TRACEMALLOC=N: also trace allocations and write, at each line, the memory traced as alive and the
N sites holding most of it (slow: a 10,000-prompt run, not a 100,000-prompt one). PHASE_GROUP: lineno
(default) or traceback (PHASE_FRAMES deep, default 4).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class PhaseLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.t0 = time.perf_counter()
        self.peak = 0.0
        self.top = int(os.environ.get("PHASE_TRACEMALLOC", "0") or 0)
        self.batches = 0

    def mark(self, phase: str) -> None:
        cur, hwm = _rss()
        self.peak = max(self.peak, hwm)
        lines = [f"{time.perf_counter() - self.t0:9.1f} s  {phase:<22} RSS {cur:6.0f} MB  peak since last "
                 f"{hwm:6.0f} MB  peak so far {self.peak:6.0f} MB"]
        if self.top:
            lines += _traced(self.top)
        with self.path.open("a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        _reset_peak()


def _rss() -> tuple[float, float]:
    cur = hwm = 0.0
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return cur, hwm


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        pass


def _traced(top: int) -> list[str]:
    import tracemalloc

    snap = tracemalloc.take_snapshot()
    traced, peak = tracemalloc.get_traced_memory()
    group = os.environ.get("PHASE_GROUP", "lineno")
    out = [f"           traced {traced / 2**20:.1f} MB alive, {peak / 2**20:.1f} MB at most since the last line"]
    for stat in snap.statistics(group)[:top]:
        where = stat.traceback.format()[-8:] if group == "traceback" else [str(stat.traceback)]
        out.append(f"           {stat.size / 2**20:8.1f} MB {stat.count:9,}  " + " <- ".join(w.strip() for w in where
                                                                                            if w.strip()))
    tracemalloc.reset_peak()
    return out


def hook(log: PhaseLog) -> None:
    import evalspec.analysis as analysis
    import evalspec.run.pipeline as pipeline
    import evalspec.run.runner as runner
    from evalspec.run.generate.batch_stage import BatchStage
    from evalspec.run.score.judges import WevalJudges
    from evalspec.run.weval_stages import Weval

    def before(mod: Any, name: str, phase: str, after: str | None = None) -> None:
        inner: Callable[..., Any] = getattr(mod, name)

        @functools.wraps(inner)
        def wrapped(*a: Any, **kw: Any) -> Any:
            log.mark(phase)
            try:
                return inner(*a, **kw)
            finally:
                if after:
                    log.mark(after)

        setattr(mod, name, wrapped)

    before(analysis, "analyze_file", "analysis", "analysis done")
    before(runner, "plan_for", "plan", "plan done")
    before(Weval, "write", "write", "written")
    inner_cells = pipeline.stream_cell_batches

    def cells(*a: Any, **kw: Any) -> Any:
        log.mark("cells")
        return inner_cells(*a, **kw)

    pipeline.stream_cell_batches = cells  # type: ignore[assignment]
    inner_after = Weval.stages.after[0]

    def after_cells(run: Any) -> AsyncIterator[Any]:
        log.mark("after cells")
        return inner_after(run)

    Weval.stages = dataclasses.replace(Weval.stages, after=(after_cells,))  # type: ignore[misc]
    inner_run = BatchStage.run

    async def batch_run(self: Any, requests: Any) -> AsyncIterator[Any]:
        log.batches += 1
        log.mark(f"batch phase {log.batches}")
        async for event in inner_run(self, requests):
            yield event
        log.mark(f"batch phase {log.batches} done")

    BatchStage.run = batch_run  # type: ignore[method-assign]
    inner_take = WevalJudges.take_key_points

    async def take_key_points(self: Any) -> None:
        log.mark("key points")
        await inner_take(self)
        log.mark("key points taken")

    WevalJudges.take_key_points = take_key_points  # type: ignore[method-assign]


def main() -> int:
    log = PhaseLog(Path(sys.argv[1]))
    if log.top:
        import tracemalloc

        tracemalloc.start(int(os.environ.get("PHASE_FRAMES", "4")))
    log.mark("start")
    hook(log)
    from evalspec.cli import main as cli

    try:
        return cli(sys.argv[2:])
    finally:
        log.mark("end")


if __name__ == "__main__":
    sys.exit(main())
