"""The lifecycle's edges over raw stdio (the attack run's second round, issue 15): a request before
`initialize` is ServerNotInitialized (it was answered as if initialized), one after `shutdown` is
InvalidRequest (it was never answered: the client waited forever), and `exit` without `shutdown`
ends the process with code 1, as LSP asks (it was 0)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from queue import Empty, Queue
from typing import Any

HANG_GUARD_S = 20.0  # a guard against a hang, not a timing


class Stdio:
    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "evalspec_lsp.main"], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.replies: Queue[dict[str, Any]] = Queue()
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
            msg = json.loads(out.read(length))
            if "id" in msg and "method" not in msg:
                self.replies.put(msg)

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def reply(self, msg_id: str | int) -> dict[str, Any]:
        while True:
            try:
                got = self.replies.get(timeout=HANG_GUARD_S)
            except Empty:
                raise AssertionError(f"no reply to {msg_id}") from None
            if got["id"] == msg_id:
                return got

    def initialize(self, root: Path) -> None:
        self.send({"id": "init", "method": "initialize",
                   "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})
        assert "result" in self.reply("init")
        self.send({"method": "initialized", "params": {}})


def _hover(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}


def test_a_request_before_initialize_is_refused(tmp_path: Path) -> None:
    server = Stdio(tmp_path)
    try:
        server.send({"id": "early", "method": "textDocument/hover", "params": _hover((tmp_path / "a.yml").as_uri())})
        error = server.reply("early")["error"]
        assert error["code"] == -32002 and "before 'initialize'" in error["message"]
        server.initialize(tmp_path)  # and initialize still works afterwards
        server.send({"id": "down", "method": "shutdown"})
        assert server.reply("down")["result"] is None
        server.send({"id": "late", "method": "textDocument/hover", "params": _hover((tmp_path / "a.yml").as_uri())})
        error = server.reply("late")["error"]
        assert error["code"] == -32600 and "after 'shutdown'" in error["message"]
        server.send({"method": "exit"})
        assert server.proc.wait(HANG_GUARD_S) == 0
    finally:
        server.proc.kill()
        server.proc.wait()


def test_exit_without_shutdown_is_exit_code_1(tmp_path: Path) -> None:
    server = Stdio(tmp_path)
    try:
        server.initialize(tmp_path)
        server.send({"method": "exit"})
        assert server.proc.wait(HANG_GUARD_S) == 1
    finally:
        server.proc.kill()
        server.proc.wait()


def test_a_request_nested_past_the_json_parser_is_answered(tmp_path: Path) -> None:
    """The third attack round: valid JSON nested 100,000 deep makes `json.loads` raise RecursionError
    inside pygls, which then had no id to answer: the client waited forever. The request is answered
    (InvalidRequest), a notification as deep gets nothing, and the server goes on serving."""
    server = Stdio(tmp_path)
    try:
        server.initialize(tmp_path)
        deep = b"[" * 100_000 + b"]" * 100_000
        for body in (b'{"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": ' + deep + b"}",
                     b'{"jsonrpc": "2.0", "id": "deep", "method": "workspace/executeCommand", "params": {"command": '
                     b'"evalspec.plan", "arguments": ' + deep + b"}}"):
            assert server.proc.stdin is not None
            server.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            server.proc.stdin.flush()
        error = server.reply("deep")["error"]
        assert error["code"] == -32600 and "nested too deeply" in error["message"]
        server.send({"id": "after", "method": "shutdown"})
        assert server.reply("after")["result"] is None
    finally:
        server.proc.kill()
        server.proc.wait()


def test_a_request_id_past_64_bits_is_answered_with_that_id(tmp_path: Path) -> None:
    """orjson reads 2**70 as a double: the answer went to 1.1805916207174113e+21, and the client waited."""
    server = Stdio(tmp_path)
    try:
        server.initialize(tmp_path)
        for msg_id in (2**70, -(2**64) - 1, 2**63):
            server.send({"id": msg_id, "method": "textDocument/hover", "params": _hover((tmp_path / "a.yml").as_uri())})
            got = server.reply(msg_id)
            assert type(got["id"]) is int and ("result" in got or "error" in got)
        server.send({"id": "down", "method": "shutdown"})
        assert server.reply("down")["result"] is None
        server.send({"method": "exit"})
        assert server.proc.wait(HANG_GUARD_S) == 0
    finally:
        server.proc.kill()
