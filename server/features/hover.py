"""textDocument/hover: the engine's markdown, as markdown or plain text as the client prefers (built in
the worker); on a prompt or test that has been run, or a point's line, also its latest results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from . import answers

if TYPE_CHECKING:
    from ..worker import Snapshot


def _run_results(snap: Snapshot, line: int) -> str | None:
    from evalspec.ide.run_notes import point_markdown
    from evalspec.ide.runs import item_at_line

    board = snap.runs.board
    if board is None or not board.results:
        return None
    item_id = item_at_line(snap.analysis, line)
    if item_id is not None:
        return board.item_markdown(item_id)
    return point_markdown(snap.analysis, board, line)


@answers(lsp.TEXT_DOCUMENT_HOVER)
def hover(snap: Snapshot, params: lsp.HoverParams) -> bytes | None:
    from evalspec.ide.hover import hover as engine_hover

    from ..convert import as_json

    line, col = snap.index.point(params.position)
    info = engine_hover(snap.analysis, line, col)
    results = _run_results(snap, line)
    parts = [p for p in (results, (info.markdown if info is not None else None)) if p]  # the fresh news first
    if not parts:
        return None
    kind = lsp.MarkupKind.Markdown if snap.client.hover_markdown else lsp.MarkupKind.PlainText
    rng = snap.index.range(info.span) if info is not None and info.span is not None else None
    return as_json(lsp.Hover(contents=lsp.MarkupContent(kind=kind, value="\n\n---\n\n".join(parts)), range=rng))


JOBS = {"hover": hover}
