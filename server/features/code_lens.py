"""textDocument/codeLens: run the suite or one prompt / test, and the results of earlier runs in place.

On the suite's first line: `▶ Run all` and `Plan` (or `■ Cancel` with the progress while it runs),
then the last run's outcome. On each prompt / test: `▶ Run`, then its latest result per model. A file
with errors gets one lens that says so instead of run lenses. Titles come from the engine's RunBoard.
The Run lenses also say what a run would cost (`▶ Run · ≈ $0.04, 36 calls`, engine/ide/run_costs.py,
the `--dry-run` estimate with the settings' models and judges): sized in the background after each
analysis, the lenses never wait for it; the client is asked to refresh its lenses when it is ready.
Off with the setting `runCosts: false`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from lsprotocol import types as lsp

from evalspec.analysis import Analysis
from evalspec.ide.run_costs import RunCosts, run_costs
from evalspec.ide.runs import RunBoard, RunItem, run_items
from evalspec.yielding import Abandoned

from .. import workers
from ..convert import LineIndex
from ..documents import in_thread
from ..protocol import JsonReady
from ..run_state import DocumentRuns
from ..server import EvalspecServer, Snapshot
from .run import CANCEL, PLAN, RUN, SHOW
from .run_target import options_for

Range = dict[str, dict[str, int]]


def _lens(rng: Range, title: str, command: str, uri: str, item: str | None = None) -> dict[str, Any]:
    args: dict[str, str] = {"uri": uri}
    if item is not None:
        args["item"] = item
    return {"range": rng, "command": {"title": title, "command": command, "arguments": [args]}}


def placed_items(analysis: Analysis, index: LineIndex) -> list[tuple[RunItem, Range]]:
    """The run items of an analysis with their lens ranges."""
    return [(item, index.range_json(item.span)) for item in run_items(analysis)]


def _with_cost(title: str, costs: RunCosts | None, item: str | None) -> str:
    cost = costs.by_item.get(item) if costs is not None else None
    return f"{title} · {cost.text()}" if cost is not None else title


def lenses(items: list[tuple[RunItem, Range]], board: RunBoard, running: bool, errors: int, noun: str,
           uri: str, planning: bool = False, costs: RunCosts | None = None) -> Iterator[dict[str, Any]]:
    """The lenses of `items` as JSON data, given the document's runs (and, when sized, their costs)."""
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
                yield _lens(rng, _with_cost(f"▶ Run all ({count} {noun}{'s' if count != 1 else ''})", costs, None),
                            RUN, uri)
                yield _lens(rng, "Plan", PLAN, uri)
            title = None if running else board.suite_title()
            if title:
                yield _lens(rng, title, SHOW, uri)
            continue
        if not running and not errors:
            yield _lens(rng, _with_cost("▶ Run", costs, item.item_id), RUN, uri, item.item_id)
        title = board.item_title(item)
        if title:
            yield _lens(rng, title, SHOW, uri, item.item_id)


def idle_lenses(items: list[tuple[RunItem, Range]], errors: int, noun: str, uri: str,
                costs: RunCosts | None = None) -> list[dict[str, Any]]:
    """The lenses of a document that has no run results (yet): the same for the whole analysis."""
    return list(lenses(items, RunBoard(), False, errors, noun, uri, costs=costs))


def _idle(state: DocumentRuns | None) -> bool:
    return state is None or (not state.running and not state.board.results and state.board.summary is None)


_sizing: dict[str, workers.Stop] = {}  # uri -> the sizing of its latest version (see `sized`)


def sized(server: EvalspecServer, snap: Snapshot) -> RunCosts | None:
    """The costs of running the document, once sized; None until then (sizing starts, in the background,
    and the client is asked to refresh its lenses when it ends) and when the setting turns them off."""
    if not server.settings.run_costs or snap.analysis.error_count:
        return None
    try:
        options = options_for(server, snap.uri, None)
    except ValueError:
        return None
    key = f"lsp.run-costs {server.settings.run!r} {options.output}"
    entry = snap.analysis.memo.get(key)
    if isinstance(entry, asyncio.Future):
        if not entry.done() or entry.cancelled() or entry.exception() is not None:
            return None
        costs: RunCosts = entry.result()
        return costs if costs.by_item else None
    # Background work, stopped when a newer version of the document is sized instead.
    stop = workers.Stop()
    earlier = _sizing.get(snap.uri)
    if earlier is not None:
        earlier.requested = True
    _sizing[snap.uri] = stop
    future = snap.analysis.memo[key] = in_thread(run_costs, snap.analysis, options, stop=stop)

    def ready(done: asyncio.Future[RunCosts]) -> None:
        if _sizing.get(snap.uri) is stop:
            del _sizing[snap.uri]
        if done.cancelled() or done.exception() is not None:
            exc = None if done.cancelled() else done.exception()
            if exc is not None and not isinstance(exc, Abandoned):
                server.report_failure(f"sizing the run of {snap.uri}", exc)
            return
        if done.result().by_item and server.client.code_lens_refresh:
            server.workspace_code_lens_refresh(None)

    future.add_done_callback(ready)
    return None


def answers(snap: Snapshot, state: DocumentRuns | None, costs: RunCosts | None = None,
            ) -> list[tuple[str, Any, tuple[Any, ...]]]:
    """The lens items (memo key, builder, arguments) and, while the document has no run results, its
    lenses as JSON (see EvalspecServer.prepare_answers), with `costs` when they are sized."""
    items_key = f"lsp.lens-items {snap.index.encoding}"
    out: list[tuple[str, Any, tuple[Any, ...]]] = [(items_key, placed_items, (snap.analysis, snap.index))]
    if _idle(state):
        errors = snap.analysis.error_count
        noun = "test" if snap.analysis.suite is not None else "prompt"

        def build() -> JsonReady:
            items = snap.analysis.memo.get(items_key)
            placed = items.result() if isinstance(items, asyncio.Future) and items.done() else \
                placed_items(snap.analysis, snap.index)
            return JsonReady.of(idle_lenses(placed, errors, noun, snap.uri, costs))

        # Keyed by the costs object (kept in the memo): lenses with other settings' costs are built afresh.
        sized_key = id(costs) if costs is not None else "-"
        out.append((f"lsp.idle-lenses {snap.index.encoding} {sized_key}", build, ()))
    return out


SLICE = 1000  # lenses built between two turns of the event loop while a document has run results


def register(server: EvalspecServer) -> None:
    server.answers[lsp.TEXT_DOCUMENT_CODE_LENS] = lambda snap: answers(snap, server.runs.get(snap.uri),
                                                                       sized(server, snap))

    @server.request(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False), empty=list)
    async def code_lens(server: EvalspecServer, params: lsp.CodeLensParams) -> Any:
        uri = params.text_document.uri
        snap = await server.snapshot(uri)
        if snap is None:
            return []
        state = server.runs.get(uri)
        costs = sized(server, snap)
        wanted = answers(snap, state, costs)
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
        for lens in lenses(items, board, running, snap.analysis.error_count, noun, uri, planning, costs):
            out.append(lens)
            if len(out) % SLICE == 0:
                await asyncio.sleep(0)
        return await server.in_thread(JsonReady.of, out)
