"""Completion, hover, quick fixes, symbols, folding and links over the protocol."""

from __future__ import annotations

from lsprotocol import types as lsp

from .session import (
    RecordingClient,
    apply_edits,
    change,
    edits_of,
    open_doc,
    position_of,
    published,
)

BLUEPRINT = """\
title: Capitals
models:
  - openai:gpt-4o-mini
---
- id: france
  prompt: What is the capital of France?
  shuld:
    - Mentions Paris
- id: greeting
  prompt: Say hello
  should:
    - $contains: hello
"""


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def test_completion_while_typing_a_point_function(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    await published(client, uri, version=1)
    # The user opens a new list item under `should:` and has typed `$con` so far.
    change(client, uri, 2, (12, 0), (12, 0), "    - $con")
    result = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=doc(uri), position=lsp.Position(12, 10)))
    assert isinstance(result, lsp.CompletionList)
    by_label = {item.label: item for item in result.items}
    assert "$contains" in by_label
    item = by_label["$contains"]
    assert item.kind == lsp.CompletionItemKind.Function
    # The item replaces what was typed, `$con`, on that line.
    assert item.text_edit.range == lsp.Range(start=lsp.Position(12, 6), end=lsp.Position(12, 10))
    snippets = client.capabilities.text_document.completion.completion_item.snippet_support
    if snippets:  # VS Code: a snippet with a placeholder for the text
        assert item.insert_text_format == lsp.InsertTextFormat.Snippet
        assert "${1" in item.text_edit.new_text
    else:  # Neovim 0.7 declares no snippet support: plain text only
        assert item.insert_text_format in (None, lsp.InsertTextFormat.PlainText)
        assert item.text_edit.new_text.startswith("$contains:")
        assert "${" not in item.text_edit.new_text


async def test_completion_of_a_half_typed_key(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    await published(client, uri, version=1)
    change(client, uri, 2, (10, 0), (10, 0), "  ide\n")  # above `should:` of the second prompt
    result = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=doc(uri), position=lsp.Position(10, 5)))
    labels = {item.label for item in result.items}
    assert {"ideal", "should_not"} <= labels
    assert "prompt" not in labels  # already there


async def test_quick_fix_renames_the_typo_key(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    report = await published(client, uri, version=1)
    [typo] = [d for d in report.diagnostics if d.code == "unknown-key"]

    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=typo.range,
        context=lsp.CodeActionContext(diagnostics=[typo], only=[lsp.CodeActionKind.QuickFix])))
    [fix] = [a for a in actions if a.kind == lsp.CodeActionKind.QuickFix]
    assert fix.title == "Rename 'shuld' to 'should'"
    assert list(fix.diagnostics) == [typo]
    if client.capabilities.text_document.code_action.is_preferred_support:
        assert fix.is_preferred is True

    # Apply it as the editor would, and send the result back as an incremental change.
    [edit] = edits_of(fix, uri)
    fixed = apply_edits(BLUEPRINT, [edit])
    assert "  should:\n    - Mentions Paris" in fixed
    change(client, uri, 2, (edit.range.start.line, edit.range.start.character),
           (edit.range.end.line, edit.range.end.character), edit.new_text)
    report = await published(client, uri, version=2)
    assert "unknown-key" not in {d.code for d in report.diagnostics}


async def test_quick_fix_for_an_unknown_point_function(client: RecordingClient, tmp_path):
    text = BLUEPRINT.replace("$contains: hello", "$contian: hello")
    uri = open_doc(client, tmp_path / "capitals.weval.yml", text)
    report = await published(client, uri, version=1)
    [unknown] = [d for d in report.diagnostics if d.code == "unknown-function"]
    assert unknown.range.start == position_of(text, "$contian")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=unknown.range, context=lsp.CodeActionContext(diagnostics=[unknown])))
    fixes = [a for a in actions if a.kind == lsp.CodeActionKind.QuickFix]
    assert fixes
    assert all(list(a.diagnostics) == [unknown] for a in fixes)
    results = {apply_edits(text, edits_of(a, uri)).split("\n")[11].strip() for a in fixes}
    assert any(r.startswith(("- $contains:", "- $contain:")) for r in results)


async def test_no_quick_fix_without_a_matching_diagnostic(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    await published(client, uri, version=1)
    foreign = lsp.Diagnostic(range=lsp.Range(start=lsp.Position(6, 2), end=lsp.Position(6, 7)),
                             message="from another linter", code="unknown-key", source="yamllint")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=foreign.range,
        context=lsp.CodeActionContext(diagnostics=[foreign], only=[lsp.CodeActionKind.QuickFix])))
    assert not actions

