#!/usr/bin/env python3
"""`evalspec run` beside a minimal aiohttp client doing the same calls, on the machine's real disk.

The issue-27 yardstick: for each size, the same blueprint as bench/run_throughput.py (N prompts × 1 model,
two function points) is run by the real CLI against /work/shared/bench/mockllm.py, and a minimal client
(one aiohttp session, a semaphore of the same concurrency, the same chat request a prompt, the answers
parsed and written to one JSON file) makes the same N calls to the same mock, alternately, in one sitting.
Printed per run: wall seconds, CPU seconds, peak RSS (bench/peak_rss.py), bytes the run wrote to the disk
(its `ru_oublock`, 512-byte blocks, children included), the files it left and the size of its exported
results (the comparison and cost files, and report.html when written); per size the median walls and
their ratio. The machine's load average is printed at the start and end: on a shared machine the CPU
seconds compare better than the walls.

Results go to --output-dir (default bench/out-store/ under this checkout: the real disk, not tmpfs),
emptied after each run.

`--format agentv`: the AgentV suite of bench/run_throughput.py (N tests, an `openai` target on the mock;
contains, regex and latency checks), whose exported results are its results JSONL. Each evalspec line
also gives `written_per_export` (bytes written over the size of the exported results) and the ratio of
its wall to the client's of the same round.

usage: run_store.py [--format weval|agentv] [--prompts N[,N…]] [--concurrency C] [--repeat R] [--run-arg ARG …]
                    [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_throughput import (  # noqa: E402
    DEFAULT_MOCK,
    evalspec_command,
    free_port,
    wait_for,
    write_agentv_suite,
    write_blueprint,
)

CLIENT = r'''
import asyncio, json, sys
import aiohttp

async def main(url, n, concurrency, out):
    sem = asyncio.Semaphore(concurrency)
    answers = {}
    conn = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=conn, headers={"authorization": "Bearer sk-bench-dummy"}) as s:
        async def one(i):
            body = {"model": "mock-model", "temperature": 0.0,
                    "messages": [{"role": "user", "content": f"Question {i}: what is the answer number {i}?"}]}
            async with sem:
                async with s.post(url, json=body) as r:
                    data = await r.json()
            answers[f"p{i}"] = data["choices"][0]["message"]["content"]
        await asyncio.gather(*(one(i) for i in range(n)))
    with open(out, "w") as f:
        json.dump(answers, f)

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
'''


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def measured(cmd: list[str], env: dict[str, str], work: Path) -> dict[str, float]:
    peak_file = work / "peak.txt"
    t0 = time.perf_counter()
    with open(work / "stderr.txt", "w") as errors:
        proc = subprocess.Popen([sys.executable, str(HERE / "peak_rss.py"), str(peak_file), *cmd], env=env,
                                stdout=subprocess.DEVNULL, stderr=errors)
        _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped here
    wall = time.perf_counter() - t0
    err = (work / "stderr.txt").read_text(errors="replace")
    code, peak_kib = (int(v) for v in peak_file.read_text().split())
    if code != 0:
        raise SystemExit(f"{cmd[:3]} exited {code}: {err[-2000:]}")
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mb": round(peak_kib / 1024, 1), "disk_written_mb": round(usage.ru_oublock * 512 / 2**20, 1)}


def folder_facts(out: Path) -> dict[str, float]:
    files = [p for p in out.rglob("*") if p.is_file()]
    exported = [p for p in files if p.name.endswith(("_comparison.json", "_cost.json", "report.html"))
                or (p.suffix == ".jsonl" and "agentv" in p.parts)]
    return {"files": len(files), "folders": sum(1 for p in out.rglob("*") if p.is_dir()),
            "left_mb": round(sum(p.stat().st_size for p in files) / 2**20, 1),
            "exported_mb": round(sum(p.stat().st_size for p in exported) / 2**20, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=("weval", "agentv"), default="weval")
    ap.add_argument("--prompts", default="2000", help="prompts (Weval) or tests (AgentV)")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, help="runs of each per size (default 3 up to 2,000 prompts, else 1)")
    ap.add_argument("--run-arg", action="append", default=[], metavar="ARG")
    ap.add_argument("--output-dir", type=Path, default=HERE / "out-store")
    ap.add_argument("--other", type=Path, metavar="DIR",
                    help="also run another evalspec: DIR holds its `evalspec` package (e.g. an earlier commit's "
                         "engine/ exported as DIR/evalspec), put first on PYTHONPATH")
    args = ap.parse_args()
    sizes = [int(x.replace("_", "")) for x in args.prompts.split(",") if x.strip()]
    args.output_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="work-", dir=args.output_dir))
    (work / "client.py").write_text(CLIENT)
    port = free_port()
    mock = subprocess.Popen([sys.executable, str(DEFAULT_MOCK), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_average": load(),
                      "format": args.format, "output_dir": str(args.output_dir),
                      "concurrency": args.concurrency, "run_args": args.run_arg}), flush=True)
    try:
        wait_for(port)
        env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "sk-bench-dummy"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        warm = work / "warm.weval.yml"
        write_blueprint(warm, 20)
        subprocess.run([*evalspec_command(), "run", str(warm), "-o", str(work / "warm-out"), "--no-report"],
                       env=env, capture_output=True, check=True)
        for n in sizes:
            if args.format == "agentv":
                (work / f"suite-{n}").mkdir(exist_ok=True)
                bp = work / f"suite-{n}" / f"store-{n}.eval.yaml"
                write_agentv_suite(bp, n)
            else:
                bp = work / f"store-{n}.weval.yml"
                write_blueprint(bp, n)
            repeat = args.repeat if args.repeat is not None else (3 if n <= 2000 else 1)
            contenders = ("client", "evalspec", "other") if args.other else ("client", "evalspec")
            walls: dict[str, list[float]] = {who: [] for who in contenders}
            for i in range(repeat):
                for who in contenders:
                    args.output_dir.mkdir(parents=True, exist_ok=True)
                    out = Path(tempfile.mkdtemp(prefix=f"{who}-", dir=args.output_dir))
                    if who == "client":
                        cmd = [sys.executable, str(work / "client.py"), f"http://127.0.0.1:{port}/v1/chat/completions",
                               str(n), str(args.concurrency), str(out / "answers.json")]
                    else:
                        cmd = [*evalspec_command(), "run", str(bp), "--concurrency", str(args.concurrency), "-o",
                               str(out), *args.run_arg]
                    facts = measured(cmd, {**env, "PYTHONPATH": str(args.other)} if who == "other" else env, work)
                    facts.update(folder_facts(out))
                    if who != "client":
                        facts["written_per_export"] = round(facts["disk_written_mb"] / max(facts["exported_mb"], 0.01), 2)
                        facts["wall_ratio"] = round(facts["wall_s"] / walls["client"][-1], 2)
                    walls[who].append(facts["wall_s"])
                    print(json.dumps({"prompts": n, "run": i, "who": who, **facts}), flush=True)
                    shutil.rmtree(out, ignore_errors=True)
            e, c = statistics.median(walls["evalspec"]), statistics.median(walls["client"])
            summary = {"prompts": n, "median_wall_evalspec_s": e, "median_wall_client_s": c, "ratio": round(e / c, 2)}
            if args.other:
                o = statistics.median(walls["other"])
                summary.update({"median_wall_other_s": o, "other_ratio": round(o / c, 2)})
            print(json.dumps({**summary, "load_average": load()}), flush=True)
    finally:
        mock.terminate()
        mock.wait(5)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
