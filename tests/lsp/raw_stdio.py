"""A client on raw stdio (no pytest-lsp): frames written and read by hand, so tests can send what an
editor would not and see every message the server sends, in order."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

HANG_GUARD_S = 30.0  # a guard against a hang, not a timing


class Raw:
    """A client on raw stdio that keeps every message the server sends, in order."""

    def __init__(self, cwd: Path, command: list[str] | None = None, hang_guard_s: float = HANG_GUARD_S) -> None:
        self.hang_guard_s = hang_guard_s
        self.proc = subprocess.Popen(command or [sys.executable, "-m", "evalspec_lsp"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.inbox: Queue[dict[str, Any]] = Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

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
            self.inbox.put(json.loads(out.read(length)))

    def send(self, *messages: dict[str, Any]) -> None:
        data = b""
        for msg in messages:
            body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
            data += b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next(self, pred: Any, what: str) -> dict[str, Any]:
        for msg in self.seen:
            if pred(msg):
                self.seen.remove(msg)
                return msg
        end = time.monotonic() + self.hang_guard_s
        while time.monotonic() < end:
            try:
                msg = self.inbox.get(timeout=0.2)
            except Empty:
                continue
            if "id" in msg and "method" in msg:  # the server's own request (progress): accepted
                self.send({"id": msg["id"], "result": None})
                continue
            if pred(msg):
                return msg
            self.seen.append(msg)
        raise AssertionError(f"no {what}")

    def reply(self, msg_id: Any) -> dict[str, Any]:
        return self.next(lambda m: "method" not in m and m.get("id") == msg_id, f"reply to {msg_id!r}")

    def drain(self, seconds: float) -> list[dict[str, Any]]:
        """Everything that arrives within `seconds` (and what was already seen)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            with contextlib.suppress(Empty):
                self.seen.append(self.inbox.get(timeout=0.1))
        got, self.seen = self.seen, []
        return got

    def initialize(self, root: Path, options: dict[str, Any] | None = None) -> None:
        self.send({"id": "init", "method": "initialize", "params": {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {},
            "initializationOptions": {"debounceMs": 20, "requestBudgetMs": 10_000, **(options or {})}}})
        assert "result" in self.reply("init")
        self.send({"method": "initialized", "params": {}})

    def open(self, path: Path, text: str) -> str:
        path.write_text(text)
        self.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": path.as_uri(), "languageId": "yaml", "version": 1, "text": text}}})
        return path.as_uri()

    def worker_pid(self, other_than: int | None = None) -> int:
        """An engine worker process: the server's child (once the one killed is gone)."""
        end = time.monotonic() + self.hang_guard_s
        while time.monotonic() < end:
            children = [int(c) for c in
                        Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()]
            live = [c for c in children if c != other_than]
            if live:
                return live[0]
            time.sleep(0.05)
        raise AssertionError("the server started no worker")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
