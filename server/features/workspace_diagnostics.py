"""workspace/diagnostic, and pushed diagnostics for clients without it: the findings of every eval file
under the workspace folders that is not open, so the Problems panel lists the whole project (as ruff's
server does).

A scan (the `workspace_scan` job: engine/ide/workspace_files.py, bounded in files and sizes) runs in a
worker in the background; a file whose modification time and size are unchanged keeps its report (its
resultId, so a pull of it is answered "unchanged"). A pull answers at once with the last scan's reports;
a scan that changes anything asks pull clients to pull again and publishes to push clients. Files
changed on disk start a new scan; an older scan's answer is ignored.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from .. import convert
from ..convert import as_json
from ..engine_workers import OK
from ..protocol import JsonReady

if TYPE_CHECKING:
    from ..server import EvalspecServer
    from ..worker import Doc, Worker

log = logging.getLogger(__name__)

Report = tuple[str, list[dict[str, Any]]]  # (resultId, diagnostics as JSON)


@dataclass
class WorkspaceFindings:
    reports: dict[str, Report] = field(default_factory=dict)  # uri -> the report of an unopened eval file
    scanned: bool = False
    scanning: int = 0  # the generation of the scan under way (0: none)
    generation: int = 0
    tasks: set[asyncio.Future[Any]] = field(default_factory=set)


def scan(worker: Worker, doc: Doc | None, roots: list[Path], open_paths: set[Path], before: dict[str, str]
         ) -> dict[str, Report | None]:
    """In a worker: the reports of the eval files under `roots` that are not open; None for a file whose
    version is the one in `before` (its report is kept)."""
    from evalspec.ide.workspace_files import check_file, eval_files

    out: dict[str, Report | None] = {}
    for path in eval_files(roots):
        if path in open_paths:
            continue
        uri = convert.uri_of(path)
        try:
            version = f"{(info := os.stat(path)).st_mtime_ns}-{info.st_size}"
        except OSError:
            continue
        if before.get(uri) == version:
            out[uri] = None
            continue
        analysis = check_file(path, worker.files)
        if analysis is None:
            continue
        index = worker.index(analysis)
        out[uri] = (version, [convert.diagnostic_json(f, index, uri) for f in analysis.findings
                              if convert.finding_path(f, path) in (None, path)])
    return out


JOBS = {"workspace_scan": scan}


def register(server: EvalspecServer) -> None:
    state = WorkspaceFindings()

    def start_scan() -> None:
        state.generation += 1
        state.scanning = state.generation
        task = asyncio.ensure_future(scan_now(state.generation, dict(state.reports)))
        state.tasks.add(task)
        task.add_done_callback(state.tasks.discard)

    async def scan_now(generation: int, before: dict[str, Report]) -> None:
        try:
            status, value = await server.workers.call("workspace_scan", None, None, server.folders(), server.documents.open_paths(),
                                                      {uri: report[0] for uri, report in before.items()})
        except Exception as exc:
            server.report_failure("the workspace scan", exc)
            return
        finally:
            if state.scanning == generation:
                state.scanning = 0
        if generation != state.generation:
            return  # a newer scan answers
        if status != OK:
            if isinstance(value, tuple):
                server.report(value[0] or "the workspace scan", value[1])
            return
        state.scanned = True
        found = {uri: kept for uri, report in value.items()
                 if (kept := before.get(uri) if report is None else report) is not None}
        changed = {u for u in found.keys() | before.keys() if found.get(u) != before.get(u)}
        state.reports = found
        if changed and server.client.pull_diagnostics and server.client.diagnostics_refresh:
            server.workspace_diagnostic_refresh(None)
        elif changed and not server.client.pull_diagnostics:
            for uri in changed:
                if server.documents.get(uri) is None:  # open: its own diagnostics are the editor's
                    server.publish(uri, as_json(found.get(uri, ("", []))[1]))

    async def workspace_diagnostic(server: EvalspecServer, params: lsp.WorkspaceDiagnosticParams) -> Any:
        if not state.scanned and not state.scanning:
            start_scan()
        previous = {p.uri: p.value for p in params.previous_result_ids}
        items = [{"kind": "unchanged", "uri": uri, "resultId": version, "version": None} if previous.get(uri) == version
                 else {"kind": "full", "uri": uri, "resultId": version, "version": None, "items": diagnostics}
                 for uri, (version, diagnostics) in state.reports.items() if server.documents.get(uri) is None]
        return JsonReady(as_json({"items": items}))

    def initialize(params: lsp.InitializeParams) -> None:
        if server.client.pull_diagnostics:
            server.request(lsp.WORKSPACE_DIAGNOSTIC, empty=lambda: {"items": []})(workspace_diagnostic)
        else:
            asyncio.get_running_loop().call_soon(start_scan)  # push clients: published when found

    def files_changed(paths: list[Path]) -> None:
        if state.scanned or state.scanning:
            start_scan()

    def closed(document: Any) -> None:
        # A push client's diagnostics of the closed file were cleared (diagnostics.py): its findings on
        # disk are shown again, and checked again.
        if state.scanned and not server.client.pull_diagnostics and (found := state.reports.get(document.uri)):
            server.publish(document.uri, as_json(found[1]))
        if state.scanned:
            start_scan()

    server.on_initialize.append(initialize)
    server.on_files_changed.append(files_changed)
    server.on_closed.append(closed)
