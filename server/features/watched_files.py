"""Files an open eval file reads (an AgentV suite's tests files, judge prompts, Weval model
collections) changing: didSave, and workspace/didChangeWatchedFiles for changes made outside the
editor. The documents that read a changed file are checked again (`Documents.files_changed`); edits
of an open referenced file are handled by `Documents.change` itself.

Clients that allow it get a file watcher registered at `initialized` for the kinds of files eval files
refer to; others still send didSave for what they save.
"""

from __future__ import annotations

import logging
from pathlib import Path

from lsprotocol import types as lsp

from ..convert import path_of
from ..server import EvalspecServer

log = logging.getLogger(__name__)

# What an eval file can refer to: tests files, prompt templates, model collections, targets.
WATCHED = "**/*.{yaml,yml,jsonl,csv,json,md,markdown,txt,prompt}"


def register(server: EvalspecServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        server.documents.files_changed([path_of(params.text_document.uri)], besides=params.text_document.uri)
        _tell(server, [path_of(params.text_document.uri)])

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: lsp.DidChangeWatchedFilesParams) -> None:
        server.documents.files_changed([path_of(change.uri) for change in params.changes])
        _tell(server, [path_of(change.uri) for change in params.changes])

    async def initialized(params: lsp.InitializedParams) -> None:
        if not server.client.watch_files:
            return
        registration = lsp.Registration(
            id="evalspec-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                watchers=[lsp.FileSystemWatcher(glob_pattern=WATCHED)]))
        try:
            await server.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
        except Exception:  # the client declined: didSave still covers what is saved in the editor
            log.info("the client did not register the file watcher", exc_info=True)

    server.on_initialized.append(initialized)


def _tell(server: EvalspecServer, paths: list[Path | None]) -> None:
    known = [p for p in paths if p is not None]
    for hook in server.on_files_changed:
        hook(known)
