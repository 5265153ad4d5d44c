"""textDocument/prepareRename, rename, references and documentHighlight: engine/ide/rename.py over LSP.

Names: a `point_defs` name with its `$ref`s, a Weval prompt id, an AgentV test id; the references of an
AgentV tests file are the suites that include it. A refused rename (a
clash, an invalid name, a prompt without id) is an error response carrying the engine's message, which
editors show as it is.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from evalspec.findings import Span
from evalspec.ide.rename import (
    Occurrence,
    Refusal,
    highlights,
    including_suites,
    prepare_rename,
    references,
    rename,
)

from .. import convert
from ..server import EvalspecServer, Snapshot

TESTS_FILE_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")


class RenameRefused(JsonRpcException):
    """LSP RequestFailed, with the reason the name cannot be renamed."""

    CODE = -32803


def _uri_and_index(server: EvalspecServer, snap: Snapshot, path: Path | None) -> tuple[str, convert.LineIndex]:
    if path is None or path == snap.analysis.path:
        return snap.uri, snap.index
    return convert.uri_of(path), server.index_of_path(path)


def _location(server: EvalspecServer, snap: Snapshot, o: Occurrence) -> lsp.Location:
    uri, index = _uri_and_index(server, snap, o.path)
    return lsp.Location(uri=uri, range=index.range(o.span))


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_PREPARE_RENAME, empty=lambda: None)
    async def prepare(server: EvalspecServer, params: lsp.PrepareRenameParams) -> lsp.Range | None:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return None
        line, col = snap.index.point(params.position)
        got = await server.computed(snap.uri, prepare_rename, snap.analysis, line, col)
        if isinstance(got, Refusal):
            raise RenameRefused(got.message)
        return snap.index.range(got) if isinstance(got, Span) else None

    @server.request(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True), empty=None)
    async def do_rename(server: EvalspecServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return None
        line, col = snap.index.point(params.position)
        got = await server.computed(snap.uri, rename, snap.analysis, line, col, params.new_name)
        if isinstance(got, Refusal):
            raise RenameRefused(got.message)
        if got is None:
            return None
        changes: dict[str, list[lsp.TextEdit]] = {}
        versioned: list[lsp.TextDocumentEdit] = []
        for part in got:
            uri, index = _uri_and_index(server, snap, part.path)
            edits = [convert.text_edit(e, index) for e in part.edits]
            changes[uri] = edits
            version = snap.version if uri == snap.uri else None
            versioned.append(lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits))
        if server.client.document_changes:
            return lsp.WorkspaceEdit(document_changes=versioned)  # refused by the editor if the text moved on
        return lsp.WorkspaceEdit(changes=changes)

    @server.request(lsp.TEXT_DOCUMENT_REFERENCES, empty=list)
    async def find_references(server: EvalspecServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            # Not an eval file: an AgentV tests file is referenced by the suites that include it.
            path = convert.path_of(params.text_document.uri)
            if path is None or not path.name.endswith(TESTS_FILE_SUFFIXES):
                return []
            found = await server.computed(params.text_document.uri, including_suites, path)
            return [lsp.Location(uri=convert.uri_of(o.path), range=server.index_of_path(o.path).range(o.span))
                    for o in found if o.path is not None]
        line, col = snap.index.point(params.position)
        found = await server.computed(snap.uri, references, snap.analysis, line, col,
                                      params.context.include_declaration)
        return [_location(server, snap, o) for o in found]

    @server.request(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, empty=list)
    async def highlight(server: EvalspecServer, params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight]:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return []
        line, col = snap.index.point(params.position)
        found = await server.computed(snap.uri, highlights, snap.analysis, line, col)
        return [lsp.DocumentHighlight(range=snap.index.range(o.span),
                                      kind=lsp.DocumentHighlightKind.Write if o.definition
                                      else lsp.DocumentHighlightKind.Read)
                for o in found]
