#!/usr/bin/env python3
"""A killed engine worker: how long until the diagnostics are published again, after N edits.

    python bench/lsp_worker_kill.py [--edits 5000] [--size 1048576] [--kill document|workers|all] [--settle 0]

Opens a blueprint of `--size` bytes, sends `--edits` one-character edits, waits for the last
version's diagnostics (and `--settle` seconds more), SIGKILLs the worker that has the document (or
every worker; or every worker and the spare: `--kill all`) and times the next publication (and a
hover after it). Prints JSON. A benchmark: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_memory import blueprint

from tests.lsp.raw_stdio import Raw


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--kill", choices=["document", "workers", "all"], default="document")
    parser.add_argument("--settle", type=float, default=0.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    client = Raw(folder, [sys.executable, "-m", "evalspec_lsp"], hang_guard_s=120)
    try:
        client.initialize(folder, {"requestBudgetMs": 60_000})
        uri = client.open(folder / "kill.weval.yml", blueprint(args.size))
        for n in range(args.edits):
            line = 4 + 5 * (n % 2000)
            client.send({"method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": n + 2}, "contentChanges": [{"range": {
                    "start": {"line": line, "character": 2}, "end": {"line": line, "character": 2}}, "text": " "}]}})
        last = args.edits + 1
        client.next(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"].get("version") == last, "the last version's diagnostics")
        time.sleep(args.settle)
        client.send({"id": "state", "method": "evalspec/workers", "params": None})
        state = client.reply("state")["result"]
        pids = [w["pid"] for w in state["workers"] if w["pid"] and (args.kill != "document" or uri in w["assigned"])]
        if args.kill == "all":
            pids.append(state["spare"]["pid"])
        began = time.perf_counter()
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        client.next(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"].get("version") == last, "diagnostics after the kill")
        restored = time.perf_counter() - began
        client.send({"id": "hover", "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 4, "character": 3}}})
        client.reply("hover")
        print(json.dumps({"edits": args.edits, "bytes": args.size, "kill": args.kill, "killed": len(pids),
                          "spare_had": dict(state["spare"]["analysed"]).get(uri), "version": last, "diagnostics_restored_ms": round(restored * 1000),
                          "hover_answered_ms": round((time.perf_counter() - began) * 1000),
                          "load": round(os.getloadavg()[0], 1)}))
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
