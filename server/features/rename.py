"""textDocument/prepareRename, rename, references and documentHighlight: engine/ide/rename.py over LSP
(built in the worker).

Names: a `point_defs` name with its `$ref`s, a Weval prompt id, an AgentV test id (in the suite, or in
a tests file: renamed there, checked against every test of a suite that includes it); the references of
an AgentV tests file are the suites that include it. A refused rename (a clash, an invalid name, a prompt
without id) is an error response carrying the engine's message, which editors show as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from . import on_snapshot

if TYPE_CHECKING:
    from evalspec.ide.rename import Occurrence

    from ..convert import LineIndex
    from ..server import EvalspecServer
    from ..worker import Doc, Snapshot, Worker

TESTS_FILE_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")
REFUSED = "refused"  # a job's answer {REFUSED: message}: the LSP process answers it as an error


class RenameRefused(JsonRpcException):
    """LSP RequestFailed, with the reason the name cannot be renamed."""

    CODE = -32803


def _uri_and_index(worker: Worker, snap: Snapshot, path: Path | None) -> tuple[str, LineIndex]:
    from ..convert import uri_of

    if path is None or path == snap.analysis.path:
        return snap.uri, snap.index
    return uri_of(path), worker.index_of_path(path)


def _location(worker: Worker, snap: Snapshot, o: Occurrence) -> lsp.Location:
    uri, index = _uri_and_index(worker, snap, o.path)
    return lsp.Location(uri=uri, range=index.range(o.span))


def prepare(worker: Worker, doc: Doc, params: lsp.PrepareRenameParams) -> Any:
    from evalspec.findings import Span
    from evalspec.ide.rename import Refusal, prepare_rename

    from ..convert import as_json

    snap = worker.snapshot(doc)
    if snap is None:  # a tests file: renamed through the suite that includes it
        return _prepare_in_tests_file(worker, doc, params)
    line, col = snap.index.point(params.position)
    got = prepare_rename(snap.analysis, line, col)
    if isinstance(got, Refusal):
        return {REFUSED: got.message}
    return as_json(snap.index.range(got)) if isinstance(got, Span) else None


def do_rename(worker: Worker, doc: Doc, params: lsp.RenameParams) -> Any:
    from evalspec.ide.rename import Refusal, rename

    from ..convert import as_json

    snap = worker.snapshot(doc)
    if snap is None:  # a tests file: renamed through the suite that includes it
        return _rename_in_tests_file(worker, doc, params)
    line, col = snap.index.point(params.position)
    got = rename(snap.analysis, line, col, params.new_name)
    if isinstance(got, Refusal):
        return {REFUSED: got.message}
    if got is None:
        return None
    changes: dict[str, list[lsp.TextEdit]] = {}
    versioned: list[lsp.TextDocumentEdit] = []
    for part in got:
        uri, index = _uri_and_index(snap.worker, snap, part.path)
        edits = [lsp.TextEdit(range=index.range(e.span), new_text=e.new_text) for e in part.edits]
        changes[uri] = edits
        version = snap.version if uri == snap.uri else None
        versioned.append(lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits))
    if snap.client.document_changes:
        return as_json(lsp.WorkspaceEdit(document_changes=versioned))  # refused by the editor if the text moved on
    return as_json(lsp.WorkspaceEdit(changes=changes))


def _suite_of(worker: Worker, doc: Doc) -> tuple[Any, Path, LineIndex] | None:
    """For an open AgentV tests file: the analysis of the nearest suite that includes it (its open text,
    else the disk; the tests file as the editor has it), the file's path and its line index."""
    from evalspec.agentv.including_suites import suites_including
    from evalspec.detect import FileKind
    from evalspec.incremental import DocumentAnalyzer

    if doc.path is None or not doc.path.name.endswith(TESTS_FILE_SUFFIXES):
        return None
    path = Path(doc.path)
    for suite in suites_including(path):
        text = worker.files.read_text(suite)  # the editor's text when open, else the disk (bounded)
        if text is None:
            continue
        analysis = DocumentAnalyzer(suite, source=worker.files).analyze(text)
        if analysis.kind is not FileKind.AGENTV or analysis.suite is None:
            continue
        named = next((Path(t.source_path) for t in analysis.suite.tests
                      if t.source_path is not None and Path(t.source_path).resolve() == path.resolve()), None)
        if named is not None:  # the path as the suite's tests carry it
            return analysis, named, worker.index_of_path(path)
    return None


