#!/usr/bin/env python3
"""The LSP process while an editor's run goes on: its CPU time, and how fast it answers meanwhile.

    python bench/lsp_run.py [--prompts 2000] [--every 0.05]

Opens a blueprint of `--prompts` prompts (each with a `$contains` point), runs it from the editor
(`evalspec.run`) with the offline `echo` model (no network: what is left is the runner's own work,
planning aside: scoring, writing the run database), and until `evalspec/runFinished` sends every
`--every` seconds a request the LSP process answers alone (`evalspec.cancelRun` of a file with no
run). Prints JSON: the run's wall time, the LSP process's CPU seconds during it (from /proc), and
the probes' round trips (median, p95, max). A benchmark: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.lsp.raw_stdio import Raw


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--every", type=float, default=0.05)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    client = Raw(folder, [sys.executable, "-m", "evalspec_lsp"], hang_guard_s=600)
    try:
        client.initialize(folder, {"requestBudgetMs": 60_000, "runCosts": False,
                                   "run": {"models": ["echo"], "output": str(folder / "results"), "cache": False}})
        text = "title: Bench\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: Say hello {i}\n  should:\n    - $contains: hello\n" for i in range(args.prompts))
        uri = client.open(folder / "bench.weval.yml", text)
        client.next(lambda m: m.get("method") == "textDocument/publishDiagnostics", "the first diagnostics")
        other = (folder / "none.weval.yml").as_uri()
        before = cpu_s(client.proc.pid)
        began = time.perf_counter()
        client.send({"id": "run", "method": "workspace/executeCommand", "params": {
            "command": "evalspec.run", "arguments": [{"uri": uri}]}})
        assert client.reply("run")["result"]["ok"] is True
        probes: list[float] = []
        n = 0
        while not any(m.get("method") == "evalspec/runFinished" for m in client.seen):
            n += 1
            sent = time.perf_counter()
            client.send({"id": f"probe-{n}", "method": "workspace/executeCommand", "params": {
                "command": "evalspec.cancelRun", "arguments": [{"uri": other}]}})
            client.reply(f"probe-{n}")
            probes.append((time.perf_counter() - sent) * 1000)
            time.sleep(args.every)
        wall = time.perf_counter() - began
        used = cpu_s(client.proc.pid) - before
        done = client.next(lambda m: m.get("method") == "evalspec/runFinished", "the run's end")["params"]
        probes.sort()
        print(json.dumps({
            "prompts": args.prompts, "cells": sum(m["cells"] for m in done["summary"]["models"]),
            "run_wall_s": round(wall, 2), "lsp_process_cpu_s": round(used, 2), "probes": len(probes),
            "probe_median_ms": round(statistics.median(probes), 1),
            "probe_p95_ms": round(probes[min(len(probes) - 1, int(0.95 * len(probes)))], 1),
            "probe_max_ms": round(probes[-1], 1),
            "load": round(os.getloadavg()[0], 1)}))
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
