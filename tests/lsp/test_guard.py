"""The guard process (server/guard.py) over raw stdio: every request answered, whatever the server does.

`python -m evalspec_lsp` on pipes runs the guard, which runs the server as its child. These tests stall
the server (one long C call holding its interpreter lock, as libyaml on a huge scalar does), kill it,
and flood it, and check what the client gets: one answer per request, errors where the server could
not answer, and a server that serves again afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from .raw_stdio import HANG_GUARD_S, Raw
from .session import FAULTY_SERVER

GOOD = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  should: [is friendly]\n"


def hover(msg_id: Any, uri: str, line: int = 4, character: int = 3) -> dict[str, Any]:
    return {"id": msg_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}}


def test_a_request_the_stalled_server_cannot_answer_gets_an_error_and_the_late_answer_is_dropped(
        tmp_path: Path) -> None:
    client = Raw(tmp_path, FAULTY_SERVER)
    try:
        client.initialize(tmp_path)  # the default budget: the guard's deadline is under a second
        small = client.open(tmp_path / "small.weval.yml", GOOD)
        client.send({"id": "warm", "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": small}}})
        assert client.reply("warm")["result"]
        # STALL: the analysis holds the server's interpreter lock in one C call for seconds; its event
        # loop cannot even read the next message.
        client.open(tmp_path / "stall.weval.yml", GOOD + "# STALL\n")
        deadline = time.monotonic() + HANG_GUARD_S  # begun: on a loaded machine that is not within 0.3 s
        while not (tmp_path / "stall-started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        client.send({"id": "outline", "method": "textDocument/documentSymbol",
                     "params": {"textDocument": {"uri": small}}})
        reply = client.reply("outline")
        assert reply["error"]["code"] == -32803 and "busy" in reply["error"]["message"], reply
        # Once the stall is over the server answers again, and the outline it computed late is not
        # sent a second time.
        client.send({"id": "again", "method": "textDocument/documentSymbol",
                     "params": {"textDocument": {"uri": small}}})
        deadline = time.monotonic() + HANG_GUARD_S
        while "result" not in (reply := client.reply("again")) and time.monotonic() < deadline:
            client.send({"id": "again", "method": "textDocument/documentSymbol",
                         "params": {"textDocument": {"uri": small}}})
        assert reply["result"][0]["name"]
        rest = client.drain(0.5)
        assert not [m for m in rest if m.get("id") == "outline"], rest
    finally:
        client.close()


def test_a_killed_server_is_restarted_with_the_open_documents_and_the_editor_is_told(tmp_path: Path) -> None:
    client = Raw(tmp_path, FAULTY_SERVER)
    try:
        client.initialize(tmp_path, {"requestBudgetMs": 20_000})
        hanging = client.open(tmp_path / "hang.weval.yml", GOOD + "# HANG\n")
        good = client.open(tmp_path / "good.weval.yml", GOOD.replace("is friendly", "is polite"))
        # edited since it was opened: the new server must have the edited text
        client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": good, "version": 2}, "contentChanges": [{"range": {
                "start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 7}}, "text": "renamed"}]}})
        full = client.open(tmp_path / "full.weval.yml", GOOD)
        for version in (2, 3):  # a client that sends whole texts: the last one counts
            client.send({"method": "textDocument/didChange", "params": {
                "textDocument": {"uri": full, "version": version},
                "contentChanges": [{"text": GOOD.replace("id: a", f"id: whole{version}")}]}})
        client.send({"id": "waits", "method": "textDocument/documentSymbol",
                     "params": {"textDocument": {"uri": hanging}}})  # waits for an analysis that hangs
        time.sleep(0.5)
        first = client.server_pid()
        os.kill(first, signal.SIGKILL)
        reply = client.reply("waits")
        assert reply["error"]["code"] == -32803 and "stopped (killed by signal 9)" in reply["error"]["message"]
        told = client.next(lambda m: m.get("method") == "window/showMessage", "window/showMessage")
        assert "stopped (killed by signal 9)" in told["params"]["message"] and "restarted" in told["params"]["message"]
        # The new server knows the documents that were open: its outline of one comes from its text.
        client.send({"id": "outline", "method": "textDocument/documentSymbol",
                     "params": {"textDocument": {"uri": good}}})
        outline = client.reply("outline")
        assert "renamed" in json.dumps(outline["result"]), outline
        client.send({"id": "whole", "method": "textDocument/documentSymbol",
                     "params": {"textDocument": {"uri": full}}})
        whole = json.dumps(client.reply("whole")["result"])
        assert "whole3" in whole and "whole2" not in whole
        assert client.server_pid(other_than=first) != first
        client.send({"id": "down", "method": "shutdown"}, {"method": "exit"})
        assert client.reply("down")["result"] is None
        assert client.proc.wait(HANG_GUARD_S) == 0
    finally:
        client.close()


def test_a_server_that_keeps_dying_is_not_restarted_for_ever(tmp_path: Path) -> None:
    client = Raw(tmp_path)
    try:
        client.initialize(tmp_path, {"requestBudgetMs": 20_000})
        uri = client.open(tmp_path / "a.weval.yml", GOOD)
        pid = None
        for _ in range(4):
            pid = client.server_pid(other_than=pid)
            os.kill(pid, signal.SIGKILL)
            client.next(lambda m: m.get("method") == "window/showMessage", "window/showMessage")
        client.send(hover("h", uri))
        error = client.reply("h")["error"]
        assert "not running" in error["message"]
        client.send({"method": "exit"})
        assert client.proc.wait(HANG_GUARD_S) == 1  # exit without a shutdown the server answered
    finally:
        client.close()


def test_a_flood_of_requests_is_answered_and_the_next_hover_gets_its_result(tmp_path: Path) -> None:
    client = Raw(tmp_path)
    try:
        client.initialize(tmp_path, {"requestBudgetMs": 20_000})
        uri = client.open(tmp_path / "a.weval.yml", GOOD)
        client.send(hover("warm", uri))
        assert "result" in client.reply("warm")
        # 2,000 hovers with one id (JSON-RPC ids are unique among requests in flight), then 2,000 with
        # their own ids: every one is answered, and the waiting ones past the bound are dropped.
        client.send(*[hover("same", uri) for _ in range(2_000)])
        client.send(*[hover(k, uri) for k in range(2_000)])
        client.send(hover("after", uri))
        after = client.reply("after")
        assert "result" in after and "contents" in after["result"], after
        got = client.drain(3.0)
        replies = [m for m in got if "method" not in m]
        same = [m for m in replies if m["id"] == "same"]
        assert len(same) == 2_000 and sum("result" in m for m in same) == 1
        assert all(m["error"]["code"] == -32600 for m in same if "error" in m)
        numbered = sorted(m["id"] for m in replies if isinstance(m["id"], int))
        assert numbered == list(range(2_000))  # each answered once
        dropped = [m for m in replies if isinstance(m["id"], int) and "error" in m]
        assert dropped and all(m["error"]["code"] == -32802 for m in dropped)
    finally:
        client.close()


def test_without_the_guard_it_is_one_process(tmp_path: Path) -> None:
    client = Raw(tmp_path, [sys.executable, "-m", "evalspec_lsp", "--no-guard"])
    try:
        client.initialize(tmp_path)
        time.sleep(0.2)
        assert not Path(f"/proc/{client.proc.pid}/task/{client.proc.pid}/children").read_text().split()
    finally:
        client.close()
