"""Diagnostics: findings of the current analysis, pushed or pulled (never both for one client).

In the worker (`diagnostics` job): the findings as LSP diagnostics (JSON) per file they belong to (a
suite's external tests file has its own), and the last run's failed points as Information diagnostics
(engine/ide/run_notes.py). In the LSP process: published after each check, a file's diagnostics being
the union of what every open document reports about it; or pulled (`textDocument/diagnostic`, offered
only to clients that declare it), "unchanged" when the client already holds them.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import convert

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from ..documents import Document
    from ..server import EvalspecServer
    from ..worker import Doc, Worker

RUN_SOURCE = "evalspec run"
INFORMATION = 3  # lsp.DiagnosticSeverity.Information (the worker's first check loads no lsprotocol)


# --- in the worker ----------------------------------------------------------------------------------

def diagnostics(worker: Worker, doc: Doc, rechecks: int = 0) -> dict[str, Any]:
    """The document checked: {"eval": an eval file, "reads": the files its analysis read, "byUri": the
    diagnostics per file as JSON lists}. `rechecks`: how often a file it reads changed (when that
    count moves, the analysis is made again though the text is the same)."""
    from evalspec import jsonio
    from evalspec.detect import FileKind

    if rechecks != doc.rechecks:
        doc.rechecks, doc.analysed = rechecks, None

    analysis = worker.analysis(doc)
    reads = sorted(str(p) for p in analysis.dependencies)
    out: dict[str, Any] = {"eval": analysis.kind is not FileKind.NONE, "reads": reads, "byUri": {}}
    if analysis.kind is FileKind.NONE and not analysis.findings:
        return out  # unrelated YAML (its only findings: a limit its parse hit, analysis.LIMIT_CODES)
    by_uri = dict(analysis.memoised(f"lsp.diagnostics {worker.context.encoding} {doc.uri}",
                                    lambda _: findings_by_uri(worker, doc)))
    notes = run_diagnostics(worker, doc)
    if notes:
        by_uri[doc.uri] = by_uri.get(doc.uri, []) + notes
    out["byUri"] = {uri: jsonio.dumps_bytes(items) for uri, items in by_uri.items()}
    return out


def findings_by_uri(worker: Worker, doc: Doc) -> dict[str, list[dict[str, Any]]]:
    analysis = worker.analysis(doc)
    out: dict[str, list[dict[str, Any]]] = {doc.uri: []}
    own = worker.index(analysis)
    others: dict[Path, tuple[str, convert.LineIndex]] = {}
    for finding in analysis.findings:
        path = convert.finding_path(finding, doc.path)
        if path is None or path == doc.path:
            uri, index = doc.uri, own
        else:
            if path not in others:
                others[path] = (convert.uri_of(path), worker.index_of_path(path))
            uri, index = others[path]
        out.setdefault(uri, []).append(convert.diagnostic_json(finding, index, uri))
    return out


def run_diagnostics(worker: Worker, doc: Doc) -> list[dict[str, Any]]:
    board = doc.runs.board
    if board is None or not worker.context.run_diagnostics or doc.analysis is None:
        return []
    from evalspec.ide.run_notes import run_notes

    index = worker.index(doc.analysis)
    return [{"range": index.range_json(note.span), "message": note.message,
             "severity": INFORMATION, "code": note.code, "source": RUN_SOURCE}
            for note in run_notes(doc.analysis, board)]


JOBS = {"diagnostics": diagnostics}


# --- in the LSP process -----------------------------------------------------------------------------

class PushedDiagnostics:
    """What has been published: per target URI, the diagnostics each open document contributed."""

    def __init__(self) -> None:
        self._by_target: dict[str, dict[str, bytes]] = defaultdict(dict)

    def union(self, target: str) -> bytes:
        """The JSON lists of every contribution, joined into one."""
        parts = self._by_target.get(target, {}).values()
        return b"[" + b",".join(p[1:-1] for p in parts if p.strip() != b"[]") + b"]"

    def replace(self, owner: str, per_target: dict[str, bytes]) -> dict[str, bool]:
        """Set `owner`'s contributions; returns every target touched → whether its union changed."""
        touched = {t for t, parts in self._by_target.items() if owner in parts} | set(per_target)
        before = {t: self.union(t) for t in touched}
        for target in touched:
            parts = self._by_target[target]
            if per_target.get(target, b"[]") != b"[]":
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
        self.last: dict[str, tuple[str, dict[str, bytes]]] = {}  # uri -> (result id, diagnostics)

    def report(self, doc: Document, previous_result_id: str | None) -> bytes:
        """A DocumentDiagnosticReport (related documents included) as JSON."""
        per_target = dict(doc.diagnostics)
        cached = self.last.get(doc.uri)
        if cached is not None:  # a file that had findings and has none now is reported empty once
            for uri, items in cached[1].items():
                if items != b"[]" and uri not in per_target:
                    per_target[uri] = b"[]"
        result_id = cached[0] if cached and cached[1] == per_target else f"{self._session}-{next(self._ids)}"
        self.last[doc.uri] = (result_id, per_target)
        related = b",".join(b'"' + uri.encode() + b'":{"kind":"full","items":' + items + b"}"
                            for uri, items in per_target.items() if uri != doc.uri)
        if previous_result_id == result_id:
            body = b'{"kind":"unchanged","resultId":"' + result_id.encode() + b'"'
        else:
            body = (b'{"kind":"full","resultId":"' + result_id.encode() + b'","items":'
                    + per_target.get(doc.uri, b"[]"))
        if related:
            body += b',"relatedDocuments":{' + related + b"}"
        return body + b"}"


