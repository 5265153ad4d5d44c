"""textDocument/codeLens: run the suite or one prompt / test, and the results of earlier runs in place.

On the suite's first line: `▶ Run all` and `Plan` (or `■ Cancel` with the progress while it runs),
then the last run's outcome. On each prompt / test: `▶ Run`, then its latest result per model. A file
with errors gets one lens that says so instead of run lenses. Titles come from the engine's RunBoard.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from lsprotocol import types as lsp

from evalspec.analysis import Analysis
from evalspec.ide.runs import RunBoard, RunItem, run_items

from ..convert import LineIndex
from ..protocol import JsonReady
from ..run_state import DocumentRuns
from ..server import EvalspecServer, Snapshot
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


def lenses(items: list[tuple[RunItem, Range]], board: RunBoard, running: bool, errors: int, noun: str,
           uri: str, planning: bool = False) -> Iterator[dict[str, Any]]:
    """The lenses of `items` as JSON data, given the document's runs."""
    for item, rng in items:
        if item.kind == "suite":
            if planning:
                yield _lens(rng, "■ Cancel: planning the run", CANCEL, uri)
            elif running:
                yield _lens(rng, f"■ Cancel run ({board.progress_text()})", CANCEL, uri)
            elif errors:
                yield _lens(rng, f"✗ {errors} error(s): fix them to run", RUN, uri)
            else:
                count = len(items) - 1
                yield _lens(rng, f"▶ Run all ({count} {noun}{'s' if count != 1 else ''})", RUN, uri)
                yield _lens(rng, "Plan", PLAN, uri)
            title = None if running else board.suite_title()
            if title:
                yield _lens(rng, title, SHOW, uri)
            continue
        if not running and not errors:
            yield _lens(rng, "▶ Run", RUN, uri, item.item_id)
        title = board.item_title(item)
        if title:
            yield _lens(rng, title, SHOW, uri, item.item_id)


def idle_lenses(items: list[tuple[RunItem, Range]], errors: int, noun: str, uri: str) -> list[dict[str, Any]]:
    """The lenses of a document that has no run results (yet): the same for the whole analysis."""
    return list(lenses(items, RunBoard(), False, errors, noun, uri))


def _idle(state: DocumentRuns | None) -> bool:
    return state is None or (not state.running and not state.board.results and state.board.summary is None)


def answers(snap: Snapshot, state: DocumentRuns | None) -> list[tuple[str, Any, tuple[Any, ...]]]:
    """The lens items (memo key, builder, arguments) and, while the document has no run results, its
    lenses as JSON (see EvalspecServer.prepare_answers)."""
    items_key = f"lsp.lens-items {snap.index.encoding}"
    out: list[tuple[str, Any, tuple[Any, ...]]] = [(items_key, placed_items, (snap.analysis, snap.index))]
    if _idle(state):
        errors = snap.analysis.error_count
        noun = "test" if snap.analysis.suite is not None else "prompt"

        def build() -> JsonReady:
            items = snap.analysis.memo.get(items_key)
            placed = items.result() if isinstance(items, asyncio.Future) and items.done() else \
                placed_items(snap.analysis, snap.index)
            return JsonReady.of(idle_lenses(placed, errors, noun, snap.uri))

        out.append((f"lsp.idle-lenses {snap.index.encoding}", build, ()))
    return out


SLICE = 1000  # lenses built between two turns of the event loop while a document has run results


def register(server: EvalspecServer) -> None:
    server.answers[lsp.TEXT_DOCUMENT_CODE_LENS] = lambda snap: answers(snap, server.runs.get(snap.uri))

    @server.request(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False), empty=list)
    async def code_lens(server: EvalspecServer, params: lsp.CodeLensParams) -> Any:
        uri = params.text_document.uri
        snap = await server.snapshot(uri)
        if snap is None:
            return []
        state = server.runs.get(uri)
        wanted = answers(snap, state)
        if len(wanted) > 1:  # no run results: the lenses are the same for the whole analysis
            key, build, args = wanted[1]
            return await server.memoised_in_thread(uri, snap.analysis, key, build, *args)
        # The items and their ranges (fingerprints of every prompt's text: 0.1 s on a 4 MB file) once per
        # analysis on a worker thread; the titles, which follow the run, here, a slice at a time so that
        # other requests are answered in between. Lenses of 16,000 tests as lsprotocol objects cost
        # seconds on the event loop: they are sent as JSON data, encoded on a worker thread.
        key, build, args = wanted[0]
        items = await server.memoised_in_thread(uri, snap.analysis, key, build, *args)
        if not items:
            return []
        board = state.board if state is not None else RunBoard()
        running = state is not None and state.running
        noun = "test" if snap.analysis.suite is not None else "prompt"
        out: list[dict[str, Any]] = []
        planning = state is not None and state.planning
        for lens in lenses(items, board, running, snap.analysis.error_count, noun, uri, planning):
            out.append(lens)
            if len(out) % SLICE == 0:
                await asyncio.sleep(0)
        return await server.in_thread(JsonReady.of, out)
