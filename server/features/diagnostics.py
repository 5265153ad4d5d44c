"""Diagnostics: findings of the current analysis, pushed or pulled (never both for one client).

Push (`textDocument/publishDiagnostics`) follows each fresh analysis — the debounce and the
stale-version check live in `Documents`. Pull (`textDocument/diagnostic`) is offered only to clients
that declare it, and answers "unchanged" when the client already holds the same diagnostics.

Findings about another file (an AgentV eval file's external tests file) go to that file's URI: with
push as their own publication, with pull as `relatedDocuments`. A file's published diagnostics are the
union of what every open document reports about it, so closing one document does not wipe what
another one found.

Diagnostics are JSON data, not lsprotocol objects: a blueprint with an error in each of its 12,000
prompts has 12,000 of them, and building and converting the objects held the event loop for seconds.
They are built on the analysis thread with each analysis (kept in its memo) and sent as they are.

After a run, failed points and assertions are Information diagnostics too (source `evalspec run`,
engine/ide/run_notes.py), republished whenever the document's run results change; an edited item's
notes go with the next analysis (the item's text no longer matches its run).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from evalspec.analysis import Analysis
from evalspec.detect import FileKind
from evalspec.ide.run_notes import run_notes

from .. import convert
from ..documents import DocumentState
from ..freeing import free_later
from ..protocol import JsonReady
from ..server import EvalspecServer

Diagnostic = dict[str, Any]  # an LSP Diagnostic as JSON data

RUN_SOURCE = "evalspec run"

PULL_OPTIONS = lsp.DiagnosticOptions(identifier="evalspec", inter_file_dependencies=True,
                                     workspace_diagnostics=False)


def findings_by_uri(server: EvalspecServer, state: DocumentState, analysis: Analysis) -> dict[str, list[Diagnostic]]:
    """The analysis's findings as diagnostics, grouped by the file each belongs to (on the analysis
    thread, see `prepare`, or on the loop when that did not happen)."""
    out: dict[str, list[Diagnostic]] = {state.uri: []}
    own = server.index(analysis)
    others: dict[Path, tuple[str, convert.LineIndex]] = {}
    for finding in analysis.findings:
        path = convert.finding_path(finding, state.path)
        if path is None or path == state.path:
            uri, index = state.uri, own
        else:
            if path not in others:
                others[path] = (convert.uri_of(path), server.index_of_path(path))
            uri, index = others[path]
        out.setdefault(uri, []).append(convert.diagnostic_json(finding, index, uri))
    return out


def _memo_key(server: EvalspecServer, state: DocumentState) -> str:
    return f"lsp.diagnostics {server.encoding} {state.uri}"


def diagnostics_by_uri(server: EvalspecServer, state: DocumentState) -> dict[str, list[Diagnostic]]:
    """The current analysis as diagnostics, grouped by the file each finding belongs to."""
    analysis = state.analysis
    if analysis is None or (analysis.kind is FileKind.NONE and not analysis.findings):
        return {}  # unrelated YAML (its only findings: a limit its parse hit, analysis.LIMIT_CODES)
    key = _memo_key(server, state)
    found = analysis.memo.get(key)
    if not isinstance(found, dict):
        found = analysis.memo[key] = findings_by_uri(server, state, analysis)
    out = {uri: list(items) for uri, items in found.items()}  # copies: the memo's lists stay as they are
    out[state.uri] += run_diagnostics(server, state, server.index(analysis))
    return out


def run_diagnostics(server: EvalspecServer, state: DocumentState, index: convert.LineIndex) -> list[Diagnostic]:
    runs = server.runs.get(state.uri)
    if runs is None or not server.settings.run.diagnostics or state.analysis is None:
        return []
    return [{"range": index.range_json(note.span), "message": note.message,
             "severity": int(lsp.DiagnosticSeverity.Information), "code": note.code, "source": RUN_SOURCE}
            for note in run_notes(state.analysis, runs.board)]


def _generation(server: EvalspecServer, uri: str) -> int:
    runs = server.runs.get(uri)
    return runs.generation if runs is not None else 0


class PushedDiagnostics:
    """What has been published: per target URI, the diagnostics each open document contributed."""

    def __init__(self) -> None:
        self._by_target: dict[str, dict[str, list[Diagnostic]]] = defaultdict(dict)

    def union(self, target: str) -> list[Diagnostic]:
        return [d for part in self._by_target.get(target, {}).values() for d in part]

    def replace(self, owner: str, per_target: dict[str, list[Diagnostic]]) -> dict[str, bool]:
        """Set `owner`'s contributions; returns every target touched → whether its union changed."""
        touched = {t for t, parts in self._by_target.items() if owner in parts} | set(per_target)
        before = {t: self.union(t) for t in touched}
        for target in touched:
            parts = self._by_target[target]
            if per_target.get(target):
                parts[owner] = per_target[target]
            else:
                parts.pop(owner, None)
            if not parts:
                del self._by_target[target]
        return {t: self.union(t) != before[t] for t in touched}


