"""textDocument/documentSymbol (an outline of the file) and textDocument/foldingRange."""

from __future__ import annotations

import functools
from typing import Any

from lsprotocol import types as lsp

from evalspec.ide.symbols import Symbol, document_symbols, folding_ranges

from ..convert import LineIndex
from ..server import EvalspecServer


@functools.cache  # was a walk over the enum per symbol: 40% of an outline of 12,000 prompts
def symbol_kind(kind: str) -> lsp.SymbolKind:
    """The engine names kinds by their LSP name in lower case ("object", "function", "enum-member")."""
    normalised = kind.replace("-", "").replace("_", "").replace(" ", "").lower()
    for member in lsp.SymbolKind:
        if member.name.lower() == normalised:
            return member
    return lsp.SymbolKind.Object


def _within(inner: lsp.Range, outer: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return p.line, p.character

    return key(outer.start) <= key(inner.start) and key(inner.end) <= key(outer.end)


def document_symbol(symbol: Symbol, index: LineIndex) -> lsp.DocumentSymbol:
    rng = index.range(symbol.span)
    selection = index.range(symbol.selection_span) if symbol.selection_span is not None else rng
    return lsp.DocumentSymbol(
        name=symbol.name or "(unnamed)",  # VS Code rejects the whole outline if one name is empty
        detail=symbol.detail or None,
        kind=symbol_kind(symbol.kind),
        range=rng,
        selection_range=selection if _within(selection, rng) else rng,  # the protocol requires containment
        children=[document_symbol(c, index) for c in symbol.children or ()] or None,
    )


def flatten(symbols: list[lsp.DocumentSymbol], uri: str, container: str | None = None) -> list[lsp.SymbolInformation]:
    """For clients without hierarchical outline support."""
    out: list[lsp.SymbolInformation] = []
    for s in symbols:
        out.append(lsp.SymbolInformation(name=s.name, kind=s.kind, location=lsp.Location(uri=uri, range=s.range),
                                         container_name=container))
        out += flatten(list(s.children or ()), uri, s.name)
    return out


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, empty=list)
    async def symbols(server: EvalspecServer, params: lsp.DocumentSymbolParams) -> list[Any]:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return []
        tree = [document_symbol(s, snap.index) for s in document_symbols(snap.analysis)]
        return tree if server.client.hierarchical_symbols else flatten(tree, snap.uri)

    @server.request(lsp.TEXT_DOCUMENT_FOLDING_RANGE, empty=list)
    async def folding(server: EvalspecServer, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return []
        return [lsp.FoldingRange(start_line=start, end_line=end)
                for start, end in folding_ranges(snap.analysis) if end > start]
