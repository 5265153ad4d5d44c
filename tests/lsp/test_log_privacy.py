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
         "params": {"capabilities": {}, "rootUri": tmp_path.as_uri(), "processId": None}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": TEXT}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 4, "character": 4}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    proc = subprocess.run([sys.executable, "-m", "evalspec_lsp", "--log-file", str(log), *flags],
                          input=b"".join(frame(m) for m in messages), capture_output=True, timeout=60)
    assert b'"id": 2' in proc.stdout or b'"id":2' in proc.stdout, proc.stderr.decode()
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
