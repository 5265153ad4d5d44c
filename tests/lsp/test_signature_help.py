"""textDocument/signatureHelp over the protocol: typing a point function's arguments."""

from __future__ import annotations

from lsprotocol import types as lsp

from .session import RecordingClient, change, open_doc, published

BLUEPRINT = """\
title: Signatures
models: [echo]
---
- id: p
  prompt: Name 🍎 fruits
  should:
    - $contains: apple
"""


async def test_the_active_argument_follows_the_typing(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "sig.yml", BLUEPRINT)
    await published(client, uri, version=1)
    assert client.init_result.capabilities.signature_help_provider is not None
    # The author adds a point and types its arguments, a character at a time as far as the comma.
    typed = '    - $contains_at_least_n_of: [2, ["🍎", '
    change(client, uri, 2, (7, 0), (7, 0), typed)
    await published(client, uri, version=2)

    async def ask(character: int) -> lsp.SignatureHelp | None:
        return await client.text_document_signature_help_async(lsp.SignatureHelpParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(7, character),
            context=lsp.SignatureHelpContext(trigger_kind=lsp.SignatureHelpTriggerKind.TriggerCharacter,
                                             is_retrigger=False, trigger_character=",")))

    units = len(typed.encode("utf-16-le")) // 2  # the apple is two UTF-16 units
    help_ = await ask(units)
    assert help_ is not None
    [sig] = help_.signatures
    assert sig.label == "$contains_at_least_n_of: [n, [text, …]]"
    assert help_.active_parameter == 1
    start, end = sig.parameters[help_.active_parameter].label
    assert sig.label[start:end] == "[text, …]"
    first = await ask(typed.index("[2") + 2)  # just after the `2`
    assert first is not None and first.active_parameter == 0
    start, end = first.signatures[0].parameters[0].label
    assert first.signatures[0].label[start:end] == "n"
    assert await ask(3) is None  # before the dash: nothing is being written
