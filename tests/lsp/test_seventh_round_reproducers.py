"""The seventh attack round's findings in the language server (`python bench/attack.py outside7`).

- Go to definition on a reference to a file outside the project (a judge prompt `../outside/x.md`, a
  tests file, a code judge's script, a symlink pointing out) read that file: the server converted the
  target's position to the editor's columns through the file's text, though the position is the file's
  start. `check` and `run` read nothing there; the editor's server must not either.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .raw_stdio import Raw

# Every open of a path under the folder named by ATTACK7_WATCH, by the server process (and the guard),
# noted in ATTACK7_LOG: what strace showed in the attack run, without strace.
HOOK = '''
import os, sys
_watch, _log = os.environ.get("ATTACK7_WATCH"), os.environ.get("ATTACK7_LOG")
def _hook(event, args):
    if _watch and event in ("open", "os.open") and args and str(args[0]).startswith(_watch):
        with open(_log, "a") as f:
            f.write(f"{event} {args[0]}\\n")
if _watch:
    sys.addaudithook(_hook)
'''

SUITE = """name: s
description: d
tests:
  - id: a
    criteria: c
    input:
      - role: user
        content:
          - {type: file, value: ../outside/secret.txt}
    assert:
      - type: llm-judge
        prompt: ../outside/secret.md
      - type: code-judge
        command: [python3, ../outside/judge.py]
      - type: llm-judge
        prompt: ./linked.md
  - file://../outside/cases.yaml
"""


@pytest.fixture
def watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(project, outside folder, log of opens under it)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("secret.txt", "secret.md", "judge.py"):
        (outside / name).write_text("ATTACK-MARKER \U0001f600 x\n")
    (outside / "cases.yaml").write_text("- id: far\n  input: ATTACK-MARKER\n  criteria: x\n")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    os.symlink(outside / "secret.md", project / "linked.md")
    log = tmp_path / "opens.log"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("ATTACK7_WATCH", str(outside))
    monkeypatch.setenv("ATTACK7_LOG", str(log))
    return project, outside, log


def test_definition_of_a_reference_outside_the_project_reads_nothing_there(watched: tuple[Path, Path, Path]) -> None:
    project, outside, log = watched
    client = Raw(project, [sys.executable, "-m", "evalspec_lsp"])
    try:
        client.initialize(project)
        uri = client.open(project / "s.eval.yaml", SUITE)
        lines = SUITE.splitlines()
        wanted = {"../outside/secret.txt": outside / "secret.txt", "../outside/secret.md": outside / "secret.md",
                  "../outside/judge.py": outside / "judge.py", "./linked.md": outside / "secret.md",  # the link, resolved
                  "file://../outside/cases.yaml": outside / "cases.yaml"}
        found = {}
        for n, ref in enumerate(wanted):
            line = next(i for i, text in enumerate(lines) if ref in text)
            col = lines[line].index(ref) + 2
            for method in ("textDocument/definition", "textDocument/hover", "textDocument/completion"):
                client.send({"id": f"{n}-{method}", "method": method, "params": {
                    "textDocument": {"uri": uri}, "position": {"line": line, "character": col}}})
                reply = client.reply(f"{n}-{method}")
                assert "result" in reply, reply
                if method == "textDocument/definition":
                    found[ref] = reply["result"]
        for ref, target in wanted.items():
            if ref in ("file://../outside/cases.yaml", "../outside/secret.txt"):
                continue  # (a tests item's URL, a content block in a flow mapping: not offered today)
            locations = found[ref]
            assert [loc["uri"] for loc in locations] == [target.as_uri()], (ref, locations)
            assert locations[0]["range"] == {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
        client.send({"id": "links", "method": "textDocument/documentLink", "params": {"textDocument": {"uri": uri}}})
        assert "result" in client.reply("links")
        client.send({"id": "bye", "method": "shutdown"})
        client.reply("bye")
        client.send({"method": "exit"})
        client.proc.wait(30)
        assert not log.exists(), log.read_text()
    finally:
        client.close()
