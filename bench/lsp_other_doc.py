#!/usr/bin/env python3
"""Whether a big document's analysis delays requests on another: every request timed while it runs.

    python bench/lsp_other_doc.py [--only NAME,...] [--edits 4] [--busy N] [--no-guard] [--json OUT]

For each of bench/lsp_big.py's 4 MB files: a fresh server, a small blueprint opened, then the big file;
from then on a hover on the small file every 50 ms, and the big file's outline, folding, lenses and a
hover on it sent together after each publication of its diagnostics; the big file is then edited
(`--edits` times: a line appended, so it is analysed again) and the same repeated. Every request is
timed from writing it to reading its whole answer (a plain JSON reader on its own thread). Printed:
per file and kind, the count, median, 99th percentile and worst, and which answers were errors
("still checking" is an answer); the load average (1 minute) at the start and the end. The issue's
bound is 1 s for every request, on a loaded machine too; `--busy N` adds N processes that spin on the
CPU. A benchmark: it asserts nothing.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_big import busy_processes, files, print_guard_times

SMALL = "title: small\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: hi\n  should: [yes]\n"


class Client:
    """A JSON-RPC client whose requests can be sent from any thread; each answer's arrival is timed."""

    def __init__(self, root: Path, server_args: list[str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "evalspec_lsp", *server_args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root,
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.lock = threading.Lock()
        self.cond = threading.Condition()
        self.answers: dict[int, tuple[float, dict[str, Any]]] = {}
        self.published: dict[str, int] = {}  # uri -> publications seen
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.call("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {
            "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                             "hover": {"contentFormat": ["markdown"]}, "foldingRange": {"lineFoldingOnly": True}},
            "window": {"workDoneProgress": True}}, "initializationOptions": {"debounceMs": 50}})
        self.notify("initialized", {})

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            body = out.read(length)
            now = time.perf_counter()  # when the answer was read whole, before this client decodes it
            msg = json.loads(body)
            if "id" in msg and "method" in msg:  # a request from the server
                self._write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                continue
            with self.cond:
                if "id" in msg:
                    self.answers[msg["id"]] = (now, msg)
                elif msg.get("method") == "textDocument/publishDiagnostics":
                    uri = msg["params"]["uri"]
                    self.published[uri] = self.published.get(uri, 0) + 1
                self.cond.notify_all()

    def _write(self, msg: dict[str, Any]) -> float:
        data = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        with self.lock:
            began = time.perf_counter()
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            self.proc.stdin.flush()
        return began

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def call(self, method: str, params: Any, timeout: float = 120) -> tuple[float, dict[str, Any]]:
        """(ms from writing the request to reading its answer, the answer)."""
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        t0 = self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        with self.cond:
            if not self.cond.wait_for(lambda: rid in self.answers, timeout):
                return timeout * 1000, {"error": {"code": "timeout", "message": "no answer"}}
            t, m = self.answers.pop(rid)
        return (t - t0) * 1000, m

    def wait_published(self, uri: str, count: int, timeout: float = 600) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.published.get(uri, 0) >= count, timeout)

    def close(self) -> None:
        try:
            self.call("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def run_file(name: str, filename: str, text: str, edits: int,
             server_args: list[str]) -> dict[str, list[tuple[float, bool]]]:
    """kind -> [(ms, answered with an error)]."""
    times: dict[str, list[tuple[float, bool]]] = {}
    lock = threading.Lock()

    def note(kind: str, ms: float, m: dict[str, Any]) -> None:
        with lock:
            times.setdefault(kind, []).append((ms, "error" in m))

    with tempfile.TemporaryDirectory(prefix="lsp-other-") as tmp:
        root = Path(tmp)
        big, small = root / filename, root / "small.yml"
        big.write_text(text, encoding="utf-8")
        small.write_text(SMALL)
        client = Client(root, server_args)
        stop = threading.Event()
        try:
            client.notify("textDocument/didOpen", {"textDocument": {"uri": small.as_uri(), "languageId": "yaml",
                                                                    "version": 1, "text": SMALL}})
            hover_small = {"textDocument": {"uri": small.as_uri()}, "position": {"line": 4, "character": 3}}
            client.call("textDocument/hover", hover_small)

            def hovers() -> None:
                while not stop.is_set():
                    ms, m = client.call("textDocument/hover", hover_small)
                    note("hover on the small file", ms, m)
                    time.sleep(0.05)

            threading.Thread(target=hovers, daemon=True).start()
            uri = big.as_uri()
            doc = {"textDocument": {"uri": uri}}
            n = text.count("\n")
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1,
                                                                    "text": text}})
            for version in range(1, edits + 2):
                if not client.wait_published(uri, version):
                    print(f"  {name}: no diagnostics for version {version} within 600 s", flush=True)
                    break
                asked = [("outline", "textDocument/documentSymbol", doc),
                         ("folding", "textDocument/foldingRange", doc),
                         ("lenses", "textDocument/codeLens", doc),
                         ("hover on the big file", "textDocument/hover",
                          {**doc, "position": {"line": n // 2, "character": 3}})]
                threads = [threading.Thread(target=lambda k=k, meth=meth, p=p: note(k, *client.call(meth, p)))
                           for k, meth, p in asked]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                if version <= edits:
                    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version + 1},
                                                             "contentChanges": [{"range": {
                                                                 "start": {"line": n + version - 1, "character": 0},
                                                                 "end": {"line": n + version - 1, "character": 0}},
                                                                 "text": f"# edit {version}\n"}]})
        finally:
            stop.set()
            time.sleep(0.2)
            client.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated file names (see lsp_big.files())")
    parser.add_argument("--edits", type=int, default=4)
    parser.add_argument("--busy", type=int, default=0, metavar="N")
    parser.add_argument("--busy-here", action="store_true", help="the busy processes in this session")
    parser.add_argument("--no-guard", action="store_true", help="the server in one process (evalspec-lsp --no-guard)")
    parser.add_argument("--server-log", type=Path, help="the server's log (--log-file): per-request timings "
                        "as the guard saw them")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    chosen = [n for n in args.only.split(",") if n]
    spinners = busy_processes(args.busy, args.busy_here)
    report: dict[str, Any] = {}
    worst = (0.0, "")
    try:
        if spinners:
            time.sleep(5)
        print(f"load average at the start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores, "
              f"{args.busy} busy processes of ours)", flush=True)
        for name, (filename, text) in files().items():
            if chosen and name not in chosen:
                continue
            started = os.getloadavg()[0]
            server_args = (["--no-guard"] if args.no_guard else []) + \
                (["--log-file", str(args.server_log)] if args.server_log else [])
            times = run_file(name, filename, text, args.edits, server_args)
            print(f"--- {name} (load {started:.1f} → {os.getloadavg()[0]:.1f})", flush=True)
            for kind, got in times.items():
                ms = sorted(t for t, _ in got)
                p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
                errors = sum(e for _, e in got)
                print(f"  {kind:26} n={len(ms):4}  median {ms[len(ms) // 2]:7.1f}  p99 {p99:7.1f}  "
                      f"worst {ms[-1]:7.1f} ms  errors {errors}", flush=True)
                report.setdefault(name, {})[kind] = {"n": len(ms), "median": ms[len(ms) // 2], "p99": p99,
                                                     "worst": ms[-1], "errors": errors}
                if ms[-1] > worst[0]:
                    worst = (ms[-1], f"{name}: {kind}")
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    print(f"load average at the end: {os.getloadavg()[0]:.1f}; worst request {worst[0]:.1f} ms ({worst[1]})")
    if args.server_log:
        print_guard_times(args.server_log)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
