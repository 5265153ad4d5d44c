"""textDocument/inlayHint over the protocol: ids, shares and gates where an editor draws them."""

from __future__ import annotations

from lsprotocol import types as lsp

from evalspec.analysis import analyze

from .session import RecordingClient, change, open_doc, position_of, published

BLUEPRINT = """\
title: Hints
models: [echo]
---
- prompt: Say hello 🌍 to the world.
  should:
    - $contains: hello
    - text: is friendly
      weight: 3
"""

SUITE = """\
description: hints
tests:
  - id: greet
    input: Say hi
    criteria: Says hi
    assert:
      - type: contains
        value: hi
        weight: 3
      - type: regex
        value: "h."
        required: true
"""


def _params(uri: str, lines: int = 100) -> lsp.InlayHintParams:
    return lsp.InlayHintParams(text_document=lsp.TextDocumentIdentifier(uri=uri),
                               range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(lines, 0)))


async def test_hints_show_the_generated_id_and_the_shares_and_follow_edits(client: RecordingClient, tmp_path):
    assert client.init_result.capabilities.inlay_hint_provider is not None
    path = tmp_path / "blueprints" / "hints.yml"
    uri = open_doc(client, path, BLUEPRINT)
    await published(client, uri, version=1)
    hints = await client.text_document_inlay_hint_async(_params(uri))
    by_label = {h.label: h for h in hints}
    expected_id = analyze(BLUEPRINT, path).blueprint.prompts[0].id
    id_hint = by_label[f"id: {expected_id}"]
    # At the end of the prompt's line, in UTF-16 units (the globe is two of them).
    assert id_hint.position == position_of(BLUEPRINT, " to the world.", after=True)
    assert by_label["25 %"].position == position_of(BLUEPRINT, "$contains")
    assert by_label["75 %"].position == position_of(BLUEPRINT, "text: is friendly")
    assert by_label["25 %"].padding_right
    # The author raises the first point's weight: the shares follow, and so does the id (a hash of the content).
    change(client, uri, 2, (5, 22), (5, 22), "\n      weight: 3")
    await published(client, uri, version=2)
    text = BLUEPRINT.replace("$contains: hello\n", "$contains: hello\n      weight: 3\n")
    hints = await client.text_document_inlay_hint_async(_params(uri))
    labels = sorted(h.label for h in hints)
    assert labels.count("50 %") == 2
    assert f"id: {expected_id}" not in labels
    new_id = analyze(text, path).blueprint.prompts[0].id
    assert f"id: {new_id}" in labels


async def test_an_assertion_hint_shows_its_share_and_gate(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "evals" / "hints.eval.yaml", SUITE)
    await published(client, uri, version=1)
    hints = await client.text_document_inlay_hint_async(_params(uri))
    assert [(h.label, h.position) for h in hints] == [
        ("75 %", position_of(SUITE, "type: contains")),
        ("25 % · gate ≥ 0.8", position_of(SUITE, "type: regex")),
    ]


async def test_the_setting_turns_hints_off_and_on(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "evals" / "hints.eval.yaml", SUITE)
    await published(client, uri, version=1)
    assert len(await client.text_document_inlay_hint_async(_params(uri))) == 2
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"evalspec": {"inlayHints": False}}))
    assert not await client.text_document_inlay_hint_async(_params(uri))
    # A change of other settings leaves the choice as it was.
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"run": {"cache": False}}))
    assert not await client.text_document_inlay_hint_async(_params(uri))
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"inlayHints": True}))
    assert len(await client.text_document_inlay_hint_async(_params(uri))) == 2
    # Only the lines asked for.
    only_first = await client.text_document_inlay_hint_async(_params(uri, lines=7))
    assert [h.label for h in only_first] == ["75 %"]
