"""textDocument/definition (a reference to where it is defined) and textDocument/documentLink (files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from evalspec.analysis import Analysis
from evalspec.ide.navigation import definition as engine_definition
from evalspec.ide.navigation import document_links

from .. import convert
from ..server import EvalspecServer, Snapshot, as_json


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_DEFINITION, empty=list)
    async def definition(server: EvalspecServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return []
        line, col = snap.index.point(params.position)
        out: list[lsp.Location] = []
        for target in await server.computed(snap.uri, engine_definition, snap.analysis, line, col):
            path = Path(target.path) if target.path is not None else None
            if path is None or path == snap.analysis.path:
                out.append(lsp.Location(uri=snap.uri, range=snap.index.range(target.span)))
            elif not any(target.span):
                # A file named by a reference: its start, which needs no reading of it. The file may lie
                # outside the project (a finding), and the server reads nothing there (SECURITY.md).
                start = lsp.Position(line=0, character=0)
                out.append(lsp.Location(uri=convert.uri_of(path), range=lsp.Range(start=start, end=start)))
            else:
                index = server.index_of_path(path)
                out.append(lsp.Location(uri=convert.uri_of(path), range=index.range(target.span)))
        return out

    @server.request(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, lsp.DocumentLinkOptions(resolve_provider=False), empty=list)
    async def links(server: EvalspecServer, params: lsp.DocumentLinkParams) -> Any:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return []
        # A walk over the whole tree (a second on a 4 MB suite): on a worker thread, once per analysis.
        key, build, args = link_answer(snap)
        return await server.memoised_in_thread(snap.uri, snap.analysis, key, build, *args)

    server.answers[lsp.TEXT_DOCUMENT_DOCUMENT_LINK] = lambda snap: [link_answer(snap)]


def link_answer(snap: Snapshot) -> tuple[str, Any, tuple[Any, ...]]:
    """The document links' memo key, builder and arguments (see EvalspecServer.prepare_answers)."""
    return f"lsp.links {snap.index.encoding}", as_json(links_json), (snap.analysis, snap.index)


def links_json(analysis: Analysis, index: convert.LineIndex) -> list[dict[str, Any]]:
    return [{"range": index.range_json(link.span), "target": convert.uri_of(link.target)}
            for link in document_links(analysis)]
