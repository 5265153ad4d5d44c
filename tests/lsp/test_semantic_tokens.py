"""textDocument/semanticTokens/full over the protocol: the legend, and tokens decoded back to text."""

from __future__ import annotations

from lsprotocol import types as lsp

from .session import RecordingClient, open_doc, published

BLUEPRINT = """\
title: Tokens
models: [echo]
---
- id: p
  prompt: hi
  should:
    - 🌍 Mentions the globe
    - $contains: globe
  should_not:
    - is rude
"""


async def test_tokens_decode_to_the_points_they_mark(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "tokens.yml", BLUEPRINT)
    await published(client, uri, version=1)
    provider = client.init_result.capabilities.semantic_tokens_provider
    legend = provider.legend
    result = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    lines = BLUEPRINT.split("\n")
    decoded = []
    line = col = 0
    data = result.data
    for k in range(0, len(data), 5):
        dl, dc, length, kind, mods = data[k:k + 5]
        line += dl
        col = col + dc if dl == 0 else dc
        units = lines[line].encode("utf-16-le")
        text = units[col * 2:(col + length) * 2].decode("utf-16-le")
        names = tuple(m for bit, m in enumerate(legend.token_modifiers) if mods & (1 << bit))
        decoded.append((text, legend.token_types[kind], names))
    assert decoded == [
        ("🌍 Mentions the globe", "string", ("judged",)),
        ("$contains", "function", ("deterministic",)),
        ("should_not", "keyword", ("negated",)),
        ("is rude", "string", ("judged", "negated")),
    ]
