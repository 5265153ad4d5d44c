"""textDocument/inlayHint: the engine's hints (engine/ide/inlay_hints.py: generated prompt ids, each
point's share of the score, required gates, collection sizes) as LSP inlay hints, built in the worker.
Off with the setting `inlayHints: false`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from . import on_snapshot

if TYPE_CHECKING:
    from ..server import EvalspecServer
    from ..worker import Snapshot


@on_snapshot
def inlay_hints(snap: Snapshot, params: lsp.InlayHintParams) -> bytes | None:
    from evalspec.ide.inlay_hints import ID, SIZE
    from evalspec.ide.inlay_hints import inlay_hints as engine_inlay_hints

    from ..convert import as_json

    first, _ = snap.index.point(params.range.start)
    last, _ = snap.index.point(params.range.end)
    kinds = {ID: lsp.InlayHintKind.Type, SIZE: lsp.InlayHintKind.Type}  # shares and gates: Parameter
    return as_json([lsp.InlayHint(position=snap.index.position(h.line, h.col), label=h.label,
                                  kind=kinds.get(h.kind, lsp.InlayHintKind.Parameter),
                                  tooltip=h.tooltip or None, padding_left=h.pad_left or None,
                                  padding_right=h.pad_right or None)
                    for h in engine_inlay_hints(snap.analysis, first, last + 1)])


JOBS = {"inlay_hints": inlay_hints}


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False), empty=list)
    async def inlay_hint(server: EvalspecServer, params: lsp.InlayHintParams) -> Any:
        if not server.settings.inlay_hints:
            return []
        return await server.ask("inlay_hints", params.text_document.uri, params, what=lsp.TEXT_DOCUMENT_INLAY_HINT)
