"""Workspace findings over the protocol: every eval file under the workspace folder, unopened ones too,
pulled with workspace/diagnostic or pushed to clients without it, and again when a file changes on disk."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsprotocol import types as lsp

from .session import HANG_GUARD_S, RecordingClient, open_doc, published

BAD_BLUEPRINT = "title: Bad\nmodels: [echo]\n---\n- id: a\n  prompt: hi\n  shuld: [x]\n"
BAD_SUITE = "tests:\n  - id: a\n    input: hi\n    criteria: c\n    assert:\n      - type: containz\n        value: x\n"


def _workspace(root: Path) -> dict[str, Path]:
    files = {
        "blueprint": root / "blueprints" / "bad.yml",
        "suite": root / "evals" / "bad.eval.yaml",
        "clean": root / "blueprints" / "clean.yml",
        "other": root / "compose.yml",
        "skipped": root / "node_modules" / "pkg" / "bad.yml",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["blueprint"].write_text(BAD_BLUEPRINT)
    files["suite"].write_text(BAD_SUITE)
    files["clean"].write_text("title: Clean\nmodels: [echo]\n---\n- id: a\n  prompt: hi\n  should: [x]\n")
    files["other"].write_text("services:\n  web:\n    image: nginx\n")
    files["skipped"].write_text(BAD_BLUEPRINT)
    return files


async def _pull(client: RecordingClient, previous: list[lsp.PreviousResultId] | None = None,
                until=lambda items: True) -> dict[str, lsp.WorkspaceDocumentDiagnosticReport]:
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        report = await client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(
            previous_result_ids=previous or []))
        items = {item.uri: item for item in report.items}
        if until(items):
            return items
        assert time.monotonic() < deadline, items
        await asyncio.sleep(0.1)


def _codes(report) -> set[str]:
    return {d.code for d in report.items}


async def test_pulled_workspace_findings_list_unopened_files(pull_client: RecordingClient, tmp_path: Path):
    client = pull_client
    assert client.init_result.capabilities.diagnostic_provider.workspace_diagnostics
    files = _workspace(tmp_path)
    uris = {k: p.as_uri() for k, p in files.items()}
    items = await _pull(client, until=lambda items: uris["blueprint"] in items and uris["suite"] in items)
    assert "unknown-key" in _codes(items[uris["blueprint"]])
    assert _codes(items[uris["suite"]])  # the misspelt assertion type
    assert not items[uris["clean"]].items  # an eval file without findings: an empty report
    assert uris["other"] not in items and uris["skipped"] not in items  # not eval files; not looked in
    # Asked again with the result ids: nothing changed, nothing resent.
    previous = [lsp.PreviousResultId(uri=u, value=r.result_id) for u, r in items.items()]
    again = await _pull(client, previous)
    assert {r.kind for r in again.values()} == {"unchanged"}
    # Fixed on disk (outside the editor): the watcher's notification brings a new report.
    files["blueprint"].write_text(BAD_BLUEPRINT.replace("shuld", "should"))
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=uris["blueprint"], type=lsp.FileChangeType.Changed)]))
    fixed = await _pull(client, previous, until=lambda items: items[uris["blueprint"]].kind == "full")
    assert not fixed[uris["blueprint"]].items
    # An open document is the editor's own: not in the workspace report.
    open_doc(client, files["suite"], BAD_SUITE)
    await asyncio.sleep(0.2)
    assert uris["suite"] not in await _pull(client)


async def test_push_clients_get_the_workspace_findings_published(client: RecordingClient, tmp_path: Path):
    files = _workspace(tmp_path)
    uri = files["blueprint"].as_uri()
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=p.as_uri(), type=lsp.FileChangeType.Created) for p in files.values()]))
    deadline = time.monotonic() + HANG_GUARD_S
    while uri not in client.diagnostics or files["suite"].as_uri() not in client.diagnostics:
        assert time.monotonic() < deadline, client.diagnostics
        await asyncio.sleep(0.1)
    assert "unknown-key" in {d.code for d in client.diagnostics[uri]}
    assert files["skipped"].as_uri() not in client.diagnostics
    # Opened, edited clean and closed: its published findings follow the file on disk again.
    opened = open_doc(client, files["blueprint"], BAD_BLUEPRINT.replace("shuld", "should"))
    await published(client, opened, version=1)
    assert not client.diagnostics[uri]
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    deadline = time.monotonic() + HANG_GUARD_S
    while "unknown-key" not in {d.code for d in client.diagnostics.get(uri, [])}:
        assert time.monotonic() < deadline, client.diagnostics.get(uri)
        await asyncio.sleep(0.1)
