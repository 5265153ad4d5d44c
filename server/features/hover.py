"""textDocument/hover: the engine's markdown, as markdown or plain text as the client prefers.

On the first line of a prompt or test that has been run, the hover also shows its latest results
(per model: score, verdict, each point or assertion, the answer); on a point's or assertion's line,
its score per model.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from evalspec.ide.hover import hover as engine_hover
from evalspec.ide.run_notes import point_markdown
from evalspec.ide.runs import item_at_line

from ..server import EvalspecServer, Snapshot


async def _run_results(server: EvalspecServer, snap: Snapshot, line: int) -> str | None:
    state = server.runs.get(snap.uri)
    if state is None or not state.board.results:
        return None
    item_id = await server.computed(snap.uri, item_at_line, snap.analysis, line)
    if item_id is not None:
        return state.board.item_markdown(item_id)
    return point_markdown(snap.analysis, state.board, line)


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_HOVER, empty=lambda: None)
    async def hover(server: EvalspecServer, params: lsp.HoverParams) -> lsp.Hover | None:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return None
        line, col = snap.index.point(params.position)
        info = await server.computed(snap.uri, engine_hover, snap.analysis, line, col)
        results = await _run_results(server, snap, line)
        parts = [p for p in (results, (info.markdown if info is not None else None)) if p]  # the fresh news first
        if not parts:
            return None
        kind = lsp.MarkupKind.Markdown if server.client.hover_markdown else lsp.MarkupKind.PlainText
        rng = snap.index.range(info.span) if info is not None and info.span is not None else None
        return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value="\n\n---\n\n".join(parts)), range=rng)
