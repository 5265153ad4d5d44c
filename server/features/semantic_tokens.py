"""textDocument/semanticTokens/full: engine/ide/semantic_tokens.py's tokens in LSP's relative integers
(the engine's legend; columns and lengths in the client's units), built in the worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from evalspec.ide.token_legend import TOKEN_MODIFIERS, TOKEN_TYPES

from . import answers

if TYPE_CHECKING:
    from evalspec.ide.semantic_tokens import Token

    from ..convert import LineIndex
    from ..worker import Snapshot

LEGEND = lsp.SemanticTokensLegend(token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS))
_TYPE = {name: k for k, name in enumerate(TOKEN_TYPES)}
_MODIFIER = {name: 1 << k for k, name in enumerate(TOKEN_MODIFIERS)}


def encode(tokens: list[Token], index: LineIndex) -> list[int]:
    data: list[int] = []
    last_line = last_col = 0
    for t in tokens:
        line, col = index.client_point(t.line, t.col)
        _, end = index.client_point(t.line, t.col + t.length)
        delta_line = line - last_line
        data += [delta_line, col - last_col if delta_line == 0 else col, end - col, _TYPE[t.type],
                 sum(_MODIFIER[m] for m in set(t.modifiers))]
        last_line, last_col = line, col
    return data


@answers(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, lsp.SemanticTokensRegistrationOptions(legend=LEGEND, full=True))
def semantic_tokens(snap: Snapshot, params: lsp.SemanticTokensParams) -> bytes | None:
    from evalspec.ide.semantic_tokens import semantic_tokens as engine_tokens

    from ..convert import as_json

    return as_json({"data": encode(engine_tokens(snap.analysis), snap.index)})


JOBS = {"semantic_tokens": semantic_tokens}