def _prepare_in_tests_file(worker: Worker, doc: Doc, params: lsp.PrepareRenameParams) -> Any:
    from evalspec.ide.rename import prepare_rename_in_tests_file

    from ..convert import as_json

    found = _suite_of(worker, doc)
    if found is None:
        return None
    suite, path, index = found
    line, col = index.point(params.position)
    got = prepare_rename_in_tests_file(suite, path, index.lines, line, col)
    return None if got is None else as_json(index.range(got))


def _rename_in_tests_file(worker: Worker, doc: Doc, params: lsp.RenameParams) -> Any:
    from evalspec.ide.rename import Refusal, rename_in_tests_file

    from ..convert import as_json

    found = _suite_of(worker, doc)
    if found is None:
        return None
    suite, path, index = found
    line, col = index.point(params.position)
    got = rename_in_tests_file(suite, path, index.lines, line, col, params.new_name)
    if isinstance(got, Refusal):
        return {REFUSED: got.message}
    if got is None:
        return None
    edits = [lsp.TextEdit(range=index.range(e.span), new_text=e.new_text) for part in got for e in part.edits]
    if worker.context.client.document_changes:
        return as_json(lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version), edits=edits)]))
    return as_json(lsp.WorkspaceEdit(changes={doc.uri: edits}))


def find_references(worker: Worker, doc: Doc, params: lsp.ReferenceParams) -> bytes | None:
    from evalspec.ide.rename import including_suites, references

    from ..convert import as_json, path_of, uri_of

    snap = worker.snapshot(doc)
    if snap is None:
        # Not an eval file: an AgentV tests file is referenced by the suites that include it.
        path = path_of(params.text_document.uri)
        if path is None or not path.name.endswith(TESTS_FILE_SUFFIXES):
            return None
        return as_json([lsp.Location(uri=uri_of(o.path), range=worker.index_of_path(o.path).range(o.span))
                        for o in including_suites(path) if o.path is not None])
    line, col = snap.index.point(params.position)
    found = references(snap.analysis, line, col, params.context.include_declaration)
    return as_json([_location(worker, snap, o) for o in found])


@on_snapshot
def highlight(snap: Snapshot, params: lsp.DocumentHighlightParams) -> bytes | None:
    from evalspec.ide.rename import highlights

    from ..convert import as_json

    line, col = snap.index.point(params.position)
    return as_json([lsp.DocumentHighlight(range=snap.index.range(o.span),
                                          kind=lsp.DocumentHighlightKind.Write if o.definition
                                          else lsp.DocumentHighlightKind.Read)
                    for o in highlights(snap.analysis, line, col)])


JOBS = {"prepare_rename": prepare, "rename": do_rename, "references": find_references, "highlight": highlight}


def register(server: EvalspecServer) -> None:
    def refusable(method: str, options: Any, empty: Any, job: str) -> None:
        async def forwarded(server: EvalspecServer, params: Any) -> Any:
            got = await server.ask(job, params.text_document.uri, params, what=method)
            if isinstance(got, dict) and REFUSED in got:
                raise RenameRefused(got[REFUSED])
            return got

        forwarded.__name__ = job
        server.request(method, options, empty=empty)(forwarded)

    refusable(lsp.TEXT_DOCUMENT_PREPARE_RENAME, None, lambda: None, "prepare_rename")
    refusable(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True), None, "rename")
    server.forward(lsp.TEXT_DOCUMENT_REFERENCES, None, list, "references")
    server.forward(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, None, list, "highlight")
