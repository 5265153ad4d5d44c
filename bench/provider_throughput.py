#!/usr/bin/env python3
"""Provider throughput: N chat calls at concurrency C through evalspec's real client stack.

Starts shared/bench/mockllm.py on a free loopback port (unless --base-url is given), then sends the calls
through provider_for_model("openai:…") — retries included, cache off — over the shared client, and prints
one JSON line per transport: calls, wall seconds, calls/s, peak RSS MB, transport.

    python bench/provider_throughput.py                       # 2000 calls, concurrency 32, aiohttp (DirectClient)
    python bench/provider_throughput.py --transport all       # each transport in its own process
    python bench/provider_throughput.py --transport httpx     # httpx's own transport (httpcore + h11)
    python bench/provider_throughput.py --transport aiohttp-plain   # the yardstick: aiohttp alone, no
                                                                    # httpx, no provider code
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

TRANSPORTS = ("aiohttp", "httpx", "aiohttp-plain")


def find_mockllm() -> Path:
    here = Path(__file__).resolve()
    for candidate in (
        os.environ.get("EVALSPEC_MOCKLLM"),
        here.parents[1].parent / "shared" / "bench" / "mockllm.py",  # CI: shared/ beside the clone
        Path("/work/shared/bench/mockllm.py"),
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise SystemExit("mockllm.py not found: set EVALSPEC_MOCKLLM or pass --base-url")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_mockllm() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(find_mockllm()), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # "mockllm on 127.0.0.1:PORT" once it listens
    if b"mockllm on" not in line:
        proc.kill()
        raise SystemExit(f"mockllm did not start: {line!r}")
    return proc, f"http://127.0.0.1:{port}/v1"


def build_client(transport: str, concurrency: int):
    from evalspec.providers.http import make_client

    return make_client(concurrency, transport=transport)


async def plain_aiohttp(base_url: str, calls: int, concurrency: int) -> tuple[float, float, int]:
    """The same POSTs with aiohttp alone: the floor the provider stack is measured against."""
    import aiohttp

    errors = 0
    next_index = 0
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def worker() -> None:
            nonlocal errors, next_index
            while next_index < calls:
                body = json.dumps({"model": "mock-model", "temperature": 0,
                                   "messages": [{"role": "user", "content": f"prompt number {next_index}"}]})
                next_index += 1
                async with session.post(f"{base_url}/chat/completions", data=body, headers=headers) as resp:
                    data = await resp.json()
                    if not data["choices"][0]["message"]["content"].startswith("ECHO: "):
                        errors += 1

        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t0, time.process_time() - c0, errors


async def run(base_url: str, calls: int, concurrency: int, transport: str) -> dict[str, object]:
    from evalspec.providers import ChatRequest, ProviderError, provider_for_model

    if transport == "aiohttp-plain":
        wall, cpu, errors = await plain_aiohttp(base_url, calls, concurrency)
        return _result(calls, concurrency, wall, cpu, transport, errors)
    client = build_client(transport, concurrency)
    env = {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": base_url}
    binding = provider_for_model("openai:mock-model", client=client, env=env)
    requests = [ChatRequest.of(binding.model_name, f"prompt number {i}", temperature=0) for i in range(calls)]
    errors = 0
    next_index = 0

    async def worker() -> None:
        # A fixed pool of workers, as the runner does, rather than `calls` tasks behind a semaphore.
        nonlocal errors, next_index
        while next_index < calls:
            req = requests[next_index]
            next_index += 1
            try:
                res = await binding.provider.chat(req)
                if not res.text.startswith("ECHO: "):
                    errors += 1
            except ProviderError:
                errors += 1

    try:
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        await client.aclose()
    return _result(calls, concurrency, wall, cpu, transport, errors)


def _result(calls: int, concurrency: int, wall: float, cpu: float, transport: str, errors: int) -> dict[str, object]:
    return {
        "calls": calls,
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "calls_per_s": round(calls / wall, 1),
        "client_cpu_ms_per_call": round(cpu * 1000 / calls, 3),  # ours only; mockllm runs in its own process
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "transport": transport,
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", "-n", type=int, default=2000)
    ap.add_argument("--concurrency", "-c", type=int, default=32)
    ap.add_argument("--transport", default="aiohttp", choices=[*TRANSPORTS, "all"])
    ap.add_argument("--base-url", help="an already running OpenAI-compatible server (…/v1); skips mockllm")
    a = ap.parse_args(argv)

    if a.transport == "all":
        # One process per transport so that each peak RSS is its own.
        for t in TRANSPORTS:
            cmd = [sys.executable, __file__, "-n", str(a.calls), "-c", str(a.concurrency), "--transport", t]
            if a.base_url:
                cmd += ["--base-url", a.base_url]
            subprocess.run(cmd, check=False)
        return 0

    proc = None
    base_url = a.base_url
    if not base_url:
        proc, base_url = start_mockllm()
    try:
        out = asyncio.run(run(base_url, a.calls, a.concurrency, a.transport))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    print(json.dumps(out), flush=True)
    return 0 if out["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
