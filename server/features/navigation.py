"""textDocument/definition (a reference to where it is defined) and textDocument/documentLink (files),
built in the worker."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from .. import convert
from . import answers

if TYPE_CHECKING:
    from ..worker import Snapshot


@answers(lsp.TEXT_DOCUMENT_DEFINITION, empty=list)
def definition(snap: Snapshot, params: lsp.DefinitionParams) -> bytes | None:
    from evalspec.ide.navigation import definition as engine_definition

    from ..convert import as_json

    line, col = snap.index.point(params.position)
    out: list[lsp.Location] = []
    for target in engine_definition(snap.analysis, line, col):
        path = Path(target.path) if target.path is not None else None
        if path is None or path == snap.analysis.path:
            out.append(lsp.Location(uri=snap.uri, range=snap.index.range(target.span)))
        elif not any(target.span):
            # A file named by a reference: its start, which needs no reading of it. The file may lie
            # outside the project (a finding), and the server reads nothing there (SECURITY.md).
            start = lsp.Position(line=0, character=0)
            out.append(lsp.Location(uri=convert.uri_of(path), range=lsp.Range(start=start, end=start)))
        else:
            index = snap.worker.index_of_path(path)
            out.append(lsp.Location(uri=convert.uri_of(path), range=index.range(target.span)))
    return as_json(out)


@answers(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, lsp.DocumentLinkOptions(resolve_provider=False), list)
def links(snap: Snapshot, params: Any) -> bytes | None:
    """A walk over the whole tree (a second on a 4 MB suite): once per analysis."""
    from evalspec import jsonio
    from evalspec.ide.navigation import document_links

    return snap.analysis.memoised(f"lsp.links {snap.index.encoding}", lambda a: jsonio.dumps_bytes([
        {"range": snap.index.range_json(link.span), "target": convert.uri_of(link.target)}
        for link in document_links(a)]))


JOBS = {"definition": definition, "links": links}
