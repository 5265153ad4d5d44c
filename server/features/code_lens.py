"""textDocument/codeLens: run the suite or one prompt / test, and the results of earlier runs in place.

On the suite's first line: `▶ Run all` and `Plan` (or `■ Cancel` with the progress while it runs),
then the last run's outcome. On each prompt / test: `▶ Run`, then its latest result per model. A file
with errors gets one lens that says so instead of run lenses. Titles come from the engine's RunBoard.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from evalspec.analysis import Analysis
from evalspec.ide.runs import RunBoard, RunItem, run_items

from ..convert import LineIndex
from ..protocol import JsonReady
from ..server import EvalspecServer
from .run import CANCEL, PLAN, RUN, SHOW

Range = dict[str, dict[str, int]]


def _lens(rng: Range, title: str, command: str, uri: str, item: str | None = None) -> dict[str, Any]:
    args: dict[str, str] = {"uri": uri}
    if item is not None:
        args["item"] = item
    return {"range": rng, "command": {"title": title, "command": command, "arguments": [args]}}


def placed_items(analysis: Analysis, index: LineIndex) -> list[tuple[RunItem, Range]]:
    """The run items of an analysis with their lens ranges."""
    return [(item, index.range_json(item.span)) for item in run_items(analysis)]


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False), empty=list)
    async def code_lens(server: EvalspecServer, params: lsp.CodeLensParams) -> Any:
        uri = params.text_document.uri
        snap = await server.snapshot(uri)
        if snap is None:
            return []
        # The items and their ranges (fingerprints of every prompt's text: 0.1 s on a 4 MB file) once per
        # analysis on a worker thread; the titles, which follow the run, here. Lenses of 16,000 tests
        # as lsprotocol objects cost seconds on the event loop: they are sent as JSON data.
        items = await server.memoised_in_thread(uri, snap.analysis, f"lsp.lens-items {snap.index.encoding}",
                                                placed_items, snap.analysis, snap.index)
        if not items:
            return []
        state = server.runs.get(uri)
        board = state.board if state is not None else RunBoard()
        running = state is not None and state.running
        errors = len(snap.analysis.errors)
        noun = "test" if snap.analysis.suite is not None else "prompt"
        out: list[dict[str, Any]] = []
        for item, rng in items:
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
        return JsonReady.of(out)
