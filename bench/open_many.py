#!/usr/bin/env python3
"""What taking in many didOpens costs the language server, over the real protocol.

    python bench/open_many.py [--docs 10000] [--no-guard] [--profile OUT.txt] [--repeat 1]

Starts `evalspec-lsp`, opens one small blueprint, then sends `--docs` didOpens of small blueprints at
once (attack.py's bulk-open probe: each a six-line blueprint with its own prompt id) and a hover on the
last one. Prints the wall time from the end of the flood to the hover's answer, to the last document's
diagnostics and to all of them, and the CPU seconds the server process spent (its /proc stat, children
of the guard included when there is one). `--profile OUT` attaches py-spy to the server (without the guard)
for the flood and prints its CPU samples by the part of the server they fall in: reading and decoding JSON,
pygls's dispatch and lsprotocol's conversion, the document store, scheduling, the analyses, publishing
diagnostics. A benchmark: it asserts nothing; the numbers vary with the load.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lsp_frames import frame as lsp_frame
from lsp_frames import read_frames

GOOD = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  should: [be kind]\n"

# Where a sampled stack's time goes: its innermost frame that is one of these parts (the standard
# library's plumbing, asyncio's, threads', paths', is counted to the part that called it).
PARTS = (
    ("analysis (engine)", ("engine/", "evalspec/")),
    ("publishing diagnostics", ("features/diagnostics.py", "server/convert.py")),
    ("run history and lenses (per file)", ("features/run.py", "features/run_target.py", "features/code_lens.py",
                                           "run_state.py")),
    ("document store and scheduling", ("server/documents.py", "server/workers.py", "text_documents.py",
                                       "open_files.py", "server/freeing.py", "server/server.py")),
    ("message order / read-ahead", ("message_order.py",)),
    ("reading and decoding JSON", ("server/stdio.py", "server/framing.py")),
    ("the event loop's watch", ("loop_watch.py",)),
    ("pygls dispatch, lsprotocol conversion", ("pygls/", "lsprotocol/", "cattrs/", "server/protocol.py",
                                               "features/lifecycle.py")),
    ("asyncio loop itself", ("selectors.py", "BaseEventLoop._run_once", "_read_from_self", "run_forever")),
)


class Client:
    def __init__(self, root: Path, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.inbox: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        threading.Thread(target=read_frames, args=(self.proc.stdout, self.inbox), daemon=True).start()

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(lsp_frame(msg))
        self.proc.stdin.flush()


def open_params(uri: str, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of a process and its waited-for children (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(x) for x in fields[11:15]) / ticks  # utime, stime, cutime, cstime


def threads_of(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("Threads:")), 0)


def server_pid(pid: int) -> int:
    """The server's process: `pid` itself, or the guard's child."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return pid
    return int(children[0]) if children else pid


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and its live children (the guard's server)."""
    total = cpu_of(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(tree_cpu(int(c)) for c in children)


def run(docs: int, guard: bool, profile: Path | None) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="open-many-"))
    try:
        client = Client(root, [sys.executable, "-m", "evalspec_lsp", *([] if guard else ["--no-guard"])])
        client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                     "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})
        wait_for(client, lambda m: m.get("id") == "init", 60)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        first = (root / "first.weval.yml").as_uri()
        client.send(open_params(first, GOOD))
        client.send({"jsonrpc": "2.0", "id": "warm", "method": "textDocument/hover",
                     "params": {"textDocument": {"uri": first}, "position": {"line": 3, "character": 4}}})
        seen: set[str] = set()
        wait_for(client, lambda m: bool(seen.add("warm" if m.get("id") == "warm" else str(m.get("method"))))
                 or {"warm", "textDocument/publishDiagnostics"} <= seen, 60)
        pid = client.proc.pid
        spy = None
        if profile is not None:  # py-spy attached to the server for the flood (samples of the thread holding the GIL)
            found = shutil.which("py-spy")
            if found is None:
                raise SystemExit("--profile needs py-spy on PATH")
            spy = subprocess.Popen([found, "record", "--gil", "--rate", "250", "--format", "raw", "--output",
                                    str(profile), "--pid", str(pid)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            time.sleep(2)  # attached
        cpu0 = tree_cpu(pid)
        uris = [(root / f"many-{k}.weval.yml").as_uri() for k in range(docs)]
        frames = b"".join(_frame(open_params(u, GOOD.replace("id: a", f"id: a{k}"))) for k, u in enumerate(uris))
        assert client.proc.stdin is not None
        t_flood = time.perf_counter()
        client.proc.stdin.write(frames)
        client.proc.stdin.flush()
        t0 = time.perf_counter()
        client.send({"jsonrpc": "2.0", "id": "after", "method": "textDocument/hover",
                     "params": {"textDocument": {"uri": uris[-1]}, "position": {"line": 3, "character": 4}}})
        published: set[str] = set()
        hover_at = last_at = all_at = None
        hover_answer = ""
        deadline = time.perf_counter() + 600
        threads = 0  # the most threads the server had, looked at every 0.2 s
        looked = 0.0
        while (hover_at is None or all_at is None) and time.perf_counter() < deadline:
            if time.perf_counter() - looked > 0.2:
                looked = time.perf_counter()
                threads = max(threads, threads_of(server_pid(pid)))
            try:
                t, m = client.inbox.get(timeout=0.2)
            except queue.Empty:
                continue
            if m.get("id") == "after":
                hover_at = t
                hover_answer = "result" if "result" in m else f"error: {m['error'].get('message', '')[:40]}"
            elif m.get("method") == "textDocument/publishDiagnostics":
                uri = m["params"]["uri"]
                if uri in published or uri == first:
                    continue
                published.add(uri)
                if uri == uris[-1]:
                    last_at = t
                if len(published) == docs:
                    all_at = t
            elif "id" in m and "method" in m:  # a request from the server
                client.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
        cpu = tree_cpu(pid) - cpu0
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
            spy.wait(120)
        client.send({"jsonrpc": "2.0", "id": "down", "method": "shutdown", "params": None})
        wait_for(client, lambda m: m.get("id") == "down", 60)
        client.send({"jsonrpc": "2.0", "method": "exit"})
        try:
            client.proc.wait(60)
        except subprocess.TimeoutExpired:
            client.proc.kill()
        return {"docs": docs, "guard": guard, "write_s": round(t0 - t_flood, 3),
                "hover_s": None if hover_at is None else round(hover_at - t0, 3), "hover": hover_answer,
                "last_published_s": None if last_at is None else round(last_at - t0, 3),
                "all_published_s": None if all_at is None else round(all_at - t0, 3),
                "published": len(published), "server_cpu_s": round(cpu, 2), "peak_threads": threads,
                "load": round(os.getloadavg()[0], 1)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _frame(msg: dict[str, Any]) -> bytes:
    data = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def wait_for(client: Client, pred: Any, timeout: float) -> dict[str, Any]:
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        try:
            _, m = client.inbox.get(timeout=0.5)
        except queue.Empty:
            continue
        if "id" in m and "method" in m:
            client.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            continue
        if pred(m):
            return m
    raise TimeoutError


def _part_of(frames: list[str]) -> str:
    for frame in reversed(frames):  # innermost first
        for name, marks in PARTS:
            if any(mark in frame for mark in marks):
                return name
    return "other: " + frames[-1][:60]


def parts_of(raw: Path) -> list[tuple[str, float]]:
    """py-spy's raw (collapsed) stacks, active samples only, summed by PARTS."""
    counts: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        frames = stack.split(";")
        total += int(n)
        counts[_part_of(frames)] += int(n)
    return [(name, n / total) for name, n in counts.most_common(14)] if total else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--no-guard", action="store_true", help="serve in one process (evalspec-lsp --no-guard)")
    parser.add_argument("--profile", type=Path, help="py-spy's raw stacks of the server to this file")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    for _ in range(args.repeat):
        row = run(args.docs, not args.no_guard and args.profile is None, args.profile)
        print(json.dumps(row), flush=True)
    if args.profile is not None:
        for name, share in parts_of(args.profile):
            print(f"  {share:6.1%}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
