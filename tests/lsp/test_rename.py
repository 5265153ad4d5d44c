"""Rename (with prepareRename), references and document highlight over the protocol."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from evalspec.analysis import analyze

from .session import RecordingClient, apply_edits, open_doc, position_of, published

BLUEPRINT = """\
title: Rename 🌍
models: [echo]
point_defs:
  greets: "return 1"
---
- id: a
  prompt: hi
  should:
    - $ref: greets
- id: b
  prompt: 🌍 hi
  should: [{$ref: greets, weight: 2}]
"""


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


def _edits(edit: lsp.WorkspaceEdit, uri: str) -> list[lsp.TextEdit]:
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return list(edit.changes[uri])


async def test_renaming_a_point_definition_edits_every_ref(client: RecordingClient, tmp_path):
    path = tmp_path / "blueprints" / "rename.yml"
    uri = open_doc(client, path, BLUEPRINT)
    await published(client, uri, version=1)
    at = position_of(BLUEPRINT, "greets", occurrence=2, after=True)  # the end of the last $ref's name
    prepared = await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(text_document=doc(uri), position=at))
    assert prepared == lsp.Range(start=position_of(BLUEPRINT, "greets", occurrence=2), end=at)
    edit = await client.text_document_rename_async(lsp.RenameParams(text_document=doc(uri), position=at,
                                                                    new_name="welcomes"))
    out = apply_edits(BLUEPRINT, _edits(edit, uri))
    assert out == BLUEPRINT.replace("greets", "welcomes")
    after = analyze(out, path)
    assert not after.errors
    before = analyze(BLUEPRINT, path)
    assert [[p.reference_form() for p in q.points] for q in after.blueprint.prompts] == \
        [[p.reference_form() for p in q.points] for q in before.blueprint.prompts]


async def test_a_clash_is_refused_with_the_reason(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "rename.yml", BLUEPRINT)
    await published(client, uri, version=1)
    at = position_of(BLUEPRINT, "id: a", after=True)
    with pytest.raises(JsonRpcException, match="another prompt has the id 'b'"):
        await client.text_document_rename_async(lsp.RenameParams(text_document=doc(uri), position=at, new_name="b"))
    edit = await client.text_document_rename_async(lsp.RenameParams(text_document=doc(uri), position=at,
                                                                    new_name="first"))
    assert "- id: first\n" in apply_edits(BLUEPRINT, _edits(edit, uri))


async def test_references_and_highlights(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "rename.yml", BLUEPRINT)
    await published(client, uri, version=1)
    at = position_of(BLUEPRINT, "greets:")
    refs = await client.text_document_references_async(lsp.ReferenceParams(
        text_document=doc(uri), position=at, context=lsp.ReferenceContext(include_declaration=True)))
    assert [r.range.start for r in refs] == [position_of(BLUEPRINT, "greets", occurrence=k) for k in range(3)]
    assert all(r.uri == uri for r in refs)
    assert refs[2].range.end == position_of(BLUEPRINT, "greets", occurrence=2, after=True)
    marks = await client.text_document_document_highlight_async(lsp.DocumentHighlightParams(
        text_document=doc(uri), position=position_of(BLUEPRINT, "greets", occurrence=1)))
    assert [(m.range.start, m.kind) for m in marks] == [
        (position_of(BLUEPRINT, "greets", occurrence=0), lsp.DocumentHighlightKind.Write),
        (position_of(BLUEPRINT, "greets", occurrence=1), lsp.DocumentHighlightKind.Read),
        (position_of(BLUEPRINT, "greets", occurrence=2), lsp.DocumentHighlightKind.Read)]


async def test_the_references_of_a_tests_file_are_the_suites_that_include_it(client: RecordingClient, tmp_path):
    (tmp_path / ".git").mkdir()
    cases = tmp_path / "evals" / "cases.yaml"
    cases.parent.mkdir()
    cases.write_text("- id: one\n  input: hi\n  criteria: says hi\n")
    suite = tmp_path / "evals" / "suite.eval.yaml"
    suite.write_text("description: s\ntests: ./cases.yaml\n")
    uri = open_doc(client, cases, cases.read_text())
    refs = await client.text_document_references_async(lsp.ReferenceParams(
        text_document=doc(uri), position=lsp.Position(0, 3), context=lsp.ReferenceContext(include_declaration=True)))
    assert [(r.uri, r.range.start.line, r.range.start.character) for r in refs] == [(suite.as_uri(), 1, 9)]


async def test_a_test_id_renamed_in_its_tests_file_is_checked_against_the_whole_suite(client: RecordingClient,
                                                                                     tmp_path):
    (tmp_path / ".git").mkdir()
    cases = tmp_path / "evals" / "cases.yaml"
    cases.parent.mkdir()
    text = "- id: one\n  input: hi\n  criteria: says hi\n- id: 'two'\n  input: bye\n  criteria: says bye\n"
    cases.write_text(text)
    suite = tmp_path / "evals" / "suite.eval.yaml"
    suite.write_text("description: s\ntests: ./cases.yaml\n")
    inline = tmp_path / "evals" / "other.eval.yaml"  # a suite of its own: its ids are no clash
    inline.write_text("description: o\ntests:\n  - id: three\n    input: x\n    criteria: y\n")
    uri = open_doc(client, cases, text)
    at = position_of(text, "two")
    prepared = await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(text_document=doc(uri), position=at))
    assert prepared == lsp.Range(start=at, end=position_of(text, "two", after=True))
    with pytest.raises(JsonRpcException, match="another test has the id 'one'"):
        await client.text_document_rename_async(lsp.RenameParams(text_document=doc(uri), position=at, new_name="one"))
    edit = await client.text_document_rename_async(lsp.RenameParams(text_document=doc(uri), position=at,
                                                                    new_name="three"))
    out = apply_edits(text, _edits(edit, uri))
    assert out == text.replace("'two'", "'three'")  # its quoting kept
    if edit.document_changes:
        assert [c.text_document.uri for c in edit.document_changes] == [uri]
    cases.write_text(out)
    after = analyze(suite.read_text(), suite)
    assert not after.errors and [t.id for t in after.suite.tests] == ["one", "three"]
    # Not a tests file of any suite: nothing to rename.
    stray = tmp_path / "notes.yaml"
    stray.write_text("- id: four\n")
    stray_uri = open_doc(client, stray, stray.read_text())
    assert await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(
        text_document=doc(stray_uri), position=lsp.Position(0, 7))) is None
