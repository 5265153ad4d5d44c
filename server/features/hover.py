"""textDocument/hover: the engine's markdown, as markdown or plain text as the client prefers."""

from __future__ import annotations

from lsprotocol import types as lsp

from evalspec.ide.hover import hover as engine_hover

from ..server import EvalspecServer


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_HOVER, empty=lambda: None)
    async def hover(server: EvalspecServer, params: lsp.HoverParams) -> lsp.Hover | None:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return None
        line, col = snap.index.point(params.position)
        info = engine_hover(snap.analysis, line, col)
        if info is None or not info.markdown:
            return None
        kind = lsp.MarkupKind.Markdown if server.client.hover_markdown else lsp.MarkupKind.PlainText
        return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=info.markdown),
                         range=snap.index.range(info.span) if info.span is not None else None)
