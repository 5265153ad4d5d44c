#!/usr/bin/env python3
"""Memory over a long editing session: typing into a 1 MB blueprint with the outline, folding, lenses,
links, hover and completion asked after each edit, as VS Code asks for them.

    python bench/lsp_memory.py [--edits 2000] [--every 0.05] [-- SERVER_CMD...]

Prints the resident memory of the server and every process it started (its engine workers), summed,
and each process's (the server's first), at the start and `--samples` times while typing, then idle
and after the file is closed; and how many answers were "still checking". A benchmark: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def rss_each(pid: int) -> list[int]:
    """Resident bytes of `pid` and of each of its descendants."""
    sizes, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm", "rb") as f:
                sizes.append(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return sizes


def rss_tree(pid: int) -> int:
    return sum(rss_each(pid))


def blueprint(size: int) -> str:
    parts = ["title: Memory\nmodels: [openai:gpt-4o-mini]\n---\n"]
    i = 0
    while sum(map(len, parts)) < size:
        parts.append(f"- id: p{i}\n  prompt: Explain concept {i} in two sentences.\n  should:\n"
                     f"    - mentions concept {i}\n    - $contains: answer\n")
        i += 1
    return "".join(parts)


def main() -> int:
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else [sys.executable, "-m", "evalspec_lsp"]
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=2000)
    parser.add_argument("--every", type=float, default=0.05, help="seconds between edits")
    parser.add_argument("--samples", type=int, default=10, help="samples taken while typing")
    parser.add_argument("--progress", action="store_true", help="print each sample to stderr as it is taken")
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    folder = Path(tempfile.mkdtemp())
    doc = folder / "memory.weval.yml"
    text = blueprint(1 << 20)
    doc.write_text(text)
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    errors = {"still": 0, "answers": 0}
    lock = threading.Lock()

    def read() -> None:
        out = proc.stdout
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            msg = json.loads(out.read(length))
            if "id" in msg and "method" not in msg:
                with lock:
                    errors["answers"] += 1
                    errors["still"] += "error" in msg

    threading.Thread(target=read, daemon=True).start()
    ids = iter(range(1, 10**9))

    def send(method: str, params: object, request: bool = True) -> None:
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            msg["id"] = next(ids)
        body = json.dumps(msg).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    uri = doc.as_uri()
    send("initialize", {"processId": os.getpid(), "rootUri": folder.as_uri(), "capabilities": {
        "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True}}}})
    send("initialized", {}, request=False)
    send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
         request=False)
    time.sleep(5)
    began = time.monotonic()
    samples = [{"edits": 0, "rss_mb": rss_tree(proc.pid) >> 20, "each_mb": [n >> 20 for n in rss_each(proc.pid)]}]
    ident = {"uri": uri}
    for n in range(1, args.edits + 1):
        line = 4 + 5 * (n % 2000)
        send("textDocument/didChange", {"textDocument": {"uri": uri, "version": n + 1}, "contentChanges": [
            {"range": {"start": {"line": line, "character": 2}, "end": {"line": line, "character": 2}},
             "text": "x" if n % 2 else ""}] if n % 2 else [
            {"range": {"start": {"line": line - 5, "character": 2}, "end": {"line": line - 5, "character": 3}},
             "text": ""}]}, request=False)
        for method in ("textDocument/documentSymbol", "textDocument/foldingRange", "textDocument/codeLens",
                       "textDocument/documentLink"):
            send(method, {"textDocument": ident})
        send("textDocument/hover", {"textDocument": ident, "position": {"line": line, "character": 3}})
        send("textDocument/completion", {"textDocument": ident, "position": {"line": line, "character": 2}})
        time.sleep(args.every)
        if n % max(1, args.edits // args.samples) == 0:
            samples.append({"edits": n, "rss_mb": rss_tree(proc.pid) >> 20,
                            "each_mb": [n >> 20 for n in rss_each(proc.pid)],
                            "seconds": round(time.monotonic() - began)})
            if args.progress:
                print(json.dumps(samples[-1]), file=sys.stderr, flush=True)
    time.sleep(5)
    samples.append({"edits": args.edits, "idle": True, "rss_mb": rss_tree(proc.pid) >> 20,
                    "each_mb": [n >> 20 for n in rss_each(proc.pid)]})
    send("textDocument/didClose", {"textDocument": ident}, request=False)
    time.sleep(3)
    samples.append({"closed": True, "rss_mb": rss_tree(proc.pid) >> 20,
                    "each_mb": [n >> 20 for n in rss_each(proc.pid)]})
    send("shutdown", None)
    time.sleep(0.5)
    send("exit", None, request=False)
    proc.wait(10)
    print(json.dumps({"samples": samples, "answers": errors["answers"], "errors": errors["still"],
                      "load": round(os.getloadavg()[0], 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
