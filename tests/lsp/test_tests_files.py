"""AgentV tests files (JSON lines, CSV) in an editor (issue 29): completion offers no YAML keys there
(accepting one wrote YAML into a JSON-lines file), and a fresh editor opening a `.jsonl` tests file whose
only line is broken shows `invalid-jsonl`, as `check` and an editor that saw the file valid do."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from .session import RecordingClient, open_doc, published

VALID = '{"id": "t1", "input": "Hello", "criteria": "says hello"}\n'


@pytest.mark.parametrize(("name", "text"), [
    ("cases.jsonl", VALID + "\n"),
    ("cases.jsonl", VALID + '{"id": "t2", '),
    ("rows.csv", "id,input,criteria\na,hello,says hi\n\n"),
])
async def test_no_yaml_completion_in_a_tests_file(client: RecordingClient, tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    uri = open_doc(client, path, text, language="json" if name.endswith("jsonl") else "plaintext")
    await published(client, uri)  # analysed: the server knows it as an AgentV tests file
    lines = text.split("\n")
    for line in range(len(lines)):
        for character in {0, len(lines[line])}:
            result = await client.text_document_completion_async(lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=character)))
            items = result.items if isinstance(result, lsp.CompletionList) else (result or [])
            assert [i.label for i in items] == [], (line, character)


async def test_a_fresh_editor_sees_a_tests_file_whose_only_line_is_broken(client: RecordingClient, tmp_path: Path):
    text = VALID.rstrip("\n").rstrip("}") + "\n"
    path = tmp_path / "cases.jsonl"
    path.write_text(text)
    uri = open_doc(client, path, text, language="json")
    params = await published(client, uri)
    assert [(d.range.start.line, d.code) for d in params.diagnostics] == [(0, "invalid-jsonl")]
