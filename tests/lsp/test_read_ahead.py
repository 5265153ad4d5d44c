"""A flood of didOpens does not hold up the request behind it (the attack run's
`3/bulk-open-10000-documents`): the server reads ahead and handles a request about one document before
the notifications about other documents read before it, after the ones about its own (server/stdio.py,
server/message_order.py). Over real stdio; nothing here is timed."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from .raw_stdio import Raw

GOOD = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  should: [be kind]\n"
# The same item with its keys the other way round: line 3 is `prompt` now, where it was `id`.
SWAPPED = GOOD.replace("- id: a\n  prompt: Hi", "- prompt: Hi\n  id: a")
# A budget long enough that no answer here is "still checking" or "busy" on a loaded machine: what
# is checked is which messages were handled, and in what order, not how fast.
SLOW_MACHINE = {"requestBudgetMs": 120_000}


def _open(uri: str, text: str) -> dict[str, Any]:
    return {"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "yaml", "version": 1, "text": text}}}


def _hover(msg_id: str, uri: str, line: int, character: int) -> dict[str, Any]:
    return {"id": msg_id, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character}}}


def _flood(root: Path, n: int) -> tuple[list[dict[str, Any]], list[str]]:
    """n didOpens, an edit of the first document, then hovers on the last one, the middle one and the
    edited one: each hover needs a message of the flood about its own document handled before it."""
    uris = [(root / f"many-{k}.weval.yml").as_uri() for k in range(n)]
    messages = [_open(uri, GOOD.replace("id: a", f"id: a{k}")) for k, uri in enumerate(uris)]
    messages.append({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uris[0], "version": 2}, "contentChanges": [{"text": SWAPPED}]}})
    messages += [_hover("last", uris[-1], 4, 4), _hover("middle", uris[n // 2], 4, 4),
                 _hover("edited", uris[0], 3, 4)]
    return messages, uris


def _prompt_hover(reply: dict[str, Any]) -> bool:
    result = reply.get("result")
    return isinstance(result, dict) and "**prompt**" in result["contents"]["value"]


def test_a_hover_behind_a_flood_of_opens_is_handled_ahead_of_the_other_documents(tmp_path: Path) -> None:
    """The server stopped while the flood is written (it all waits in its pipe: under 64 KB), then let
    go: it reads the whole flood before it has handled more than a few messages, and the hovers go
    ahead of the other documents' opens, each after its own document's open (and edit)."""
    log_file = tmp_path / "server.log"
    server = Raw(tmp_path, [sys.executable, "-m", "evalspec_lsp", "--no-guard", "--log-file", str(log_file)])
    try:
        server.initialize(tmp_path, SLOW_MACHINE)
        messages, _ = _flood(tmp_path, 150)
        # A pipe holds 64 KB at least: the write ends while the server is stopped.
        assert sum(len(json.dumps(m)) + 40 for m in messages) < 60_000
        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            server.send(*messages)
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        assert _prompt_hover(server.reply("last")) and _prompt_hover(server.reply("middle"))
        assert _prompt_hover(server.reply("edited"))  # after its edit: line 3 is `prompt` there
        server.send({"id": "down", "method": "shutdown"})
        assert "result" in server.reply("down")
    finally:
        server.close()
    passed = [int(n) for n in re.findall(r"textDocument/hover went ahead of (\d+) notifications", log_file.read_text())]
    # Read at the end of the flood, each hover was handled while most of the 150 opens still waited.
    assert len(passed) == 3 and min(passed) > 75, passed


def test_through_the_guard_the_hovers_after_5000_opens_get_their_results(tmp_path: Path) -> None:
    server = Raw(tmp_path)
    try:
        server.initialize(tmp_path, SLOW_MACHINE)
        messages, uris = _flood(tmp_path, 5000)
        server.send(*messages)
        assert _prompt_hover(server.reply("last")) and _prompt_hover(server.reply("middle"))
        assert _prompt_hover(server.reply("edited"))
        # Every document was taken in: the flood's last one is checked and has its diagnostics.
        published = server.next(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                and m["params"]["uri"] == uris[-2], "diagnostics of the last document")
        assert published["params"]["diagnostics"] == []
    finally:
        server.close()
