"""A suite's diagnostics follow the files it reads: the editor's unsaved text of an open tests file,
a save, and changes on disk the client reports (workspace/didChangeWatchedFiles)."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

from .session import HANG_GUARD_S, RecordingClient, change, open_doc, position_of, published

SUITE = "name: s\ndescription: d\ntests: ./cases.yaml\n"
GOOD = "- id: ok\n  input: Hi\n  criteria: Says hi\n"
INCOMPLETE = "- id: ok\n  input: Hi\n"  # no criteria, no expected output: incomplete-test


async def _registered(client: RecordingClient) -> None:
    while not client.registrations:
        await asyncio.sleep(0.01)


def codes(params: lsp.PublishDiagnosticsParams) -> list[str]:
    return sorted(str(d.code) for d in params.diagnostics)


def has(code: str):
    return lambda params: code in codes(params)


def lacks(code: str):
    return lambda params: code not in codes(params)


def from_the_suite(code: str):
    """Published for the tests file by the suite's analysis (no version: the suite's findings about
    another file), holding `code`."""
    return lambda params: params.version is None and code in codes(params)


async def test_an_unsaved_tests_file_counts_and_its_edits_recheck_the_suite(client: RecordingClient, tmp_path):
    suite_uri = open_doc(client, tmp_path / "suite.eval.yaml", SUITE)
    await published(client, suite_uri, 1, where=has("missing-tests-file"))  # nothing on disk

    cases_uri = open_doc(client, tmp_path / "cases.yaml", GOOD)  # a new buffer, never saved
    await published(client, suite_uri, 1, where=lacks("missing-tests-file"))
    assert not (tmp_path / "cases.yaml").exists()

    change(client, cases_uri, 2, (2, 0), (3, 0), "")  # delete the criteria line, unsaved
    incomplete = await published(client, cases_uri, where=from_the_suite("incomplete-test"))
    assert 0 in [d.range.start.line for d in incomplete.diagnostics if d.code == "incomplete-test"]

    client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=cases_uri)))  # back to the disk: no such file
    await published(client, suite_uri, 1, where=has("missing-tests-file"))


async def test_a_change_on_disk_rechecks_the_suite(client: RecordingClient, tmp_path):
    if client.profile.startswith("visual-studio-code"):  # it allows dynamic registration; Neovim 0.7 does not
        await asyncio.wait_for(_registered(client), 10)
        [watcher] = client.registrations
        assert watcher.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
        assert "jsonl" in str(watcher.register_options)
    cases = tmp_path / "cases.yaml"
    cases.write_text(GOOD)
    suite_uri = open_doc(client, tmp_path / "suite.eval.yaml", SUITE)
    first = await published(client, suite_uri, 1)
    assert "missing-tests-file" not in codes(first)

    cases.unlink()  # removed outside the editor; the client's watcher reports it
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        changes=[lsp.FileEvent(uri=cases.as_uri(), type=lsp.FileChangeType.Deleted)]))
    await published(client, suite_uri, 1, where=has("missing-tests-file"))

    cases.write_text(INCOMPLETE)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        changes=[lsp.FileEvent(uri=cases.as_uri(), type=lsp.FileChangeType.Created)]))
    await published(client, suite_uri, 1, where=lacks("missing-tests-file"))
    await published(client, cases.as_uri(), where=from_the_suite("incomplete-test"))


async def test_saving_a_tests_file_rechecks_the_suite(client: RecordingClient, tmp_path):
    cases = tmp_path / "cases.yaml"
    cases.write_text(GOOD)
    suite_uri = open_doc(client, tmp_path / "suite.eval.yaml", SUITE)
    await published(client, suite_uri, 1, where=lacks("missing-tests-file"))
    count = len(client.published)

    unrelated = tmp_path / "notes.yaml"
    unrelated.write_text("notes: [a]\n")
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=unrelated.as_uri())))
    cases.write_text(INCOMPLETE)
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=cases.as_uri())))
    await published(client, cases.as_uri(), where=from_the_suite("incomplete-test"))
    await published(client, suite_uri, 1, where=lambda p: any(q is p for q in client.published[count:]))
    # One new publication for the suite's own URI (the re-check after the save), none for the other save.
    assert [p.uri for p in client.published[count:]].count(suite_uri) == 1


BLUEPRINT = "title: t\nmodels:\n  - CORE\n---\n- prompt: hi\n  should: [greets]\n"


async def _hover_until(client: RecordingClient, uri: str, wanted: str) -> str:
    """The hover on `CORE` once it names `wanted` (the blueprint is checked again when the collection
    changes; asked again until then)."""
    async def ask() -> str:
        while True:
            hover = await client.text_document_hover_async(lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=position_of(BLUEPRINT, "CORE")))
            text = hover.contents.value if hover is not None else ""  # type: ignore[union-attr]
            if wanted in text:
                return text
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(ask(), HANG_GUARD_S)


async def test_a_model_collection_as_the_editor_has_it_in_hover(client: RecordingClient, tmp_path):
    """Hover on a collection shows its members as the editor has the collection file: unsaved edits, and
    an edit on disk that leaves the folder as it was (a file written in place)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "models").mkdir()
    core = tmp_path / "models" / "CORE.json"
    core.write_text('["openai:gpt-4o-mini"]')
    (tmp_path / "blueprints").mkdir()
    uri = open_doc(client, tmp_path / "blueprints" / "b.weval.yml", BLUEPRINT)
    await published(client, uri, 1)
    assert "(1 models)" in await _hover_until(client, uri, "openai:gpt-4o-mini")

    core_uri = open_doc(client, core, '["openai:gpt-4o-mini", "anthropic:claude-3-haiku"]', "json")  # unsaved
    assert "(2 models)" in await _hover_until(client, uri, "anthropic:claude-3-haiku")

    client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=core_uri)))  # the edit discarded; then written on disk
    core.write_text('["google:gemini-2.0-flash"]')
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        changes=[lsp.FileEvent(uri=core.as_uri(), type=lsp.FileChangeType.Changed)]))
    shown = await _hover_until(client, uri, "google:gemini-2.0-flash")
    assert "(1 models)" in shown and "anthropic" not in shown
