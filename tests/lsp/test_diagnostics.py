"""Diagnostics pushed as the user opens and edits a blueprint."""

from __future__ import annotations

from lsprotocol import types as lsp

from .session import RecordingClient, change, codes_by_line, open_doc, position_of, published

BLUEPRINT = """\
title: Capitals
models:
  - openai:gpt-4o-mini
---
- id: france
  prompt: What is the capital of France?
  shuld:
    - Mentions Paris
- id: france
  prompt: Say hello
  should:
    - $contian: hello
"""


async def test_diagnostics_on_open(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    report = await published(client, uri, version=1)

    assert codes_by_line(report.diagnostics) == {
        6: {"unknown-key"}, 8: {"duplicate-prompt-id"}, 11: {"unknown-function"}}
    by_code = {d.code: d for d in report.diagnostics}
    assert all(d.source == "evalspec" for d in report.diagnostics)

    typo = by_code["unknown-key"]
    assert typo.range == lsp.Range(start=lsp.Position(6, 2), end=lsp.Position(6, 7))  # exactly `shuld`
    assert typo.severity == lsp.DiagnosticSeverity.Warning
    assert "should" in typo.message

    duplicate = by_code["duplicate-prompt-id"]
    assert duplicate.severity == lsp.DiagnosticSeverity.Error
    assert duplicate.range.start == position_of(BLUEPRINT, "france", occurrence=1)
    [first] = duplicate.related_information
    assert first.location.uri == uri
    assert first.location.range.start == position_of(BLUEPRINT, "france")  # points at the first use

    assert "$contains" in by_code["unknown-function"].message


async def test_diagnostics_follow_an_incremental_edit(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    await published(client, uri, version=1)

    # Fix the function name in place: replace `$contian` with `$contains`.
    start = position_of(BLUEPRINT, "$contian")
    change(client, uri, 2, (start.line, start.character), (start.line, start.character + 8), "$contains")
    report = await published(client, uri, version=2)
    assert codes_by_line(report.diagnostics) == {6: {"unknown-key"}, 8: {"duplicate-prompt-id"}}

    # Insert a line above the typo: its diagnostic moves down with it.
    change(client, uri, 3, (5, 0), (5, 0), "  ideal: Paris.\n")
    report = await published(client, uri, version=3)
    assert codes_by_line(report.diagnostics) == {7: {"unknown-key"}, 9: {"duplicate-prompt-id"}}


async def test_utf16_columns_after_an_emoji(client: RecordingClient, tmp_path):
    text = 'title: T\nmodels: [openai:gpt-4o-mini]\n---\n- {id: a, prompt: "😀 hi", shuld: [x]}\n'
    uri = open_doc(client, tmp_path / "emoji.weval.yml", text)
    [typo] = (await published(client, uri, version=1)).diagnostics
    # The emoji is one code point but two UTF-16 units: the range must count it as two.
    assert typo.range.start == position_of(text, "shuld")
    assert typo.range.start.character == 27


async def test_a_burst_of_changes_ends_on_the_last_version(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    await published(client, uri, version=1)
    # Delete the typo key, then type `should` one character at a time, as fast as the client can send.
    change(client, uri, 2, (6, 2), (6, 7), "")
    for i, char in enumerate("should"):
        change(client, uri, 3 + i, (6, 2 + i), (6, 2 + i), char)
    report = await published(client, uri, version=8)
    assert codes_by_line(report.diagnostics) == {8: {"duplicate-prompt-id"}, 11: {"unknown-function"}}
    versions = [p.version for p in client.published if p.uri == uri]
    assert versions == sorted(versions), "diagnostics for an older version arrived after a newer one"


async def test_closing_a_document_clears_its_diagnostics(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    assert (await published(client, uri, version=1)).diagnostics
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    await published(client, uri, where=lambda p: not p.diagnostics)


async def test_incremental_edit_below_a_line_separator_lands_on_its_line(client: RecordingClient, tmp_path):
    """LSP counts lines at \\n, \\r\\n and \\r only; a \\u2028 inside a line (which libyaml and Python's
    splitlines would count as a break) must not shift diagnostics or where an edit below it applies."""
    text = 'description: "one line \u2028 with a separator"\n' + BLUEPRINT
    uri = open_doc(client, tmp_path / "sep.weval.yml", text)
    first = await published(client, uri, version=1)
    assert codes_by_line(first.diagnostics) == {7: {"unknown-key"}, 9: {"duplicate-prompt-id"}, 12: {"unknown-function"}}
    change(client, uri, 2, (7, 2), (7, 7), "should")  # rename `shuld`, now on line 7
    report = await published(client, uri, version=2)
    assert codes_by_line(report.diagnostics) == {9: {"duplicate-prompt-id"}, 12: {"unknown-function"}}


async def test_a_jsonl_dataset_opened_alone_is_checked_line_by_line(client: RecordingClient, tmp_path):
    text = ('{"id": "t1", "input": "Hello", "criteria": "says hello"}\n'
            '{"id": "t2", "input": "Bye", "assert": [{"type": "contians", "value": "bye"}]}\n'
            'not json\n')
    uri = open_doc(client, tmp_path / "cases.jsonl", text, language="jsonl")
    report = await published(client, uri, version=1)
    assert codes_by_line(report.diagnostics) == {1: {"unknown-assertion-type"}, 2: {"invalid-jsonl"}}


SUITE_WITH_REGEXES = """\
description: Regexes as bun reads them.
tests:
  - id: t1
    input: Q
    criteria: c
    assert:
      - type: regex
        value: "(?i:abc)"
      - type: regex
        value: "\\\\p{Script=Klingon}"
        flags: u
"""


async def test_regex_diagnostics_come_from_javascripts_engine(client: RecordingClient, tmp_path):
    # The server's analysis thread compiles the patterns in QuickJS: `(?i:abc)` is valid for AgentV's bun
    # (no diagnostic); an unknown script name only QuickJS knows is an error, on its value.
    uri = open_doc(client, tmp_path / "evals" / "dataset.eval.yaml", SUITE_WITH_REGEXES)
    report = await published(client, uri, version=1)
    assert codes_by_line(report.diagnostics) == {9: {"invalid-regex"}}
    [d] = report.diagnostics
    assert d.message == "Invalid regex pattern '\\p{Script=Klingon}': invalid property expression"


async def test_each_diagnostic_links_to_its_codes_page(client: RecordingClient, tmp_path):
    """codeDescription.href: by default a local page (Markdown, written once), the same text as the docs site's."""
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    from evalspec.finding_docs import page
    from evalspec.registry.finding_codes import CODES

    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    report = await published(client, uri, version=1)
    for d in report.diagnostics:
        href = d.code_description.href
        assert href.startswith("file://") and href.endswith(f"/codes/{d.code}.md")
        assert Path(unquote(urlparse(href).path)).read_text(encoding="utf-8") == page(CODES[str(d.code)], check=False)


async def test_the_docs_url_setting_points_the_links_at_a_docs_site(client: RecordingClient, tmp_path):
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"evalspec": {"debounceMs": 20, "docsUrl": "https://docs.example.org/evalspec/"}}))
    uri = open_doc(client, tmp_path / "capitals.weval.yml", BLUEPRINT)
    report = await published(client, uri, version=1)
    assert {d.code_description.href for d in report.diagnostics if d.code == "unknown-key"} == {
        "https://docs.example.org/evalspec/codes/unknown-key/"}
