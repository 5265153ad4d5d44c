"""Runs a person can rely on, over the protocol: runs as code actions, results read back when a file
is opened (nothing re-run), failed points as diagnostics at their own lines, and a clean cancel."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

from tests.run_records import records_of

from ..fakeprovider import FakeProvider, Reply
from .session import (
    CLIENTS,
    DEFAULT_OPTIONS,
    HANG_GUARD_S,
    SERVER,
    capabilities,
    change,
    open_doc,
    position_of,
    published,
    start,
)
from .test_run_lenses import (
    BLUEPRINT,
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
        **DEFAULT_OPTIONS, "run": {"models": ["echo"], "output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


TWO_MODELS = BLUEPRINT.replace("  - openai:gpt-4o-mini\n", "  - echo\n  - openai:gpt-4o-mini\n")


async def actions_at(client: RunClient, uri: str, text: str, needle: str) -> list[lsp.Command]:
    """The commands of the actions offered at `needle` (run actions carry a command, no edit)."""
    pos = position_of(text, needle)
    result = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=lsp.Range(start=pos, end=pos),
        context=lsp.CodeActionContext(diagnostics=[])))
    out: list[lsp.Command] = []
    for a in result or []:
        if isinstance(a, lsp.CodeAction):
            assert a.command is not None
            out.append(a.command)
        elif a.command.startswith("{"):
            # lsprotocol's client-side hook reads any action that has a `command` as a Command, turning
            # the action's Command object into a string; editors tell them apart by its type.
            inner = ast.literal_eval(a.command)
            out.append(lsp.Command(title=inner["title"], command=inner["command"], arguments=inner["arguments"]))
        else:
            out.append(a)
    return out


async def test_runs_are_code_actions_running_the_lens_commands(client: RunClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "two.weval.yml", TWO_MODELS)
    found = await actions_at(client, uri, TWO_MODELS, "prompt: Count to three")
    assert [a.title for a in found] == [
        "Run prompt count", "Run all 2 prompts", "Plan",
        "Run prompt count with echo", "Run prompt count with openai:gpt-4o-mini"]
    assert found[0].command == "evalspec.run"
    assert list(found[0].arguments) == [{"uri": uri, "item": "count"}]  # what the lens sends
    # The prompt's first line offers the same; its other lines and the header offer none (a lightbulb
    # on every line otherwise follows the cursor in VS Code): the lenses run the file from there.
    first = await actions_at(client, uri, TWO_MODELS, "- id: count")
    assert [a.title for a in first] == [a.title for a in found]
    assert await actions_at(client, uri, TWO_MODELS, "title: Lenses") == []
    assert await actions_at(client, uri, TWO_MODELS, "$contains: four") == []
    # Asking for quick fixes only: no run actions.
    pos = position_of(TWO_MODELS, "prompt: Count")
    only = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=lsp.Range(start=pos, end=pos),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix])))
    assert not only

    # "Run prompt greet with echo" runs that prompt with that model only.
    with_echo = next(a for a in await actions_at(client, uri, TWO_MODELS, "prompt: Say hello")
                     if a.title == "Run prompt greet with echo")
    before = len(client.finished)
    answer = _plain(await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=with_echo.command, arguments=with_echo.arguments)))
    # Past the request budget (a loaded machine) the command answers `pending` and the run follows.
    assert answer["ok"] is True and (answer.get("cells") == 1 or "pending" in answer), answer

    async def wait() -> dict[str, Any]:
        while len(client.finished) <= before:
            client.finished_event.clear()
            await client.finished_event.wait()
        return client.finished[-1]

    done = await asyncio.wait_for(wait(), HANG_GUARD_S)
    assert [m["model"] for m in done["summary"]["models"]] == ["echo[temp:0]"] and done["item"] == "greet"
    assert done["summary"]["models"][0]["cells"] == 1


def cli_run(path: Path, output: Path, *extra: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(path), "-m", "echo", "-o", str(output),
                           *extra], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr


async def test_results_on_disk_are_shown_when_a_file_is_opened(client: RunClient, tmp_path: Path):
    path = tmp_path / "earlier.weval.yml"
    path.write_text(BLUEPRINT)
    cli_run(path, tmp_path / "results")  # an earlier run, by another process: the CLI
    journal = next((tmp_path / "results").rglob("*.run.db"))
    calls_before = records_of(journal)
    # Opened with `greet` edited since that run: its result is shown as older than the text.
    text = BLUEPRINT.replace("prompt: Say hello", "prompt: Say hello there")
    uri = open_doc(client, path, text)

    async def restored() -> dict[int, list[str]]:
        while True:
            found = titles(await lenses(client, uri))
            if len(found.get(8, [])) > 1:
                return found
            await asyncio.sleep(0.05)

    found = await asyncio.wait_for(restored(), HANG_GUARD_S)
    assert found[8] == ["▶ Run", "✗ 0.00 echo[temp:0] (just now)"]
    assert found[4] == ["▶ Run", "✓ 1.00 echo[temp:0] (just now) (text changed since)"]
    assert found[0][2] == "last run (just now): mean 0.50 · 1 pass · 1 fail"
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=position_of(text, "id: count")))
    assert hover is not None and hover.contents.value.startswith("**Last run** of `count`, just now")
    assert records_of(journal) == calls_before  # nothing was run again
    # "show results" opens that run's comparison file.
    shown = _plain(await execute(client, "evalspec.showResults", uri=uri))
    assert shown["ok"] is True and shown["file"].endswith("_comparison.json")
    # The failed point of the fresh prompt is at its line; the edited prompt's are not reported.
    params = await published(client, uri, where=lambda p: any(d.source == "evalspec run" for d in p.diagnostics))
    runs = [d for d in params.diagnostics if d.source == "evalspec run"]
    assert [(d.range.start.line, d.code) for d in runs] == [(position_of(text, "$contains: four").line,
                                                             "run-point-failed")]


async def test_failed_points_are_diagnostics_at_their_lines(client: RunClient, tmp_path: Path):
    text = BLUEPRINT.replace("    - $contains: four\n", "    - $contains: four\n    - $contains: Count\n")
    uri = open_doc(client, tmp_path / "points.weval.yml", text)
    await run_to_end(client, uri)
    params = await published(client, uri, where=lambda p: any(d.source == "evalspec run" for d in p.diagnostics))
    [failed] = [d for d in params.diagnostics if d.source == "evalspec run"]
    four = position_of(text, "$contains: four")
    assert failed.range.start.line == four.line and failed.range.start.character >= four.character - 2
    assert failed.severity == lsp.DiagnosticSeverity.Information and failed.code == "run-point-failed"
    assert "$contains failed on echo[temp:0]: 0.00" in failed.message
    assert "evaluated to 0.00" in failed.message  # the function's reason
    # Hovering the point shows its score per model; the passing point's too.
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=position_of(text, "$contains: Count")))
    assert hover is not None and "- **echo[temp:0]**: 1.00" in hover.contents.value
    # Editing the prompt clears its run diagnostics (its result no longer describes the text).
    change(client, uri, 2, (four.line, four.character + 11), (four.line, four.character + 15), "five")
    params = await published(client, uri, 2)
    assert not [d for d in params.diagnostics if d.source == "evalspec run"]
    # Switched off in the settings: none even for an unedited prompt after a new run.
    await execute_settings(client, {"run": {"models": ["echo"], "output": "results", "diagnostics": False}})
    await run_to_end(client, uri)
    await asyncio.sleep(0.1)
    latest = await published(client, uri)
    assert not [d for d in latest.diagnostics if d.source == "evalspec run"]


async def test_cancel_keeps_the_summary_the_finished_results_and_renamed_ids(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        fake.then(Reply.ok("hello"), *[Reply.hang(30) for _ in range(40)])
        await execute_settings(client, {"run": {"output": "results", "cache": False, "concurrency": 1}})
        text = custom_blueprint(fake) + "".join(
            f"- id: extra{i}\n  prompt: more {i}\n  should:\n    - $contains: x\n" for i in range(3))
        uri = open_doc(client, tmp_path / "slow.weval.yml", text)
        assert _plain(await execute(client, "evalspec.run", uri=uri))["ok"] is True
        greet = position_of(text, "- id: greet").line

        async def greeted() -> None:
            while len(fake.requests) < 2 or not any("✓" in t for t in titles(await lenses(client, uri))
                                                    .get(greet, [])):
                await asyncio.sleep(0.02)

        await asyncio.wait_for(greeted(), HANG_GUARD_S)
        # Rename `greet` while the run goes on: its result follows the new id.
        col = position_of(text, "- id: greet").character + 6
        change(client, uri, 2, (greet, col), (greet, col + 5), "hi")
        await asyncio.sleep(0.3)
        assert _plain(await execute(client, "evalspec.cancelRun", uri=uri))["ok"] is True

        async def wait() -> dict[str, Any]:
            while not client.finished:
                client.finished_event.clear()
                await client.finished_event.wait()
            return client.finished[-1]

        done = await asyncio.wait_for(wait(), HANG_GUARD_S)
        assert done["interrupted"] is True and done["cancelled"] is True
        found = titles(await lenses(client, uri))
        assert found[greet][1] == "✓ 1.00 local:fake[temp:0] (text changed since)"  # kept, under its new id
        count = position_of(text, "- id: count").line
        assert found[count][1] == "⊘ cancelled local:fake[temp:0]"  # the call in flight
        assert found[0][2] == "cancelled: mean 1.00 · 1 pass · 0 fail"  # the summary lens stays
        # Results files were written for what finished, and "show results" opens them.
        comparison = Path(done["files"][0])
        data = json.loads(comparison.read_text())
        assert data["allFinalAssistantResponses"]["greet"] == {"local:fake[temp:0]": "hello"}
        shown = _plain(await execute(client, "evalspec.showResults", uri=uri))
        assert shown["ok"] is True and shown["file"] == str(comparison)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client))
async def pull_run_client(lsp_client: RunClient, tmp_path):
    caps = capabilities("visual-studio-code@v1.65.2", pull=True)
    caps.workspace = caps.workspace or lsp.WorkspaceClientCapabilities()
    caps.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    await start(lsp_client, "visual-studio-code@v1.65.2", tmp_path, caps=caps, options={
        **DEFAULT_OPTIONS, "run": {"models": ["echo"], "output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


async def test_pull_clients_are_asked_to_pull_again_and_get_the_failed_points(pull_run_client: RunClient,
                                                                              tmp_path: Path):
    client = pull_run_client
    uri = open_doc(client, tmp_path / "pull.weval.yml", BLUEPRINT)
    before = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert not before.items
    await run_to_end(client, uri)
    assert client.diagnostic_refresh_count > 0  # workspace/diagnostic/refresh: VS Code pulls again
    after = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), previous_result_id=before.result_id))
    assert after.kind == lsp.DocumentDiagnosticReportKind.Full
    assert [(d.range.start.line, d.code, d.source) for d in after.items] == [
        (position_of(BLUEPRINT, "$contains: four").line, "run-point-failed", "evalspec run")]
    assert client.published == []  # still never pushed to
