"""textDocument/codeLens: run the suite or one prompt / test, and the results of earlier runs in place.

On the suite's first line: `▶ Run all` and `Plan` (or `■ Cancel` with the progress while it runs),
then the last run's outcome. On each prompt / test: `▶ Run`, then its latest result per model. A file
with errors gets one lens that says so instead of run lenses. Titles come from the engine's RunBoard.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from evalspec.ide.runs import RunBoard, run_items

from ..server import EvalspecServer
from .run import CANCEL, PLAN, RUN, SHOW


def _lens(rng: lsp.Range, title: str, command: str, uri: str, item: str | None = None) -> lsp.CodeLens:
    args: dict[str, str] = {"uri": uri}
    if item is not None:
        args["item"] = item
    return lsp.CodeLens(range=rng, command=lsp.Command(title=title, command=command, arguments=[args]))


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False), empty=list)
    async def code_lens(server: EvalspecServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        uri = params.text_document.uri
        snap = await server.snapshot(uri)
        if snap is None:
            return []
        items = run_items(snap.analysis)
        if not items:
            return []
        state = server.runs.get(uri)
        board = state.board if state is not None else RunBoard()
        running = state is not None and state.running
        errors = len(snap.analysis.errors)
        noun = "test" if snap.analysis.suite is not None else "prompt"
        out: list[lsp.CodeLens] = []
        for item in items:
            rng = snap.index.range(item.span)
            if item.kind == "suite":
                if running:
                    out.append(_lens(rng, f"■ Cancel run ({board.progress_text()})", CANCEL, uri))
                elif errors:
                    out.append(_lens(rng, f"✗ {errors} error(s): fix them to run", RUN, uri))
                else:
                    count = len(items) - 1
                    out.append(_lens(rng, f"▶ Run all ({count} {noun}{'s' if count != 1 else ''})", RUN, uri))
                    out.append(_lens(rng, "Plan", PLAN, uri))
                title = None if running else board.suite_title()
                if title:
                    out.append(_lens(rng, title, SHOW, uri))
                continue
            if not running and not errors:
                out.append(_lens(rng, "▶ Run", RUN, uri, item.item_id))
            title = board.item_title(item)
            if title:
                out.append(_lens(rng, title, SHOW, uri, item.item_id))
        return out
