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
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..convert import LineIndex
from ..protocol import JsonReady
from . import on_snapshot
from .run_jobs import CANCEL, PLAN, RUN, SHOW

if TYPE_CHECKING:
    from evalspec.analysis import Analysis
    from evalspec.ide.run_costs import RunCosts
    from evalspec.ide.runs import RunBoard, RunItem

    from ..server import EvalspecServer
    from ..worker import Doc, Snapshot, Worker

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


@on_snapshot
def code_lens(snap: Snapshot, params: Any, sizing: tuple[str, Any] | None = None) -> Any:
    """The items and their ranges (fingerprints of every prompt's text: 0.1 s on a 4 MB file) once per
    analysis; the lenses too while the document has no run results. `sizing`: (key, RunOptions) of the
    run costs to show; the answer is (lenses, whether those costs are still to be sized)."""
    from evalspec import jsonio
    from evalspec.ide.runs import RunBoard

    memo = snap.analysis.memo
    items = snap.analysis.memoised(f"lsp.lens-items {snap.index.encoding}", lambda a: placed_items(a, snap.index))
    costs: RunCosts | None = None
    unsized = False
    if sizing is not None and not snap.analysis.error_count:
        costs = memo.get(f"lsp.run-costs {sizing[0]}")
        unsized = costs is None
        if costs is not None and not costs.by_item:
            costs = None
    runs = snap.runs
    board = runs.board
    idle = board is None or (not runs.running and not runs.planning and not board.results and board.summary is None)
    noun = "test" if snap.analysis.suite is not None else "prompt"
    errors = snap.analysis.error_count
    if idle:
        key = f"lsp.idle-lenses {snap.index.encoding} {sizing[0] if costs is not None and sizing else '-'}"
        return snap.analysis.memoised(key, lambda _: jsonio.dumps_bytes(list(
            lenses(items, RunBoard(), False, errors, noun, snap.uri, costs=costs)))), unsized
    return jsonio.dumps_bytes(list(lenses(items, board, runs.running, errors, noun, snap.uri, runs.planning,
                                          costs))), unsized


def size_run(worker: Worker, doc: Doc, key: str, options: Any) -> bool:
    """The run's costs (engine/ide/run_costs.py), kept in the analysis's memo for the lenses: whether
    any item has one."""
    from evalspec.ide.run_costs import run_costs

    snap = worker.snapshot(doc)
    if snap is None or snap.analysis.error_count:
        return False
    return bool(snap.analysis.memoised(f"lsp.run-costs {key}", lambda a: run_costs(a, options)).by_item)


JOBS = {"code_lens": code_lens, "size_run": size_run}


def register(server: EvalspecServer) -> None:
    sizing: dict[str, asyncio.Task[Any]] = {}  # uri -> the sizing of its latest version

    def size(uri: str, version: int, key: str, options: Any) -> None:
        """Sizing in the background (a newer version's replaces it); the client is asked to refresh its
        lenses when costs are in."""
        earlier = sizing.get(uri)
        if earlier is not None and getattr(earlier, "sizes", None) == (version, key):
            return

        async def run() -> None:
            status, found = await server.workers.call("size_run", uri, version, key, options,
                                                      board=server.board(uri))
            if status == "error":
                server.report(found[0] or f"sizing the run of {uri}", found[1])
            elif status == "ok" and found and server.client.code_lens_refresh:
                server.workspace_code_lens_refresh(None)

        task = asyncio.ensure_future(run())
        task.sizes = (version, key)  # type: ignore[attr-defined]
        sizing[uri] = task
        task.add_done_callback(lambda t: sizing.pop(uri, None) if sizing.get(uri) is t else None)

    @server.request(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False), empty=list)
    async def code_lens(server: EvalspecServer, params: lsp.CodeLensParams) -> Any:
        uri = params.text_document.uri
        wanted: tuple[str, Any] | None = None
        if server.settings.run_costs:
            from .run import options_for

            try:
                options = options_for(server, uri, None)
            except ValueError:
                options = None
            if options is not None:
                wanted = (f"{server.settings.run!r} {options.output}", options)
        got = await server.ask("code_lens", uri, params, wanted, what=lsp.TEXT_DOCUMENT_CODE_LENS)
        if not isinstance(got, tuple):
            return got
        answer, unsized = got
        doc = server.documents.get(uri)
        if unsized and wanted is not None and doc is not None:
            size(uri, doc.version, *wanted)
        return JsonReady(answer)
