"""The server's log: methods and timings at its default level, never document text or answers;
`--log-level debug` keeps every message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SECRET = "Tell me the launch code 7741-ZEBRA"
TEXT = f"title: Private\nmodels: [echo]\n---\n- id: p\n  prompt: {SECRET}\n  should:\n    - $contains: ZEBRA\n"


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def talk(tmp_path: Path, *flags: str) -> str:
    log = tmp_path / "server.log"
    doc = tmp_path / "private.weval.yml"
    uri = doc.as_uri()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"capabilities": {}, "rootUri": tmp_path.as_uri(), "processId": None,
                    # the hover waits for the engine worker (starting) rather than answer "still checking"
                    "initializationOptions": {"requestBudgetMs": 10_000}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": TEXT}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 4, "character": 4}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "evalspec_lsp", "--log-file", str(log), *flags],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(frame(m) for m in messages[:4]))
    proc.stdin.flush()
    while True:  # until the hover is answered (pygls's `shutdown` would cancel it)
        length = 0
        while (line := proc.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        assert line, "the server ended"
        if json.loads(proc.stdout.read(length)).get("id") == 2:
            break
    proc.communicate(b"".join(frame(m) for m in messages[4:]), timeout=60)
    return log.read_text()


def test_the_default_log_has_methods_and_timings_but_no_text(tmp_path: Path):
    log = talk(tmp_path)
    assert "textDocument/hover" in log and " ms" in log
    assert "textDocument/didOpen" in log
    assert "7741-ZEBRA" not in log and "launch code" not in log
    assert "Sending data" not in log  # pygls's whole-message lines


def test_debug_keeps_every_message(tmp_path: Path):
    log = talk(tmp_path, "--log-level", "debug")
    assert "Sending data" in log and "textDocument/publishDiagnostics" in log  # payloads, as they go out
