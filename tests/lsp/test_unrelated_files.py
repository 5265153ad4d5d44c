"""The server can be attached to every YAML file: anything but an eval file gets nothing."""

from __future__ import annotations

from lsprotocol import types as lsp

from .session import RecordingClient, change, open_doc, published

WORKFLOW = """\
name: CI
on:
  push:
    branches: [main]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pytest
        env:
          prompt: "not an eval file"
          should: [anything]
"""

COMPOSE = """\
services:
  web:
    image: nginx:1.27
    ports: ["8080:80"
  db:
    image: postgres:16
"""  # an unclosed flow sequence: a syntax error that must not be reported either

BLUEPRINT = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  shuld: [x]\n"


async def ask_everything(client: RecordingClient, uri: str) -> None:
    """Every feature answers with nothing for `uri`; each answer also proves its analysis is done."""
    doc = lsp.TextDocumentIdentifier(uri=uri)
    at = lsp.Position(line=11, character=10)
    completion = await client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=at))
    assert completion is None or not (completion.items if isinstance(completion, lsp.CompletionList) else completion)
    assert await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=at)) is None
    assert not await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
    assert not await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc))
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc, range=lsp.Range(start=at, end=at), context=lsp.CodeActionContext(diagnostics=[])))
    assert not actions


async def test_workflow_and_compose_files_get_no_diagnostics_and_no_features(client: RecordingClient, tmp_path):
    workflow = open_doc(client, tmp_path / ".github" / "workflows" / "ci.yml", WORKFLOW)
    compose = open_doc(client, tmp_path / "docker-compose.yml", COMPOSE)
    await ask_everything(client, workflow)
    await ask_everything(client, compose)
    change(client, workflow, 2, (12, 18), (12, 18), "more ")
    await ask_everything(client, workflow)  # waits for the analysis of version 2
    # An eval file opened afterwards does get its diagnostics: the silence above is not a dead server.
    blueprint = open_doc(client, tmp_path / "t.weval.yml", BLUEPRINT)
    assert (await published(client, blueprint, version=1)).diagnostics
    assert {p.uri for p in client.published} == {blueprint}


async def test_a_file_that_stops_being_an_eval_file_is_cleared_once(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "maybe.yml", "# evalspec: weval\n" + BLUEPRINT)
    assert (await published(client, uri, version=1)).diagnostics
    change(client, uri, 2, (0, 12), (0, 17), "none")  # "# evalspec: none": not an eval file any more
    assert not (await published(client, uri, version=2)).diagnostics
    change(client, uri, 3, (7, 0), (7, 0), "# still not one\n")
    await ask_everything(client, uri)  # version 3 is analysed…
    assert [p.version for p in client.published if p.uri == uri] == [1, 2]  # …and nothing more was sent


async def test_an_alias_bomb_in_a_file_that_is_no_eval_file_gets_its_one_diagnostic(client: RecordingClient,
                                                                                   tmp_path):
    """The parse stops at the bomb before the format can be told; the limit is still one warning."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    text = "".join(f"key{i}: value {i}\n" for i in range(60_000)) + "\n".join(lines) + "\n"  # ~1 MB
    uri = open_doc(client, tmp_path / "w.yml", text)
    diagnostics = (await published(client, uri, version=1)).diagnostics
    assert [(d.code, d.severity) for d in diagnostics] == [("yaml-alias-bomb", lsp.DiagnosticSeverity.Warning)]
    assert "alias bomb" in diagnostics[0].message
    await ask_everything(client, uri)  # no other feature treats it as an eval file
