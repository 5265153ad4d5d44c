"""Editor runs that must not start, or must not take over another run's journal (issue 29): a run
while a terminal run of the same file holds the run lock is refused with the CLI's "already running
(PID …)" message, the file's earlier results kept and nothing logged as a failure; a run of an unsaved
text gets a run label (and journal) of its own, so a terminal `--resume` of the saved file finds its own."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

from evalspec.analysis import analyze
from evalspec.run.options import RunOptions
from evalspec.run.runner import plan_for

from ..fakeprovider import FakeProvider, Reply
from .session import CLIENTS, DEFAULT_OPTIONS, HANG_GUARD_S, SERVER, open_doc, start
from .test_run_lenses import (
    AGENTV,
    RunClient,
    _plain,
    custom_blueprint,
    execute,
    execute_settings,
    lenses,
    make_run_client,
    run_to_end,
    titles,
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client),
                    params=CLIENTS, ids=["nvim-0.7", "vscode"])
async def client(lsp_client: RunClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={
        **DEFAULT_OPTIONS, "run": {"output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


async def test_a_run_while_a_terminal_run_holds_the_lock_is_refused_and_loses_nothing(client: RunClient,
                                                                                       tmp_path: Path):
    with FakeProvider() as fake:
        text = custom_blueprint(fake)
        path = tmp_path / "locked.weval.yml"
        path.write_text(text)
        uri = open_doc(client, path, text)
        done = await run_to_end(client, uri)
        assert done["interrupted"] is False
        before = titles(await lenses(client, uri))
        assert before[0][2].startswith("last run: mean")

        # The same run in a terminal, stuck on its first call: it holds the run lock.
        fake.then(*[Reply.hang(60) for _ in range(4)])
        calls = len(fake.requests)
        cli = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(path), "-o", str(tmp_path / "results")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        try:
            async def cli_calling() -> None:
                while len(fake.requests) <= calls:
                    assert cli.poll() is None, "the terminal run ended early"
                    await asyncio.sleep(0.05)

            await asyncio.wait_for(cli_calling(), HANG_GUARD_S)
            shown = len(client.messages)
            assert _plain(await execute(client, "evalspec.run", uri=uri))["ok"] is True

            async def refused() -> lsp.ShowMessageParams:
                while True:
                    found = [m for m in client.messages[shown:] if "already running" in m.message]
                    if found:
                        return found[0]
                    await asyncio.sleep(0.05)

            message = await asyncio.wait_for(refused(), HANG_GUARD_S)
            assert f"is already running (PID {cli.pid}" in message.message
            assert message.type == lsp.MessageType.Warning
            await asyncio.sleep(0.3)  # (any later message would say so)
            assert not [m for m in client.messages[shown:] if "interrupted" in m.message or "nothing scored" in m.message]
            assert titles(await lenses(client, uri)) == before  # the earlier results are kept
            assert not [m for m in client.log_messages if "Traceback" in m.message or "failed:" in m.message]
            assert not client.finished[1:]  # no run ended: none started
        finally:
            cli.kill()
            cli.wait(10)


async def test_an_unsaved_text_runs_under_a_label_of_its_own(client: RunClient, tmp_path: Path):
    await execute_settings(client, {"run": {"models": ["echo"], "output": "results", "cache": False}})
    path = tmp_path / "suite.eval.yaml"
    path.write_text(AGENTV)
    saved_label = plan_for(analyze(AGENTV, path), RunOptions(models=["echo"], output=tmp_path / "results")).run_label

    # The saved text: the same label as the terminal's run of the file (so --resume continues it).
    uri = open_doc(client, path, AGENTV)
    done = await run_to_end(client, uri)
    assert done["summary"]["run_label"] == saved_label

    # Edited, not saved: a label of its own, so the saved file's journal is left alone.
    edited = AGENTV.replace("value: bye", "value: goodbye")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=edited)]))
    done = await run_to_end(client, uri)
    assert done["summary"]["run_label"] != saved_label
    assert done["summary"]["run_label"].startswith("unsaved-")
    journals = {p.name for p in (tmp_path / "results").rglob("*.journal.jsonl")}
    assert f"{saved_label}.journal.jsonl" in journals and f"{done['summary']['run_label']}.journal.jsonl" in journals
