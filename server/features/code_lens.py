"""textDocument/codeLens: run the suite or one prompt / test, and the results of earlier runs in place.

On the suite's first line: `▶ Run all` and `Plan` (or `■ Cancel` with the progress while it runs),
then the last run's outcome. On each prompt / test: `▶ Run`, then its latest result per model. A file
with errors gets one lens that says so instead of run lenses. Titles come from the engine's RunBoard.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..convert import LineIndex
from .run_target import CANCEL, PLAN, RUN, SHOW

if TYPE_CHECKING:
    from evalspec.analysis import Analysis
    from evalspec.ide.runs import RunBoard, RunItem

    from ..server import EvalspecServer
    from ..worker import Doc, Worker

Range = dict[str, dict[str, int]]


def _lens(rng: Range, title: str, command: str, uri: str, item: str | None = None) -> dict[str, Any]:
    args: dict[str, str] = {"uri": uri}
    if item is not None:
        args["item"] = item
    return {"range": rng, "command": {"title": title, "command": command, "arguments": [args]}}


def placed_items(analysis: Analysis, index: LineIndex) -> list[tuple[RunItem, Range]]:
    """The run items of an analysis with their lens ranges."""
    from evalspec.ide.runs import run_items

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


def code_lens(worker: Worker, doc: Doc, params: Any) -> bytes | None:
    """The items and their ranges (fingerprints of every prompt's text: 0.1 s on a 4 MB file) once per
    analysis; the lenses too while the document has no run results."""
    from evalspec import jsonio
    from evalspec.ide.runs import RunBoard

    snap = worker.snapshot(doc)
    if snap is None:
        return None
    memo = snap.analysis.memo
    items_key = f"lsp.lens-items {snap.index.encoding}"
    if items_key not in memo:
        memo[items_key] = placed_items(snap.analysis, snap.index)
    items = memo[items_key]
    runs = snap.runs
    board = runs.board
    idle = board is None or (not runs.running and not runs.planning and not board.results and board.summary is None)
    noun = "test" if snap.analysis.suite is not None else "prompt"
    errors = snap.analysis.error_count
    if idle:
        key = f"lsp.idle-lenses {snap.index.encoding}"
        if key not in memo:
            memo[key] = jsonio.dumps_bytes(list(lenses(items, RunBoard(), False, errors, noun, snap.uri)))
        return memo[key]
    return jsonio.dumps_bytes(list(lenses(items, board, runs.running, errors, noun, snap.uri, runs.planning)))


JOBS = {"code_lens": code_lens}


def register(server: EvalspecServer) -> None:
    server.forward(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False), list, "code_lens")
