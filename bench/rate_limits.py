#!/usr/bin/env python3
"""Rate limits: `evalspec run` against a provider with a quota, fixed vs adaptive concurrency.

Starts a fake OpenAI-compatible server on 127.0.0.1 (aiohttp) that keeps a quota the way OpenAI and
Anthropic do: a bucket of `--rps` requests that refills continuously at `--rps` a second. Every answer
carries `x-ratelimit-limit/remaining/reset-requests` (or the `anthropic-ratelimit-requests-*` headers with
`--style anthropic`); a request that finds the bucket empty gets 429 with `retry-after` and
`retry-after-ms` (the time until one request is free). Answers take `--latency` seconds.

Then runs the real CLI (`evalspec run --json`) on a generated blueprint of `--prompts` prompts at
`--concurrency`, once with `--fixed-concurrency` and once adaptive (the default), and prints for each:
wall time, cells answered and failed, requests and 429s the server saw, retries, the most requests the
server had in flight, and per second: requests, 429s, the server's peak in-flight count and the
concurrency evalspec reported (`rate_limit` events).

`--blueprint FILE` runs that blueprint instead (bench/judged_blueprint.py's judged one: every model and
judge pointed at the quota server as OpenAI models, `-m`/`--judge`), the answers (judgements and key
points too) made by tests/fakebatch.py's `answer_for`, so judged points score. `--progress` runs the
CLI as a person does (no `--json`, stderr a pipe) and prints the lines it showed about rate limits and
its closing summary: the adapted concurrency as the user sees it. Each mode also prints the most 429s
one request got (`max_429s_one_request`: bounded retries).

`--isolated P` replaces the quota by isolated throttles: a share P of the requests (drawn at random,
seeded) gets 429 with `Retry-After: 0`, the rest are answered, with no rate-limit headers: what a
provider's transient 429s look like. Adaptive concurrency should then cost little over fixed (issue 30:
at P = 0.02, at most 1.3× the fixed run's wall time); the last line prints the ratio.

usage: rate_limits.py [--prompts N] [--concurrency C] [--rps R] [--latency S] [--style openai|anthropic]
                      [--modes fixed,adaptive] [--rate-limit-retries N] [--blueprint FILE] [--progress]
                      [--isolated P]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakebatch import answer_for  # noqa: E402  (judges' verdicts and key points, as the batch server)


class QuotaServer:
    """The fake provider, in a thread with its own event loop."""

    def __init__(self, rps: float, latency: float, style: str, isolated: float | None = None) -> None:
        self.rps, self.latency, self.style = rps, latency, style
        self.isolated = isolated  # a share of requests refused at random, no quota
        import random

        self.rng = random.Random(30)
        self.tokens = rps
        self.last = time.monotonic()
        self.log: list[tuple[float, float, int]] = []  # (received, answered, status)
        self.limited: dict[str, int] = {}  # request body → the 429s it got
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: Any = None

    def start(self) -> None:
        ready = threading.Event()

        def run() -> None:
            from aiohttp import web

            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application()
            app.router.add_post("/v1/chat/completions", self._chat)
            self._runner = web.AppRunner(app, access_log=None)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        ready.wait(10)

    def reset(self) -> None:
        self.tokens, self.last, self.log, self.limited = self.rps, time.monotonic(), [], {}
        import random

        self.rng = random.Random(30)  # the same throttled requests for each mode

    def stop(self) -> None:
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)

    async def _chat(self, request: Any) -> Any:
        from aiohttp import web

        received = time.monotonic()
        body = await request.json()
        if self.isolated is not None:
            if self.rng.random() < self.isolated:
                self.log.append((received, time.monotonic(), 429))
                key = json.dumps(body, sort_keys=True)
                self.limited[key] = self.limited.get(key, 0) + 1
                return web.json_response({"error": {"message": "Rate limit reached", "type": "requests"}},
                                         status=429, headers={"retry-after": "0"})
            await asyncio.sleep(self.latency)
            self.log.append((received, time.monotonic(), 200))
            return web.json_response({"id": "x", "object": "chat.completion", "model": body.get("model"),
                                      "choices": [{"index": 0, "message": {"role": "assistant",
                                                                           "content": answer_for(body)},
                                                   "finish_reason": "stop"}],
                                      "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
        now = time.monotonic()
        self.tokens = min(self.rps, self.tokens + (now - self.last) * self.rps)
        self.last = now
        ok = self.tokens >= 1.0
        if ok:
            self.tokens -= 1.0
        headers = self._quota(int(self.tokens), (self.rps - self.tokens) / self.rps)
        if not ok:
            wait = (1.0 - self.tokens) / self.rps
            headers.update({"retry-after": str(max(1, math.ceil(wait))), "retry-after-ms": str(max(1, round(wait * 1000)))})
            self.log.append((received, time.monotonic(), 429))
            key = json.dumps(body, sort_keys=True)
            self.limited[key] = self.limited.get(key, 0) + 1
            return web.json_response({"error": {"message": "Rate limit reached", "type": "requests"}}, status=429,
                                     headers=headers)
        await asyncio.sleep(self.latency)
        self.log.append((received, time.monotonic(), 200))
        text = answer_for(body)
        return web.json_response({"id": "x", "object": "chat.completion", "model": body.get("model"),
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                               "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 5}}, headers=headers)

    def _quota(self, remaining: int, reset: float) -> dict[str, str]:
        limit = str(int(self.rps))
        if self.style == "anthropic":
            when = datetime.datetime.fromtimestamp(time.time() + reset, datetime.UTC)
            return {"anthropic-ratelimit-requests-limit": limit, "anthropic-ratelimit-requests-remaining": str(remaining),
                    "anthropic-ratelimit-requests-reset": when.isoformat(timespec="milliseconds").replace("+00:00", "Z")}
        return {"x-ratelimit-limit-requests": limit, "x-ratelimit-remaining-requests": str(remaining),
                "x-ratelimit-reset-requests": f"{max(1, round(reset * 1000))}ms"}


def write_blueprint(path: Path, n: int) -> None:
    lines = ["title: Rate limits", "models:", "  - openai:quota-model", "---"]
    for i in range(n):
        lines += [f"- id: p{i}", f"  prompt: \"Question {i}\"", "  should:", f"    - $contains: \"Question {i}\""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_once(server: QuotaServer, blueprint: Path, out: Path, mode: str, args: argparse.Namespace) -> dict[str, Any]:
    server.reset()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{server.port}/v1", "OPENAI_API_KEY": "sk-bench-dummy"}
    cmd = [sys.executable, "-m", "evalspec.cli", "run", str(blueprint), "--no-report", "-o", str(out),
           "--concurrency", str(args.concurrency), "--rate-limit-retries", str(args.rate_limit_retries)]
    if not args.progress:
        cmd.append("--json")
    if args.blueprint is not None:
        cmd += ["-m", "openai:quota-model", "--judge", "openai:quota-judge"]
    if mode == "fixed":
        cmd.append("--fixed-concurrency")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    concurrency: list[tuple[float, int]] = [(0.0, args.concurrency)]
    counts = {"scored": 0, "cell_failed": 0, "retrying": 0}
    shown: list[str] = []
    if args.progress:  # the lines a person sees (stderr is a pipe: a progress line per tenth or 5 s, no bar)
        for text in proc.stderr:
            text = text.rstrip("\n")
            if text.startswith(("rate limit:", "progress:")):
                shown.append(f"{time.monotonic() - t0:6.1f} s  {text}")
                done = re.match(r"progress: ([\d,]+)/[\d,]+ done, ([\d,]+) error", text)
                if done:
                    counts["scored"] = int(done.group(1).replace(",", "")) - int(done.group(2).replace(",", ""))
                    counts["cell_failed"] = int(done.group(2).replace(",", ""))
            elif "rate-limit answer" in text or ("retr" in text and "in all" in text):
                shown.append(f"  summary: {text.strip()}")
                retries = re.search(r"([\d,]+) retr(?:y|ies) in all", text)
                if retries:
                    counts["retrying"] = int(retries.group(1).replace(",", ""))
        proc.stdout.read()
    else:
        for line in proc.stdout:  # read as they come, to time the rate_limit events
            event = json.loads(line)
            kind = event.get("type")
            if kind in counts:
                counts[kind] += 1
            elif kind == "rate_limit":
                concurrency.append((time.monotonic() - t0, int(event["concurrency"])))
    proc.wait()
    wall = time.monotonic() - t0
    log = [(a - t0, b - t0, s) for a, b, s in server.log]
    seconds = max(1, math.ceil(wall))
    timeline = []
    for sec in range(seconds):
        reqs = [x for x in log if sec <= x[0] < sec + 1]
        peak = _peak_in_flight(log, sec, sec + 1)
        conc = next((c for t, c in reversed(concurrency) if t < sec + 1), args.concurrency)
        timeline.append({"s": sec, "requests": len(reqs), "429": sum(1 for x in reqs if x[2] == 429),
                         "server_in_flight": peak, "concurrency": conc if mode == "adaptive" else args.concurrency})
    return {"mode": mode, "wall_s": round(wall, 2), "answered": counts["scored"], "failed": counts["cell_failed"],
            "requests": len(log), "429s": sum(1 for x in log if x[2] == 429), "retries": counts["retrying"],
            "max_429s_one_request": max(server.limited.values(), default=0),
            "max_in_flight": _peak_in_flight(log, 0, wall + 1), "exit": proc.returncode, "timeline": timeline,
            "shown": shown}


def _peak_in_flight(log: list[tuple[float, float, int]], start: float, end: float) -> int:
    """The most requests being handled at once at any moment in [start, end)."""
    edges = sorted([(a, 1) for a, b, _ in log if a < end and b >= start] + [(b, -1) for a, b, _ in log
                                                                           if a < end and b >= start])
    level = best = 0
    for t, step in edges:
        level += step
        if start <= t < end:
            best = max(best, level)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rps", type=float, default=20.0, help="the quota: requests per second (and the burst)")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    ap.add_argument("--style", choices=("openai", "anthropic"), default="openai")
    ap.add_argument("--modes", default="fixed,adaptive")
    ap.add_argument("--rate-limit-retries", type=int, default=6)
    ap.add_argument("--blueprint", type=Path, help="run this blueprint (models and judges sent to the quota server)")
    ap.add_argument("--progress", action="store_true", help="no --json: print the rate-limit lines the user sees")
    ap.add_argument("--isolated", type=float, metavar="P",
                    help="no quota: a share P of requests gets 429 with Retry-After: 0, at random")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evalspec-ratelimits-"))
    server = QuotaServer(args.rps, args.latency, args.style, args.isolated)
    server.start()
    try:
        blueprint = work / "quota.weval.yml"
        if args.blueprint is not None:
            shutil.copyfile(args.blueprint, blueprint)
        else:
            write_blueprint(blueprint, args.prompts)
        # The quota's own bound: one request per cell (a blueprint's judges add more: see `requests`).
        ideal = None if args.blueprint is not None or args.isolated is not None else round(args.prompts / args.rps, 2)
        print(json.dumps({"blueprint" if args.blueprint else "prompts": str(args.blueprint or args.prompts),
                          "concurrency": args.concurrency, "quota_rps": args.rps,
                          "latency_s": args.latency, "style": args.style, "ideal_wall_s": ideal,
                          "isolated_429_share": args.isolated}))
        walls: dict[str, float] = {}
        for mode in args.modes.split(","):
            result = run_once(server, blueprint, work / f"out-{mode}", mode, args)
            timeline = result.pop("timeline")
            shown = result.pop("shown")
            if args.blueprint is not None:  # the quota's bound for the requests it answered
                result["ideal_wall_s"] = round((result["requests"] - result["429s"]) / args.rps, 2)
            print(json.dumps(result))
            walls[mode] = result["wall_s"]
            for text in shown:
                print(text)
            print("  s  requests  429s  server-in-flight  concurrency")
            for row in timeline:
                print(f"{row['s']:3d}  {row['requests']:8d}  {row['429']:4d}  {row['server_in_flight']:16d}  "
                      f"{row['concurrency']:11d}")
        if "fixed" in walls and "adaptive" in walls:
            print(f"adaptive / fixed wall time: {walls['adaptive'] / walls['fixed']:.2f}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
