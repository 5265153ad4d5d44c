"""The lifecycle's edges over raw stdio (the attack run's second round, issue 15): a request before
`initialize` is ServerNotInitialized (it was answered as if initialized), one after `shutdown` is
InvalidRequest (it was never answered: the client waited forever), and `exit` without `shutdown`
ends the process with code 1, as LSP asks (it was 0)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .raw_stdio import Raw

HANG_GUARD_S = 20.0  # a guard against a hang, not a timing


def _server(cwd: Path) -> Raw:
    """The server itself (`evalspec_lsp.main`): these are its lifecycle's edges, not the guard's."""
    return Raw(cwd, [sys.executable, "-m", "evalspec_lsp.main"], hang_guard_s=HANG_GUARD_S)


def _hover(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}


def test_a_request_before_initialize_is_refused(tmp_path: Path) -> None:
    server = _server(tmp_path)
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
    server = _server(tmp_path)
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
    server = _server(tmp_path)
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
    server = _server(tmp_path)
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
