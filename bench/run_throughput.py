#!/usr/bin/env python3
"""Runner throughput: `evalspec run` on 2,000 prompts × 1 model, two deterministic points each.

Generates the blueprint, starts /work/shared/bench/mockllm.py on a free loopback port, runs the real
CLI as a subprocess at concurrency 32 with the OpenAI provider pointed at the mock
(OPENAI_BASE_URL=http://127.0.0.1:PORT/v1, a dummy key), and prints wall seconds, CPU seconds and the
run's own peak RSS (through bench/peak_rss.py: a child's ru_maxrss starts at its parent's peak). Yardstick on this kind of machine: promptfoo 0.123, same
shape, 20.7 s and 451 MB; target ≤ 2 s and ≤ 150 MB.

The results folder (the comparison file plus ~6,000 artefact files and 4,000 folders) goes to tmpfs
by default (see --output-dir below for why); --output-dir DIR measures another place. The child runs
with bytecode caching on (PYTHONDONTWRITEBYTECODE removed), as an installed tool does.

`--format agentv` measures the AgentV runner the same way: a 2,000-test eval file (a required
`contains`, a `regex` and a `latency` check per test) against an `openai` target on the mock.

Sizes: `--prompts 2000,20000,100000` (or `--large`, the same three) measures each size in turn (a
blueprint of 100,000 prompts is 16 MB; evalspec check and run read files up to 32 MB). Each timed run's
own peak RSS is written by bench/peak_rss.py, so every line is that run's; the summary line per size gives the
median wall, the peak and the memory per prompt, and a last line compares consecutive sizes: how much
longer the larger one took per prompt, in wall time and in the run's CPU time (1.0 = time grows
linearly; on a loaded machine the CPU ratio is the one to read). Large sizes run once unless --repeat
says otherwise. Where a run's memory goes, stage by stage: bench/run_memory.py.

usage: run_throughput.py [--format weval|agentv] [--prompts N[,N…] | --large] [--concurrency C] [--repeat R] [--output-dir DIR] [--profile OUT.prof]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_MOCK = Path("/work/shared/bench/mockllm.py")


def write_blueprint(path: Path, n: int) -> None:
    lines = ["title: Runner throughput", "models:", "  - openai:mock-model", "---"]
    for i in range(n):
        lines += [f"- id: p{i}", f"  prompt: \"Question {i}: what is the answer number {i}?\"",
                  "  should:", f"    - $contains: \"answer number {i}\"", "    - $word_count_between: [3, 60]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_agentv_suite(path: Path, n: int) -> None:
    """An AgentV eval file of n tests (deterministic assertions only) and the targets.yaml beside it."""
    (path.parent / "targets.yaml").write_text(
        "targets:\n  - name: mock\n    provider: openai\n    model: mock-model\n"
        "    api_key: ${{ OPENAI_API_KEY }}\n    endpoint: ${{ OPENAI_BASE_URL }}\n", encoding="utf-8")
    lines = ["name: throughput", "description: Runner throughput.", "execution:", "  target: mock", "tests:"]
    for i in range(n):
        lines += [f"  - id: t{i}", f"    input: \"Question {i}: what is the answer number {i}?\"",
                  "    criteria: c", "    assert:", f"      - {{type: contains, value: \"{i}\", required: true}}",
                  "      - {type: regex, value: \"[a-z]+\"}", "      - {type: latency, max_ms: 60000}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def scored_cells(out: Path, kind: str) -> tuple[int, int]:
    """(cells scored, errors) from the results the run wrote."""
    if kind == "agentv":
        scored = errors = 0
        for f in out.glob("agentv/*/*.jsonl"):
            if f.name.endswith(".journal.jsonl"):
                continue
            with f.open(encoding="utf-8") as lines:  # a row at a time: this process's size is not measured,
                for line in lines:  # but it should not need a big machine either
                    row = json.loads(line)
                    scored += row.get("score") is not None
                    errors += bool(row.get("error"))
        return scored, errors
    comparison = next(out.glob("live/blueprints/*/*_comparison.json"))
    data = json.loads(comparison.read_text(encoding="utf-8"))
    coverage = data["evaluationResults"]["llmCoverageScores"]
    scored = sum(1 for row in coverage.values() for r in row.values() if "avgCoverageExtent" in r)
    return scored, sum(len(row) for row in (data.get("errors") or {}).values())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise SystemExit(f"mockllm did not start on port {port}")


def evalspec_command() -> list[str]:
    exe = shutil.which("evalspec")
    if exe:
        return [exe]
    return [sys.executable, "-m", "evalspec.cli"]


def _run_measured(cmd: list[str], env: dict[str, str], work: Path) -> tuple[int, float, float, str, str]:
    """(exit code, the run's own peak RSS in MB, its CPU seconds (user + system), stdout, stderr). The run
    is started through bench/peak_rss.py, which writes the run's own peak: a child spawned from this
    process starts its ru_maxrss at this process's high-water mark (peak_rss.py says why), and this
    process has read earlier runs' results (100,000 AgentV rows as dicts are several hundred MB). The
    launcher is reaped with wait4, whose CPU times include the run's (the launcher reaped it). On a
    loaded machine the CPU is what compares between builds; walls do not."""
    out, err, peak_file = work / "stdout.txt", work / "stderr.txt", work / "peak.txt"
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen([sys.executable, str(HERE / "peak_rss.py"), str(peak_file), *cmd], env=env,
                                stdout=o, stderr=e, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
    code, peak_kib = (int(v) for v in peak_file.read_text(encoding="utf-8").split())
    return (code, peak_kib / 1024, usage.ru_utime + usage.ru_stime,
            out.read_text(encoding="utf-8", errors="replace"), err.read_text(encoding="utf-8", errors="replace"))


def _measure(args: argparse.Namespace, work: Path, env: dict[str, str], n: int) -> tuple[float, float]:
    if args.format == "agentv":
        blueprint = work / f"throughput-{n}.eval.yaml"
        write_agentv_suite(blueprint, n)
    else:
        blueprint = work / f"throughput-{n}.weval.yml"
        write_blueprint(blueprint, n)
    repeat = args.repeat if args.repeat is not None else (5 if n <= 2000 else 1)
    walls, peaks, cpus = [], [], []
    for i in range(repeat):
        args.output_dir.mkdir(parents=True, exist_ok=True)
        out = Path(tempfile.mkdtemp(prefix="evalspec-bench-out-", dir=args.output_dir))
        run_args = ["run", str(blueprint), "--concurrency", str(args.concurrency), "--output", str(out),
                    *args.run_arg]
        cmd = [*evalspec_command(), *run_args]
        if args.profile:
            cmd = [sys.executable, "-m", "cProfile", "-o", str(args.profile), "-m", "evalspec.cli", *run_args]
        t0 = time.perf_counter()
        code, peak, cpu, stdout, stderr = _run_measured(cmd, env, work)
        wall = time.perf_counter() - t0
        if code != 0:
            print(stderr[-2000:], file=sys.stderr)
            raise SystemExit(f"evalspec run exited {code}")
        scored, errors = scored_cells(out, args.format)
        walls.append(wall)
        peaks.append(peak)
        cpus.append(cpu)
        print(json.dumps({"prompts": n, "run": i, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                          "peak_rss_mb": round(peak, 1),
                          "cells_scored": scored, "errors": errors,
                          "table": stdout.strip().splitlines()[-3] if stdout.strip() else ""}), flush=True)
        shutil.rmtree(out, ignore_errors=True)
    print(json.dumps({"format": args.format, "prompts": n, "concurrency": args.concurrency, "runs": repeat,
                      "best_wall_s": round(min(walls), 3), "median_wall_s": round(statistics.median(walls), 3),
                      "median_cpu_s": round(statistics.median(cpus), 3),
                      "peak_rss_mb": round(max(peaks), 1),
                      "kib_per_prompt": round(max(peaks) * 1024 / n, 1)}), flush=True)
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=("weval", "agentv"), default="weval")
    ap.add_argument("--prompts", default="2000", help="prompts (Weval) or tests (AgentV); several sizes comma-separated")
    ap.add_argument("--large", action="store_true", help="the sizes 2,000, 20,000 and 100,000")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, help="timed runs per size (default 5 up to 2,000 prompts, else 1)")
    ap.add_argument("--mock", type=Path, default=DEFAULT_MOCK)
    ap.add_argument("--profile", type=Path, help="run the child under cProfile, write stats here")
    ap.add_argument("--run-arg", action="append", default=[], metavar="ARG",
                    help="an extra argument for `evalspec run` (repeatable), e.g. --run-arg=--no-report")
    # Results go to tmpfs when there is one: this measures the runner, and on this workplace's VM
    # creating files under the checkout or /tmp costs ~10× what it costs elsewhere on the same disk
    # (2,000 folders+files: 2.6 s there, 0.23 s under /work), while the artefact layout is ~6,000
    # files. Pass --output-dir to measure another place.
    shm = Path("/dev/shm")
    ap.add_argument("--output-dir", type=Path,
                    default=shm / "evalspec-bench" if shm.is_dir() else Path(__file__).resolve().parent / "out",
                    help="where results are written (default: /dev/shm/evalspec-bench, else bench/out/; "
                         "emptied after each run)")
    args = ap.parse_args()

    sizes = [int(x.replace("_", "")) for x in ("2000,20000,100000" if args.large else str(args.prompts)).split(",")
             if x.strip()]
    work = Path(tempfile.mkdtemp(prefix="evalspec-bench-"))
    port = free_port()
    mock = subprocess.Popen([sys.executable, str(args.mock), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(port)
        env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "sk-bench-dummy"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # An untimed 20-prompt run first: it compiles the bytecode of every module a run imports, as
        # `pip install` does for an installed tool (an editable checkout compiles on first use).
        warm = work / "warm.weval.yml"
        write_blueprint(warm, 20)
        subprocess.run([*evalspec_command(), "run", str(warm), "--output", str(work / "warm-out")], env=env,
                       capture_output=True, check=True)
        measured = {n: _measure(args, work, env, n) for n in sizes}
        for a, b in itertools.pairwise(sizes):
            (wall_a, cpu_a), (wall_b, cpu_b) = measured[a], measured[b]
            print(json.dumps({"from": a, "to": b, "size_ratio": round(b / a, 2), "time_ratio": round(wall_b / wall_a, 2),
                              "per_prompt_ratio": round(wall_b / wall_a / (b / a), 2),
                              "cpu_ratio": round(cpu_b / cpu_a, 2),
                              "per_prompt_cpu_ratio": round(cpu_b / cpu_a / (b / a), 2)}), flush=True)
    finally:
        mock.terminate()
        try:
            _, err = mock.communicate(timeout=5)
            count = next((ln for ln in err.splitlines() if ln.startswith("requests=")), "")
            if count:
                print(json.dumps({"mockllm": count}))
        except subprocess.TimeoutExpired:
            mock.kill()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
