"""The committed schemas work in yaml-language-server through a modeline (a real server, over stdio).

`.ci/run` installs yaml-language-server 2 from npm into `.ci/tools`; elsewhere set
`YAML_LANGUAGE_SERVER` to its executable, or put it on PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = REPO / "schemas"


def server_command() -> list[str]:
    for candidate in (os.environ.get("YAML_LANGUAGE_SERVER"), REPO / ".ci" / "tools" / "node_modules" / ".bin" /
                      "yaml-language-server", shutil.which("yaml-language-server")):
        if candidate and Path(candidate).exists():
            return [str(candidate), "--stdio"]
    raise AssertionError("yaml-language-server is not installed: run `bash .ci/run`, or "
                         "`npm install --prefix .ci/tools yaml-language-server@2`")


class Client:
    """Just enough of an LSP client: answers the server's requests, collects its notifications."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.messages: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def send(self, payload: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **payload}).encode()
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                c = out.read(1)
                if not c:
                    return
                header += c
            length = next(int(h.split(b":")[1]) for h in header.split(b"\r\n") if h.lower().startswith(b"content-length"))
            message = json.loads(out.read(length))
            self.messages.append(message)
            if "id" in message and "method" in message:  # a request from the server
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [{"validate": True, "completion": True, "hover": True, "schemaStore": {"enable": False}}
                              for _ in message["params"]["items"]]
                self.send({"id": message["id"], "result": result})

    def wait(self, predicate: Any, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for m in list(self.messages):
                if predicate(m):
                    return m
            time.sleep(0.05)
        raise AssertionError(f"no answer from yaml-language-server within {timeout} s")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def open_in_server(tmp_path: Path, name: str, text: str) -> tuple[Client, Path]:
    """A started yaml-language-server with `text` (saved as `name`) open in it."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    client = Client(server_command())
    client.send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(),
                                                           "capabilities": {}}})
    client.wait(lambda m: m.get("id") == 1)
    client.send({"method": "initialized", "params": {}})
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": path.as_uri(), "languageId": "yaml", "version": 1, "text": text}}})
    return client, path


def diagnostics_for(tmp_path: Path, name: str, text: str) -> list[tuple[int, str]]:
    client, path = open_in_server(tmp_path, name, text)
    try:
        # The first publication may come before the schema is loaded; wait for a settled one.
        deadline = time.monotonic() + 20
        last: list[tuple[int, str]] = []
        while time.monotonic() < deadline:
            pubs = [m for m in client.messages if m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == path.as_uri()]
            if pubs:
                last = [(d["range"]["start"]["line"], d["message"]) for d in pubs[-1]["params"]["diagnostics"]]
                if last:
                    break
            time.sleep(0.1)
        return last
    finally:
        client.close()


@pytest.fixture(scope="module", autouse=True)
def _server_available() -> None:
    server_command()


def test_weval_schema_through_a_modeline(tmp_path: Path) -> None:
    line = f"# yaml-language-server: $schema={(SCHEMAS / 'weval-blueprint.schema.json').as_uri()}\n"
    text = line + "titel: Typo in the header\nmodels: [openai:gpt-4o-mini]\n---\n" + line + \
        "- id: p1\n  prompt: hi\n  shuld: [x]\n  should:\n    - $word_count_between: ten\n"
    found = diagnostics_for(tmp_path, "bp.yml", text)
    lines = sorted({n for n, _ in found})
    assert 1 in lines and 7 in lines, found  # `titel` and `shuld`, each in its own document
    assert any("titel" in m for _, m in found) and any("shuld" in m for _, m in found)


def test_agentv_schema_through_a_modeline(tmp_path: Path) -> None:
    text = (f"# yaml-language-server: $schema={(SCHEMAS / 'agentv-eval.schema.json').as_uri()}\n"
            "description: d\ntests:\n  - id: a\n    input: hi\n    criteria: ok\n    critera: typo\n"
            "    assert:\n      - type: contains\n        value: 3\n")
    found = diagnostics_for(tmp_path, "suite.eval.yaml", text)
    assert any(n == 6 and "critera" in m for n, m in found), found


def test_a_valid_blueprint_is_clean(tmp_path: Path) -> None:
    line = f"# yaml-language-server: $schema={(SCHEMAS / 'weval-blueprint.schema.json').as_uri()}\n"
    text = line + "- id: p1\n  prompt: hi\n  should:\n    - $contains: hello\n    - names Paris\n"
    # A clean file gets an empty publication: wait a fixed settle time and check nothing came.
    client, _ = open_in_server(tmp_path, "ok.yml", text)
    try:
        client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        time.sleep(3)
        pubs = [m for m in client.messages if m.get("method") == "textDocument/publishDiagnostics"]
        assert pubs[-1]["params"]["diagnostics"] == []
    finally:
        client.close()
