#!/usr/bin/env python3
"""Time to answer `initialize`: from starting a language server over stdio to reading its answer.

    python bench/lsp_start.py [--repeat 10] -- SERVER_CMD...

Prints JSON: the median and worst of `--repeat` starts, in milliseconds, and the load average then.
Compare in one sitting, e.g. `-- .venv/bin/python -m evalspec_lsp` and
`-- node_modules/.bin/yaml-language-server --stdio`. A benchmark: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def start_once(command: list[str]) -> float:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"processId": os.getpid(), "rootUri": None, "capabilities": {}}}).encode()
    began = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()
    length = 0
    while (line := proc.stdout.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    proc.stdout.read(length)
    took = (time.perf_counter() - began) * 1000
    proc.kill()
    proc.wait()
    return took


def main() -> int:
    sep = sys.argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(sys.argv[1:sep])
    times = [start_once(sys.argv[sep + 1:]) for _ in range(args.repeat)]
    print(json.dumps({"initialize_median_ms": round(statistics.median(times), 1),
                      "initialize_max_ms": round(max(times), 1), "load": round(os.getloadavg()[0], 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
