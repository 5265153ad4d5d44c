"""The ninth attack round's findings in the language server (`python bench/attack.py memory9 show9`).

- The run lenses' state of every document ever opened stayed after it closed (its run items: each
  prompt's id, span and fingerprint), and so did one for every URI a Run command named, opened or not:
  2,000 blueprints of 200 KB opened and closed took the server from 64 MB to 2 GB
  (`features/run.RunFeature.forget_if_closed`). Counted through `evalspec/workers`, not measured.
- Every notification (didOpen, didChange, didClose, `$/setTrace`…) and every command left its handler's
  future in pygls's table of requests in flight for good, ~1 KB each: 200,000 `$/setTrace` took the
  server from 64 to 258 MB, and a day of typing sends a didChange a keystroke (`protocol.py`).
- "Show results" read the results file the output folder names through a link (a cloned repository's
  results folder pointing at a file outside the project: read into the report), and its cost file from
  a FIFO, which was never answered (the thread kept the server from exiting after the editor quit).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .raw_stdio import Raw
from .test_seventh_round_reproducers import HOOK

BLUEPRINT = "title: t\nmodels: [echo]\n---\n" + "".join(
    f"- id: p{i}\n  prompt: question {i}\n  should: [$contains: question]\n" for i in range(50))


def _symbols(client: Raw, uri: str, tag: str) -> None:
    """Once the document is analysed (its outline answered: the analysis's hooks have run)."""
    client.send({"id": tag, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": uri}}})
    assert "result" in client.reply(tag)


def _counted(client: Raw, tag: str, key: str, want: int) -> int:
    """One of the server's counts (`evalspec/workers`), asked until it is at most `want` (a bound against a
    hang: a refused run's task ends just after its command is answered, a flood takes a while)."""
    got = -1
    for n in range(100):
        client.send({"id": f"{tag}-{n}", "method": "evalspec/workers", "params": None})
        reply = client.reply(f"{tag}-{n}")
        if "result" in reply:  # (else the guard's "busy" while a flood is worked through)
            got = int(reply["result"][key])
            if got <= want:
                break
        time.sleep(0.05)
    return got


def _run_states(client: Raw, tag: str, want: int) -> int:
    return _counted(client, tag, "runStates", want)


def test_closed_documents_and_commands_on_unopened_ones_leave_no_run_state(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    client = Raw(tmp_path, [sys.executable, "-m", "evalspec_lsp"])
    try:
        client.initialize(tmp_path, {"requestBudgetMs": 20_000, "run": {"models": ["echo"], "output": "out"}})
        uris = [client.open(tmp_path / f"d{i}.weval.yml", BLUEPRINT) for i in range(6)]
        for i, uri in enumerate(uris):
            _symbols(client, uri, f"sym-{i}")
        assert _counted(client, "open", "runStates", 6) == 6  # open documents keep theirs (and no more)
        for uri in uris[1:]:
            client.send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        for i in range(20):  # Run commands naming documents never opened: refused, nothing kept
            client.send({"id": f"run-{i}", "method": "workspace/executeCommand", "params": {
                "command": "evalspec.run", "arguments": [{"uri": (tmp_path / f"never{i}.weval.yml").as_uri()}]}})
        for i in range(20):
            answer: Any = client.reply(f"run-{i}")["result"]
            assert answer["ok"] is False, answer
        assert _run_states(client, "closed", 1) == 1
    finally:
        client.close()


def test_notifications_and_commands_leave_no_handler_behind(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    client = Raw(tmp_path, [sys.executable, "-m", "evalspec_lsp"])
    try:
        client.initialize(tmp_path, {"requestBudgetMs": 20_000})
        uri = client.open(tmp_path / "a.weval.yml", BLUEPRINT)
        for k in range(1000):
            client.send({"method": "$/setTrace", "params": {"value": "off"}},
                        {"method": "textDocument/didChange", "params": {
                            "textDocument": {"uri": uri, "version": k + 2}, "contentChanges": [{
                                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": k % 2}},
                                "text": "#" if k % 2 == 0 else ""}]}})
        for k in range(50):
            client.send({"id": f"cancel-{k}", "method": "workspace/executeCommand", "params": {
                "command": "evalspec.cancelRun", "arguments": [{"uri": uri}]}})
        for k in range(50):
            client.reply(f"cancel-{k}")  # an answer ("no run", or the guard's "busy" during the flood)
        _symbols(client, uri, "sym")
        assert _counted(client, "after", "handlers", 1) == 1  # the count's own request
    finally:
        client.close()


@pytest.fixture
def cloned_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(project, its blueprint, log of opens under the outside folder): a blueprint run once by the CLI,
    its results folder then the attacker's to plant in (as a cloned repository's would be)."""
    project, outside, log = tmp_path / "proj", tmp_path / "outside", tmp_path / "opens.log"
    (project / ".git").mkdir(parents=True)
    outside.mkdir()
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    bp = project / "x.weval.yml"
    bp.write_text("title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n")
    ran = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", "evalspec-results",
                          "--eval-method", "none"], cwd=project, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    comparison = next((project / "evalspec-results").rglob("*_comparison.json"))
    (outside / "far.json").write_bytes(comparison.read_bytes().replace(b'"hi"', b'"OUTSIDE-MARKER"'))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("ATTACK7_WATCH", str(outside))
    monkeypatch.setenv("ATTACK7_LOG", str(log))
    return project, bp, log


def _show_results(project: Path, bp: Path) -> dict[str, Any]:
    client = Raw(project, [sys.executable, "-m", "evalspec_lsp"])
    try:
        client.initialize(project, {"requestBudgetMs": 20_000})
        uri = client.open(bp, bp.read_text())
        _symbols(client, uri, "sym")
        for n in range(100):  # the earlier run is read back from the results folder on open
            client.send({"id": f"show-{n}", "method": "workspace/executeCommand", "params": {
                "command": "evalspec.showResults", "arguments": [{"uri": uri, "open": False, "markdown": True}]}})
            answer: dict[str, Any] = client.reply(f"show-{n}")["result"]
            if answer.get("error") != "this file has no finished run yet":
                return answer
            time.sleep(0.1)
        raise AssertionError("the earlier run was not read back")
    finally:
        client.close()


def test_show_results_reads_no_results_file_through_a_link_out(cloned_results: tuple[Path, Path, Path]) -> None:
    project, bp, log = cloned_results
    comparison = next((project / "evalspec-results").rglob("*_comparison.json"))
    comparison.unlink()
    comparison.symlink_to(log.parent / "outside" / "far.json")
    answer = _show_results(project, bp)
    assert answer["ok"] is False and "link" in answer["error"], answer
    assert not log.exists(), log.read_text()
    assert not any(b"OUTSIDE-MARKER" in p.read_bytes() for p in (project / "evalspec-results").rglob("*.html"))


def test_show_results_with_a_cost_file_that_is_a_fifo_answers(cloned_results: tuple[Path, Path, Path]) -> None:
    project, bp, _ = cloned_results
    cost = next((project / "evalspec-results").rglob("*_cost.json"))
    cost.unlink()
    os.mkfifo(cost)
    answer = _show_results(project, bp)  # was never answered: the report waited for a writer
    assert answer["ok"] is True and answer["report"] and "evalspec report" in answer["markdown"], answer
