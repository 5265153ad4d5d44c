"""textDocument/prepareRename, rename, references and documentHighlight: engine/ide/rename.py over LSP
(built in the worker). Names: `point_defs` names and their `$ref`s, Weval prompt ids, AgentV test ids
(in a tests file, through the nearest suite that includes it). A rename the engine refuses is answered
RequestFailed with its message, which editors show as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from .. import convert
from . import answers

if TYPE_CHECKING:
    from ..convert import LineIndex
    from ..worker import Doc, Snapshot, Worker

TESTS_FILE_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")


def _in(worker: Worker, snap: Snapshot | None, path: Path | None) -> tuple[str, LineIndex]:
    """The URI and line index of `path` (None: the analysed file)."""
    if snap is not None and (path is None or path == snap.analysis.path):
        return snap.uri, snap.index
    assert path is not None
    return convert.uri_of(path), worker.index_of_path(path)


def _target(worker: Worker, doc: Doc, position: lsp.Position) -> tuple[Any, Any, LineIndex, tuple[int, int]] | None:
    """(the document's Snapshot, or None and (the including suite's analysis, the tests file as it
    names it) for an AgentV tests file; the document's line index; the engine's position)."""
    from evalspec.ide.rename import suite_including

    snap = worker.snapshot(doc)
    if snap is not None:
        return snap, None, snap.index, snap.index.point(position)
    if doc.path is None or not doc.path.name.endswith(TESTS_FILE_SUFFIXES):
        return None
    found = suite_including(doc.path, worker.files)
    if found is None:
        return None
    index = worker.index_of_path(doc.path)
    return None, found, index, index.point(position)


def refused(message: str) -> lsp.ResponseError:
    """The rename is refused: RequestFailed, with the engine's message for the user."""
    return lsp.ResponseError(code=lsp.LSPErrorCodes.RequestFailed, message=message)


@answers(lsp.TEXT_DOCUMENT_PREPARE_RENAME, snapshot=False)
def prepare_rename(worker: Worker, doc: Doc, params: lsp.PrepareRenameParams) -> Any:
    from evalspec.findings import Span
    from evalspec.ide import rename as engine

    target = _target(worker, doc, params.position)
    if target is None:
        return None
    snap, suite, index, (line, col) = target
    got = (engine.prepare_rename(snap.analysis, line, col) if snap is not None
           else engine.prepare_rename_in_tests_file(suite[0], suite[1], index.lines, line, col))
    if isinstance(got, engine.Refusal):
        return refused(got.message)
    return convert.as_json(index.range_json(got)) if isinstance(got, Span) else None


@answers(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True), None, snapshot=False)
def rename(worker: Worker, doc: Doc, params: lsp.RenameParams) -> Any:
    from evalspec.ide import rename as engine

    target = _target(worker, doc, params.position)
    if target is None:
        return None
    snap, suite, index, (line, col) = target
    got = (engine.rename(snap.analysis, line, col, params.new_name) if snap is not None
           else engine.rename_in_tests_file(suite[0], suite[1], index.lines, line, col, params.new_name))
    if isinstance(got, engine.Refusal):
        return refused(got.message)
    if got is None:
        return None
    files = []
    for part in got:  # in a tests file every edit is the document's own
        uri, part_index = _in(worker, snap, part.path) if snap is not None else (doc.uri, index)
        files.append((uri, doc.version if uri == doc.uri else None, part_index, part.edits))
    # Versioned when the client takes it: refused by the editor if the text moved on.
    return convert.as_json(convert.workspace_edit_json(files, worker.context.client.document_changes))


@answers(lsp.TEXT_DOCUMENT_REFERENCES, empty=list, snapshot=False)
def references(worker: Worker, doc: Doc, params: lsp.ReferenceParams) -> bytes | None:
    from evalspec.ide.rename import including_suites
    from evalspec.ide.rename import references as engine_references

    snap = worker.snapshot(doc)
    if snap is not None:
        found = engine_references(snap.analysis, *snap.index.point(params.position), params.context.include_declaration)
    elif doc.path is not None and doc.path.name.endswith(TESTS_FILE_SUFFIXES):
        # A tests file is referenced by the suites that include it.
        found = [o for o in including_suites(doc.path) if o.path is not None]
    else:
        return None
    return convert.as_json([{"uri": uri, "range": index.range_json(o.span)}
                            for o in found for uri, index in [_in(worker, snap, o.path)]])


@answers(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, empty=list)
def highlight(snap: Snapshot, params: lsp.DocumentHighlightParams) -> bytes | None:
    from evalspec.ide.rename import highlights

    return convert.as_json([{"range": snap.index.range_json(o.span),
                             "kind": int(lsp.DocumentHighlightKind.Write if o.definition
                                         else lsp.DocumentHighlightKind.Read)}
                            for o in highlights(snap.analysis, *snap.index.point(params.position))])


JOBS = {"prepare_rename": prepare_rename, "rename": rename, "references": references, "highlight": highlight}
