"""workspace/diagnostic, and pushed diagnostics for clients without it: the findings of every eval file under
the workspace folders that is not open, so the Problems panel lists the whole project (as ruff's server does).

A scan (engine/ide/workspace_files.py: bounded in files and sizes) runs in the background, never while a
request waits for it; a file whose modification time and size are unchanged keeps its report. The pull
request answers at once with what the last scan found (each report's resultId is the file's time and
size, so an unchanged file is answered "unchanged") and starts a scan when none was made; when a scan
changes anything, pull clients are asked to pull again (`workspace/diagnostic/refresh`), push clients get
publishDiagnostics. Files changed on disk (watched_files.py) start a new scan; a newer scan stops an
older one at its next yield point.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from evalspec.ide.workspace_files import check_file, eval_files
from evalspec.yielding import Abandoned

from .. import convert, workers
from ..documents import in_thread
from ..protocol import JsonReady
from ..server import EvalspecServer

log = logging.getLogger(__name__)

Report = tuple[str, list[dict[str, Any]]]  # (resultId, diagnostics as JSON)


class WorkspaceFindings:
    def __init__(self) -> None:
        self.reports: dict[str, Report] = {}  # uri -> the report of an unopened eval file
        self.scanned = False
        self.stop: workers.Stop | None = None


def _version(path: Path) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return f"{info.st_mtime_ns}-{info.st_size}"


def scan(server: EvalspecServer, roots: list[Path], open_paths: set[Path], before: dict[str, Report]
         ) -> dict[str, Report]:
    """On a worker: the reports of the eval files under `roots` that are not open."""
    out: dict[str, Report] = {}
    for path in eval_files(roots):
        if path in open_paths:
            continue
        uri = convert.uri_of(path)
        version = _version(path)
        if version is None:
            continue
        kept = before.get(uri)
        if kept is not None and kept[0] == version:
            out[uri] = kept
            continue
        analysis = check_file(path, server.documents.files)
        if analysis is None:
            continue
        index = server.index(analysis)
        out[uri] = (version, [convert.diagnostic_json(f, index, uri) for f in analysis.findings
                              if convert.finding_path(f, path) in (None, path)])
    return out


def register(server: EvalspecServer) -> None:
    state = WorkspaceFindings()

    def roots() -> list[Path]:
        folders = [convert.path_of(f.uri) for f in server.workspace.folders.values()]
        if not folders and server.workspace.root_path:
            folders = [Path(server.workspace.root_path)]
        return [f for f in folders if f is not None]

    def open_paths() -> set[Path]:
        return {p for p in (convert.path_of(uri) for uri in server.documents.open_uris()) if p is not None}

    def start_scan() -> None:
        if state.stop is not None:
            state.stop.requested = True  # the older scan stops at its next yield point
        stop = state.stop = workers.Stop()
        before = dict(state.reports)
        future = in_thread(scan, server, roots(), open_paths(), before, stop=stop)

        def done(f: asyncio.Future[dict[str, Report]]) -> None:
            if state.stop is stop:
                state.stop = None
            if f.cancelled():
                return
            exc = f.exception()
            if exc is not None:
                if not isinstance(exc, Abandoned):
                    server.report_failure("the workspace scan", exc)
                return
            state.scanned = True
            found = f.result()
            changed = {u for u in found.keys() | before.keys() if found.get(u) != before.get(u)}
            state.reports = found
            if not changed:
                return
            if server.client.pull_diagnostics:
                if server.client.diagnostics_refresh:
                    server.workspace_diagnostic_refresh(None)
                return
            for uri in changed:
                if server.documents.get(uri) is not None:
                    continue  # open: its own diagnostics are the editor's
                items = found.get(uri, ("", []))[1]
                server.notify_json(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                                   JsonReady.of({"uri": uri, "diagnostics": items}))

        future.add_done_callback(done)

    async def workspace_diagnostic(server: EvalspecServer, params: lsp.WorkspaceDiagnosticParams) -> Any:
        if not state.scanned and state.stop is None:
            start_scan()
        previous = {p.uri: p.value for p in params.previous_result_ids}
        items: list[dict[str, Any]] = []
        for uri, (version, diagnostics) in state.reports.items():
            if server.documents.get(uri) is not None:
                continue
            if previous.get(uri) == version:
                items.append({"kind": "unchanged", "uri": uri, "resultId": version, "version": None})
            else:
                items.append({"kind": "full", "uri": uri, "resultId": version, "version": None, "items": diagnostics})
        return await server.in_thread(JsonReady.of, {"items": items})

    def initialize(params: lsp.InitializeParams) -> None:
        if server.client.pull_diagnostics:
            server.request(lsp.WORKSPACE_DIAGNOSTIC, empty=lambda: {"items": []})(workspace_diagnostic)
        else:
            asyncio.get_running_loop().call_soon(start_scan)  # push clients: published when found

    def files_changed(paths: list[Path]) -> None:
        if state.scanned or state.stop is not None:
            start_scan()

    def closed(document: Any) -> None:
        # A push client's diagnostics of the closed file were cleared (diagnostics.py): its findings on
        # disk are shown again, and checked again.
        if not server.client.pull_diagnostics and state.scanned:
            found = state.reports.get(document.uri)
            if found is not None:
                server.notify_json(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                                   JsonReady.of({"uri": document.uri, "diagnostics": found[1]}))
        if state.scanned:
            start_scan()

    server.on_initialize.append(initialize)
    server.on_files_changed.append(files_changed)
    server.on_closed.append(closed)