class PulledReports:
    """The last report per document, so a re-pull of the same diagnostics answers "unchanged"."""

    def __init__(self) -> None:
        self._session = os.urandom(3).hex()  # result ids from an earlier server never match
        self._ids = itertools.count(1)
        # uri -> (what the report depends on, its result id, the diagnostics, the analysis itself)
        self._last: dict[str, tuple[object, str, dict[str, list[Diagnostic]], object]] = {}

    def report(self, server: EvalspecServer, state: DocumentState, previous_result_id: str | None) -> dict[str, Any]:
        """A DocumentDiagnosticReport (related documents included) as JSON data."""
        cached = self._last.get(state.uri)
        key = (id(state.analysis), _generation(server, state.uri), server.settings.run.diagnostics)
        if cached is not None and cached[0] == key and cached[3] is state.analysis:
            _, result_id, per_target, _ = cached
        else:
            per_target = diagnostics_by_uri(server, state)
            if cached is not None:  # a file that had findings and has none now is reported empty once
                for uri, items in cached[2].items():
                    if items and uri not in per_target:
                        per_target[uri] = []
            if cached is not None and cached[2] == per_target:
                result_id = cached[1]  # a new text with the very same diagnostics
            else:
                result_id = f"{self._session}-{next(self._ids)}"
            self._last[state.uri] = (key, result_id, per_target, state.analysis)
        related = {uri: {"kind": "full", "items": items} for uri, items in per_target.items() if uri != state.uri}
        report: dict[str, Any]
        if previous_result_id == result_id:
            report = {"kind": "unchanged", "resultId": result_id}
        else:
            report = {"kind": "full", "resultId": result_id, "items": per_target.get(state.uri, [])}
        if related:
            report["relatedDocuments"] = related
        return report

    def forget(self, uri: str) -> None:
        self._last.pop(uri, None)


def register(server: EvalspecServer) -> None:
    pushed = PushedDiagnostics()
    pulled = PulledReports()

    def publish(state: DocumentState, per_target: dict[str, list[Diagnostic]]) -> None:
        changed = pushed.replace(state.uri, per_target)
        if state.is_eval_file:
            changed[state.uri] = True  # an eval file always hears back, even "no problems"
        for target, differs in changed.items():
            if not differs:
                continue  # unrelated YAML that never had diagnostics gets no notification at all
            params: dict[str, Any] = {"uri": target, "diagnostics": pushed.union(target)}
            if target == state.uri:
                params["version"] = state.version
            server.notify_json(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, JsonReady.of(params))

    refreshed: dict[str, int] = {}  # uri -> the re-checks a pull client was told about

    def analysed(state: DocumentState) -> None:
        if not server.client.pull_diagnostics:
            publish(state, diagnostics_by_uri(server, state))
        elif state.rechecks != refreshed.get(state.uri, 0):
            # Checked again because a file it reads changed: the client would not pull on its own.
            refreshed[state.uri] = state.rechecks
            if server.client.diagnostics_refresh:
                server.workspace_diagnostic_refresh(None)

    def closed(state: DocumentState) -> None:
        if server.client.pull_diagnostics:
            pulled.forget(state.uri)
            return
        analysis, state.analysis = state.analysis, None  # nothing to report any more: clear what it published
        if analysis is not None:
            free_later(analysis)  # not on the event loop (freeing.py)
        del analysis
        publish(state, {})

    def initialize(params: lsp.InitializeParams) -> None:
        if server.client.pull_diagnostics:
            # Declared only now: `diagnosticProvider` must not be advertised to push-only clients.
            server.request(lsp.TEXT_DOCUMENT_DIAGNOSTIC, PULL_OPTIONS, empty=None)(pull)

    async def pull(server: EvalspecServer, params: lsp.DocumentDiagnosticParams) -> Any:
        uri = params.text_document.uri
        try:
            await asyncio.wait_for(server.documents.settled(uri), server.settings.request_budget_s)
        except TimeoutError:
            # Pulled diagnostics may be cancelled by the server: the client asks again (retrigger).
            raise JsonRpcException(f"evalspec is still checking {uri.rsplit('/', 1)[-1]}",
                                   int(lsp.LSPErrorCodes.ServerCancelled), {"retriggerRequest": True}) from None
        state = server.documents.get(uri)
        if state is None or state.analysis is None:
            return JsonReady.of({"kind": "full", "items": []})
        # Encoded on a worker thread: 12,000 diagnostics are 3 MB of JSON (the report is built anew
        # here and read by nothing else meanwhile).
        return await server.in_thread(JsonReady.of, pulled.report(server, state, params.previous_result_id))

    def runs_changed(uri: str) -> None:
        if server.client.pull_diagnostics:
            if server.client.diagnostics_refresh:
                server.workspace_diagnostic_refresh(None)
            return
        state = server.documents.get(uri)
        if state is not None and state.analysis is not None and state.analysis_version == state.version:
            publish(state, diagnostics_by_uri(server, state))

    def prepare(state: DocumentState, analysis: Analysis) -> None:
        # On the analysis thread: the diagnostics every client asks for next.
        if analysis.kind is not FileKind.NONE or analysis.findings:
            analysis.memo[_memo_key(server, state)] = findings_by_uri(server, state, analysis)

    server.on_prepare.append(prepare)
    server.on_runs_changed.append(runs_changed)
    server.on_initialize.append(initialize)
    server.on_analysed.append(analysed)
    server.on_closed.append(closed)
