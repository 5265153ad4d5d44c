"""textDocument/codeLens: run the suite or one prompt / test, and the results of earlier runs in place.

On the suite's first line `▶ Run all` and `Plan` (`■ Cancel` and the progress while it runs), then the
last run's outcome; on each prompt / test `▶ Run`, then its latest result per model (titles from the
engine's RunBoard); a file with errors gets one lens saying so. The Run lenses say what a run would
cost (`▶ Run · ≈ $0.04, 36 calls`, engine/ide/run_costs.py; off with `runCosts: false`), sized in the
background after each analysis: the lenses never wait for it, the client is asked to refresh them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..protocol import JsonReady
from . import on_snapshot
from .run_jobs import CANCEL, PLAN, RUN, SHOW

if TYPE_CHECKING:
    from evalspec.ide.run_costs import RunCosts
    from evalspec.ide.runs import RunBoard, RunItem

    from ..server import EvalspecServer
    from ..settings import RunSettings
    from ..worker import Doc, Snapshot, Worker


def lenses(items: list[tuple[RunItem, dict[str, Any]]], board: RunBoard, running: bool, planning: bool, errors: int,
           noun: str, uri: str, costs: RunCosts | None) -> list[dict[str, Any]]:
    """The lenses of the run items (with their ranges) as JSON data, given the document's runs (and,
    when sized, their costs)."""
    out = []

    def lens(rng: dict[str, Any], title: str, command: str, item: str | None = None, cost: bool = False) -> None:
        price = costs.by_item.get(item) if cost and costs is not None else None
        out.append({"range": rng, "command": {"title": f"{title} · {price.text()}" if price is not None else title,
                                              "command": command,
                                              "arguments": [{"uri": uri} if item is None else {"uri": uri, "item": item}]}})

    for item, rng in items:
        if item.kind == "suite":
            if planning:
                lens(rng, "■ Cancel: planning the run", CANCEL)
            elif running:
                lens(rng, f"■ Cancel run ({board.progress_text()})", CANCEL)
            elif errors:
                lens(rng, f"✗ {errors} error(s): fix them to run", RUN)
            else:
                count = len(items) - 1
                lens(rng, f"▶ Run all ({count} {noun}{'s' if count != 1 else ''})", RUN, cost=True)
                lens(rng, "Plan", PLAN)
            title = None if running else board.suite_title()
        else:
            if not running and not errors:
                lens(rng, "▶ Run", RUN, item.item_id, cost=True)
            title = board.item_title(item)
        if title:
            lens(rng, title, SHOW, item.item_id)
    return out


@on_snapshot
def code_lens(snap: Snapshot, params: Any, sizing: tuple[str, Any] | None = None) -> Any:
    """(the lenses, whether the run costs asked for are still to be sized). `sizing`: (key, (the
    settings' `run` section, the output folder)) of the run costs to show. The items and their ranges (fingerprints of every prompt's text: 0.1 s on a
    4 MB file) are made once per analysis; the lenses too while the document has no run results."""
    from evalspec import jsonio
    from evalspec.ide.runs import RunBoard, run_items

    analysis = snap.analysis
    items = analysis.memoised(f"lsp.lens-items {snap.index.encoding}",
                              lambda a: [(item, snap.index.range_json(item.span)) for item in run_items(a)])
    costs: RunCosts | None = None
    unsized = False
    if sizing is not None and not analysis.error_count:
        costs = analysis.memo.get(f"lsp.run-costs {sizing[0]}")
        unsized = costs is None
        if costs is not None and not costs.by_item:
            costs = None
    key = sizing[0] if costs is not None and sizing is not None else "-"
    runs, noun = snap.runs, "test" if analysis.suite is not None else "prompt"
    board = runs.board
    if board is None or (not runs.running and not runs.planning and not board.results and board.summary is None):
        return analysis.memoised(f"lsp.idle-lenses {snap.index.encoding} {key}", lambda _: jsonio.dumps_bytes(
            lenses(items, RunBoard(), False, False, analysis.error_count, noun, snap.uri, costs))), unsized
    return jsonio.dumps_bytes(lenses(items, board, runs.running, runs.planning, analysis.error_count, noun,
                                     snap.uri, costs)), unsized


def size_run(worker: Worker, doc: Doc, key: str, run: tuple[RunSettings, Path]) -> bool:
    """The run's costs (engine/ide/run_costs.py) with the settings' `run` section and output folder,
    kept in the analysis's memo for the lenses: whether any item has one."""
    from evalspec.ide.run_costs import RunCosts, run_costs
    from evalspec.ide.run_plan import run_options

    def sized(analysis: Any) -> RunCosts:
        try:
            options = run_options(*run, None, None)
        except ValueError as exc:  # settings that cannot run: no cost shown
            return RunCosts({}, str(exc))
        return run_costs(analysis, options)

    snap = worker.snapshot(doc)
    if snap is None or snap.analysis.error_count:
        return False
    return bool(snap.analysis.memoised(f"lsp.run-costs {key}", sized).by_item)


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
            from .run import output_folder

            output = output_folder(server, uri)
            wanted = (f"{server.settings.run!r} {output}", (server.settings.run, output))
        got = await server.ask("code_lens", uri, params, wanted, what=lsp.TEXT_DOCUMENT_CODE_LENS)
        if not isinstance(got, tuple):
            return got
        answer, unsized = got
        doc = server.documents.get(uri)
        if unsized and wanted is not None and doc is not None:
            size(uri, doc.version, *wanted)
        return JsonReady(answer)
