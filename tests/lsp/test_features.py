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



async def test_hover_on_a_point_function(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    at = position_of(BLUEPRINT, "$contains")
    hover = await client.text_document_hover_async(lsp.HoverParams(text_document=doc(uri), position=at))
    assert hover is not None
    assert hover.contents.kind == lsp.MarkupKind.Markdown  # both profiles take markdown
    assert "**$contains**" in hover.contents.value
    assert hover.range == lsp.Range(start=at, end=lsp.Position(at.line, at.character + len("$contains")))


async def test_hover_and_completion_docs_in_plain_text(plain_client: RecordingClient, tmp_path):
    uri = open_doc(plain_client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    at = position_of(BLUEPRINT, "$contains")
    hover = await plain_client.text_document_hover_async(lsp.HoverParams(text_document=doc(uri), position=at))
    assert hover.contents.kind == lsp.MarkupKind.PlainText
    assert "$contains" in hover.contents.value
    change(plain_client, uri, 2, (12, 0), (12, 0), "    - $con")
    result = await plain_client.text_document_completion_async(
        lsp.CompletionParams(text_document=doc(uri), position=lsp.Position(12, 10)))
    documented = [i for i in result.items if i.documentation]
    assert documented
    assert all(isinstance(i.documentation, str) for i in documented)


async def test_document_symbols_outline_the_prompts(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc(uri)))
    assert all(isinstance(s, lsp.DocumentSymbol) for s in symbols)  # both profiles take a hierarchy
    by_name = {s.name: s for s in symbols}
    assert {"france", "greeting"} <= set(by_name)
    greeting = by_name["greeting"]
    assert greeting.selection_range.start == position_of(BLUEPRINT, "greeting")
    assert greeting.range.start.line == 8 and greeting.range.end.line == 11
    assert any("$contains" in child.name for child in greeting.children or ())


async def test_folding_ranges(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    ranges = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc(uri)))
    spans = {(r.start_line, r.end_line) for r in ranges}
    assert (4, 7) in spans  # the first prompt
    assert (8, 11) in spans  # the second one
    assert all(r.end_line > r.start_line for r in ranges)


async def test_refactoring_adds_an_explicit_id(client: RecordingClient, tmp_path):
    text = BLUEPRINT.replace("- id: greeting\n  prompt: Say hello", "- prompt: Say hello")
    uri = open_doc(client, tmp_path / "capitals.weval.yml", text)
    at = position_of(text, "Say hello")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=lsp.Range(start=at, end=at),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.Refactor])))
    [action] = [a for a in actions if a.title == "Add an explicit id to this prompt"]
    assert action.kind == lsp.CodeActionKind.Refactor
    updated = apply_edits(text, edits_of(action, uri))
    assert "- id: hash-" in updated and "  prompt: Say hello" in updated


async def test_definition_of_a_ref_jumps_to_its_point_def(client: RecordingClient, tmp_path):
    text = BLUEPRINT.replace("models:\n", "point_defs:\n  polite: \"r.includes('please')\"\nmodels:\n") \
                    .replace("$contains: hello", "$ref: polite")
    uri = open_doc(client, tmp_path / "capitals.weval.yml", text)
    locations = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=doc(uri), position=position_of(text, "polite", occurrence=1)))
    [target] = locations
    assert target.uri == uri
    assert target.range.start == position_of(text, "polite")


AGENTV_SUITE = """\
name: suite
description: Unit conversions
input:
  - role: system
    content:
      - type: file
        value: ./system.md
tests:
  - id: inline
    input: Convert 5 miles to km
    criteria: About 8 km
  - file://cases.yaml
"""
CASES = "- id: ok\n  input: What is 15 + 27?\n  criteria: Answers 42\n\n- id: incomplete\n  input: Hello\n"


async def test_agentv_links_and_findings_in_an_external_tests_file(client: RecordingClient, tmp_path):
    (tmp_path / "cases.yaml").write_text(CASES)
    (tmp_path / "system.md").write_text("You are terse.\n")
    uri = open_doc(client, tmp_path / "suite.eval.yaml", AGENTV_SUITE)

    # The finding about cases.yaml is published to cases.yaml, which is not even open.
    cases_uri = (tmp_path / "cases.yaml").as_uri()
    report = await published(client, cases_uri)
    [incomplete] = report.diagnostics
    assert incomplete.code == "incomplete-test"
    assert incomplete.range.start.line == 4
    assert not (await published(client, uri, version=1)).diagnostics

    links = await client.text_document_document_link_async(lsp.DocumentLinkParams(text_document=doc(uri)))
    targets = {link.target: link.range.start.line for link in links}
    assert targets == {(tmp_path / "system.md").as_uri(): 6, cases_uri: 11}

    # Dropping the reference clears what was published for the other file.
    change(client, uri, 2, (11, 0), (12, 0), "")
    await published(client, cases_uri, where=lambda p: not p.diagnostics)