def register(server: EvalspecServer) -> None:
    from lsprotocol import types as lsp

    from ..protocol import JsonReady
    from ..server import SERVER_CANCELLED

    pushed = PushedDiagnostics()
    pulled = PulledReports()

    def publish(doc: Document, per_target: dict[str, bytes]) -> None:
        changed = pushed.replace(doc.uri, per_target)
        if doc.eval_file:
            changed[doc.uri] = True  # an eval file always hears back, even "no problems"
        for target, differs in changed.items():
            if differs:  # unrelated YAML that never had diagnostics gets no notification at all
                server.publish(target, pushed.union(target), doc.version if target == doc.uri else None)

    refreshed: dict[str, int] = {}  # uri -> the re-checks a pull client was told about

    def checked(doc: Document) -> None:
        if not server.client.pull_diagnostics:
            publish(doc, doc.diagnostics)
        elif doc.rechecks != refreshed.get(doc.uri, 0) or doc.runs_shown != doc.runs_generation:
            # Checked again because a file it reads changed, or a run's results: the client would not
            # pull on its own.
            refreshed[doc.uri] = doc.rechecks
            doc.runs_shown = doc.runs_generation
            if server.client.diagnostics_refresh:
                server.workspace_diagnostic_refresh(None)

    def closed(doc: Document) -> None:
        if server.client.pull_diagnostics:
            pulled.last.pop(doc.uri, None)
            return
        doc.eval_file = False
        publish(doc, {})

    def initialize(params: lsp.InitializeParams) -> None:
        if server.client.pull_diagnostics:
            # Declared only now: `diagnosticProvider` must not be advertised to push-only clients.
            options = lsp.DiagnosticOptions(identifier="evalspec", inter_file_dependencies=True,
                                            workspace_diagnostics=False)
            server.request(lsp.TEXT_DOCUMENT_DIAGNOSTIC, options, empty=None)(pull)

    async def pull(server: EvalspecServer, params: lsp.DocumentDiagnosticParams) -> Any:
        uri = params.text_document.uri
        try:
            await asyncio.wait_for(server.documents.settled(uri), server.remaining_budget())
        except TimeoutError:
            # Pulled diagnostics may be cancelled by the server: the client asks again (retrigger).
            return server.error(SERVER_CANCELLED, f"evalspec is still checking {uri.rsplit('/', 1)[-1]}",
                                {"retriggerRequest": True})
        doc = server.documents.get(uri)
        if doc is None:
            return JsonReady(b'{"kind":"full","items":[]}')
        return JsonReady(pulled.report(doc, params.previous_result_id))

    server.on_initialize.append(initialize)
    server.on_checked.append(checked)
    server.on_closed.append(closed)
