"""textDocument/documentSymbol (an outline of the file) and textDocument/foldingRange, built by the
worker as JSON data once per analysis (a 4 MB blueprint has 64,000 symbols; editors ask after every
change)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from . import answers

if TYPE_CHECKING:
    from evalspec.analysis import Analysis
    from evalspec.ide.symbols import Symbol

    from ..convert import LineIndex
    from ..worker import Snapshot


_KINDS = {member.name.lower(): member for member in lsp.SymbolKind}


@functools.cache
def symbol_kind(kind: str) -> lsp.SymbolKind:
    """The engine names kinds by their LSP name in lower case ("object", "function", "enum-member")."""
    return _KINDS.get(kind.replace("-", "").replace("_", "").replace(" ", "").lower(), lsp.SymbolKind.Object)


Range = dict[str, dict[str, int]]


def _within(inner: Range, outer: Range) -> bool:
    def key(p: dict[str, int]) -> tuple[int, int]:
        return p["line"], p["character"]

    return key(outer["start"]) <= key(inner["start"]) and key(inner["end"]) <= key(outer["end"])


def document_symbol(symbol: Symbol, index: LineIndex) -> dict[str, Any]:
    """One symbol and its children as an LSP DocumentSymbol (JSON data)."""
    rng = index.range_json(symbol.span)
    selection = index.range_json(symbol.selection_span) if symbol.selection_span is not None else rng
    out: dict[str, Any] = {
        "name": symbol.name or "(unnamed)",  # VS Code rejects the whole outline if one name is empty
        "kind": int(symbol_kind(symbol.kind)),
        "range": rng,
        "selectionRange": selection if _within(selection, rng) else rng,  # the protocol requires containment
    }
    if symbol.detail:
        out["detail"] = symbol.detail
    if symbol.children:
        out["children"] = [document_symbol(c, index) for c in symbol.children]
    return out


def flatten(symbols: list[dict[str, Any]], uri: str, container: str | None = None) -> list[dict[str, Any]]:
    """SymbolInformation, for clients without hierarchical outline support."""
    out: list[dict[str, Any]] = []
    for s in symbols:
        info: dict[str, Any] = {"name": s["name"], "kind": s["kind"], "location": {"uri": uri, "range": s["range"]}}
        if container is not None:
            info["containerName"] = container
        out.append(info)
        out += flatten(s.get("children", ()), uri, s["name"])
    return out


def outline(analysis: Analysis, index: LineIndex, uri: str, hierarchical: bool) -> list[dict[str, Any]]:
    from evalspec.ide.symbols import document_symbols

    tree = [document_symbol(s, index) for s in document_symbols(analysis)]
    return tree if hierarchical else flatten(tree, uri)


def folds(analysis: Analysis, index: LineIndex) -> list[dict[str, int]]:
    from evalspec.ide.symbols import folding_ranges

    ranges = folding_ranges(analysis)
    if index.crs is not None:  # a bare CR in a line: the client's line numbers are not the engine's
        ranges = [(index.client_line(start), index.client_line(end, last=True)) for start, end in ranges]
    return [{"startLine": start, "endLine": end} for start, end in ranges if end > start]


@answers(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, empty=list)
def symbols(snap: Snapshot, params: Any) -> bytes | None:
    from evalspec import jsonio

    hierarchical = snap.client.hierarchical_symbols
    return snap.analysis.memoised(f"lsp.outline {snap.index.encoding} {hierarchical} {snap.uri}",
                                  lambda a: jsonio.dumps_bytes(outline(a, snap.index, snap.uri, hierarchical)))


@answers(lsp.TEXT_DOCUMENT_FOLDING_RANGE, empty=list)
def folding(snap: Snapshot, params: Any) -> bytes | None:
    from evalspec import jsonio

    return snap.analysis.memoised(f"lsp.folding {snap.index.encoding}",
                                  lambda a: jsonio.dumps_bytes(folds(a, snap.index)))


JOBS = {"symbols": symbols, "folding": folding}
