#!/usr/bin/env python3
"""Where a run's memory goes: peak RSS of each stage of `evalspec run` on a generated blueprint.

Runs the real CLI in this process (`evalspec.cli.main`) against /work/shared/bench/mockllm.py on
loopback (the same blueprint as bench/run_throughput.py: N prompts × 1 model × 2 function points),
with hooks around the stages. Linux's peak RSS (VmHWM) is reset at the start of each stage
(`/proc/self/clear_refs`), so each line is that stage's own peak, and the RSS it leaves behind; with
its wall and CPU seconds (the process's, threads included: on a loaded machine the CPU compares):

    analysis     reading and checking the file (parse, located tree, model)
    plan         the cells
    cells        calling, scoring and journaling every cell (results held for the files: up to
                 cell_store.DEFAULT_BOUND cells in memory, the rest on disk)
    comparison   building the comparison object (Weval) / ordering the rows (AgentV)
    write        the comparison file and the artefact folder
    report       report.html (reads the results file back)

usage: run_memory.py [--format weval|agentv] [--prompts N] [--no-report] [--tracemalloc]
(--tracemalloc also prints, at the end of each stage, the memory traced as alive and its top allocation
sites, MEM_TOP of them (default 15) grouped by MEM_GROUP (lineno, default, or filename, traceback): slow,
big runs only with patience.)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_throughput import DEFAULT_MOCK, free_port, wait_for, write_agentv_suite, write_blueprint  # noqa: E402


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS since the last reset) in MB."""
    cur = peak = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return cur, peak


def reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


class Stages:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.cpu0 = time.process_time()
        self.rows: list[tuple[str, float, float, float, float]] = []
        self.current = "start"
        self.snapshot = False

    def enter(self, name: str) -> None:
        if self.current and self.current != "start" and self.snapshot:
            _top_allocations(f"alive at the end of the {self.current} stage")
        self.close()
        self.current = name
        self.t0 = time.perf_counter()
        self.cpu0 = time.process_time()
        reset_peak()
        if self.snapshot:
            import tracemalloc

            tracemalloc.reset_peak()

    def close(self) -> None:
        if self.current:
            cur, peak = rss_mb()
            self.rows.append((self.current, time.perf_counter() - self.t0, time.process_time() - self.cpu0, peak, cur))
            if self.snapshot and self.current != "start":
                import tracemalloc

                traced, traced_peak = tracemalloc.get_traced_memory()
                print(f"{self.current}: traced peak {traced_peak / 2**20:.1f} MB, {traced / 2**20:.1f} MB at its end",
                      file=sys.stderr)
            self.current = ""


def hook(stages: Stages, fmt: str) -> None:
    """Wrap the stage boundaries (module attributes the CLI and runners look up when called)."""
    import evalspec.analysis as analysis
    import evalspec.run.cli as run_cli
    import evalspec.run.runner as runner

    def wrap(mod: Any, name: str, stage: str, after: str | None = None) -> None:
        inner = getattr(mod, name)

        def wrapped(*a: Any, **kw: Any) -> Any:
            stages.enter(stage)
            try:
                return inner(*a, **kw)
            finally:
                if after:
                    stages.enter(after)

        setattr(mod, name, wrapped)

    wrap(analysis, "analyze_file", "analysis")
    wrap(runner, "plan_for", "plan", "cells")
    if fmt == "weval":
        import evalspec.run.write.weval as wr

        inner_cmp = wr.comparison_object

        def cmp(*a: Any, **kw: Any) -> Any:
            stages.enter("comparison")
            out = inner_cmp(*a, **kw)
            stages.enter("write")
            return out

        wr.comparison_object = cmp
    else:
        import evalspec.run.write.agentv as ar

        inner_write = ar.AgentvWriter.write

        def write(self: Any, *a: Any, **kw: Any) -> Any:
            stages.enter("write")
            return inner_write(self, *a, **kw)

        ar.AgentvWriter.write = write  # type: ignore[method-assign]
    inner_report = run_cli.write_report_beside

    def report(*a: Any, **kw: Any) -> Any:
        stages.enter("report")
        try:
            return inner_report(*a, **kw)
        finally:
            stages.close()

    run_cli.write_report_beside = report


def _top_allocations(when: str) -> None:
    import tracemalloc

    if not tracemalloc.is_tracing():
        return
    snap = tracemalloc.take_snapshot()
    total = sum(stat.size for stat in snap.statistics("filename"))
    print(f"{when}: {total / 2**20:.1f} MB traced; the top allocation sites:", file=sys.stderr)
    for stat in snap.statistics(os.environ.get("MEM_GROUP", "lineno"))[:int(os.environ.get("MEM_TOP", "15"))]:
        print(f"  {stat.size / 2**20:8.1f} MB {stat.count:9,} blocks  {stat.traceback}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=("weval", "agentv"), default="weval")
    ap.add_argument("--prompts", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--no-report", action="store_true")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--mock", type=Path, default=DEFAULT_MOCK)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="evalspec-mem-"))
    path = work / ("m.eval.yaml" if args.format == "agentv" else "m.weval.yml")
    (write_agentv_suite if args.format == "agentv" else write_blueprint)(path, args.prompts)
    port = free_port()
    mock = subprocess.Popen([sys.executable, str(args.mock), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
        os.environ.update({"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "sk-bench-dummy"})
        if args.tracemalloc:
            import tracemalloc

            tracemalloc.start()
        stages = Stages()
        stages.snapshot = args.tracemalloc
        hook(stages, args.format)
        from evalspec.cli import main as cli

        out = Path("/dev/shm") if Path("/dev/shm").is_dir() else work
        out = Path(tempfile.mkdtemp(prefix="evalspec-mem-out-", dir=out))
        t0 = time.perf_counter()
        argv = ["run", str(path), "-j", str(args.concurrency), "-o", str(out)]
        if args.no_report:
            argv.append("--no-report")
        with open(os.devnull, "w") as null:
            saved = sys.stdout
            sys.stdout = null
            try:
                code = cli(argv)
            finally:
                sys.stdout = saved
        stages.close()
        wall = time.perf_counter() - t0
        print(f"{args.format}, {args.prompts:,} prompts, exit {code}, wall {wall:.2f} s, "
              f"peak RSS of the process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        print(f"{'stage':<12}{'seconds':>9}{'CPU s':>9}{'peak MB':>10}{'after MB':>10}")
        for name, secs, cpu, peak, cur in stages.rows:
            if name != "start":
                print(f"{name:<12}{secs:>9.2f}{cpu:>9.2f}{peak:>10.0f}{cur:>10.0f}")
        subprocess.run(["rm", "-rf", str(out)], check=False)
    finally:
        mock.terminate()
        mock.wait(5)
        subprocess.run(["rm", "-rf", str(work)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
