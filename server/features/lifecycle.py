"""initialize, text synchronisation (incremental), saved and watched files, configuration, shutdown,
and `evalspec/workers` (what the server holds, for tests and benchmarks).

The first engine worker starts once `initialize` is answered, given the settings and the agreed
encoding; the others once it has loaded. The documents that read a file that changed (saved, or
changed on disk: a file watcher is registered when the client allows it) are checked again.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from lsprotocol import types as lsp

from ..capabilities import ClientSupport
from ..convert import path_of
from ..documents import apply_changes
from ..engine_workers import OK
from ..server import EvalspecServer
from ..settings import Settings, options_of

log = logging.getLogger(__name__)
# What an eval file can refer to: tests files, prompt templates, model collections, targets.
WATCHED = "**/*.{yaml,yml,jsonl,csv,json,md,markdown,txt,prompt}"


def context(server: EvalspecServer) -> object:
    from evalspec.ide.wire import Context

    return Context(server.client, server.encoding, server.settings.run.diagnostics, server.settings.docs_url)


def register(server: EvalspecServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        server.client = ClientSupport.of(params.capabilities)
        server.settings = Settings.of(params.initialization_options)
        server.documents.debounce_s = server.settings.debounce_s
        server.workers.count = server.settings.workers
        server.workers.timeout_s = server.settings.worker_timeout_s
        server.workers.memory_bytes = server.settings.worker_memory_mb << 20
        for hook in server.on_initialize:
            hook(params)
        # The encoding is agreed: the first worker starts once this answer is sent and loads the engine
        # while the client opens its files.
        server.workers.context = context(server)
        server.workers.start()

    @server.feature(lsp.INITIALIZED)
    async def initialized(params: lsp.InitializedParams) -> None:
        if server.client.watch_files:
            registration = lsp.Registration(
                id="evalspec-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[lsp.FileSystemWatcher(glob_pattern=WATCHED)]))
            try:
                await server.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
            except Exception:  # the client declined: didSave still covers what is saved in the editor
                log.info("the client did not register the file watcher", exc_info=True)

    @server.notification(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(server: EvalspecServer, params: lsp.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        server.documents.open(doc.uri, doc.version, doc.text)

    @server.notification(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(server: EvalspecServer, params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        doc = server.documents.get(uri)
        text = apply_changes(doc.text if doc is not None else "", params.content_changes, server.encoding)
        server.documents.change(uri, params.text_document.version, text)

    @server.notification(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(server: EvalspecServer, params: lsp.DidCloseTextDocumentParams) -> None:
        doc = server.documents.close(params.text_document.uri)
        if doc is not None:
            for hook in server.on_closed:
                hook(doc)

    def files_changed(uris: list[str], besides: str | None = None) -> None:
        paths = [path_of(uri) for uri in uris]
        server.documents.files_changed(paths, besides=besides)
        for hook in server.on_files_changed:
            hook([p for p in paths if p is not None])

    @server.notification(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(server: EvalspecServer, params: lsp.DidSaveTextDocumentParams) -> None:
        files_changed([params.text_document.uri], besides=params.text_document.uri)

    @server.notification(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(server: EvalspecServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        files_changed([change.uri for change in params.changes])

    @server.notification(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(server: EvalspecServer, params: lsp.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            settings, changed, given = server.settings, Settings.of(params.settings), options_of(params.settings)
            settings.run = changed.run
            if isinstance(given.get("inlayHints"), bool) and settings.inlay_hints != changed.inlay_hints:
                settings.inlay_hints = changed.inlay_hints
                if server.client.inlay_hint_refresh:
                    server.workspace_inlay_hint_refresh(None)
            if isinstance(given.get("runCosts"), bool):  # the Run lenses' costs (code_lens.py)
                settings.run_costs = changed.run_costs
                if server.client.code_lens_refresh:
                    server.workspace_code_lens_refresh(None)
            settings.docs_url = changed.docs_url
            server.workers.context = context(server)
            server.documents.check_all(server.runs)  # run notes follow the `diagnostics` setting

    @server.feature(lsp.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.documents.shutdown()
        for runs in server.runs.values():  # runs stop; their journals keep every result received
            if runs.task is not None:
                runs.task.cancel()
        server.workers.shutdown()

    @server.request("evalspec/workers", empty=None)
    async def worker_state(server: EvalspecServer, params: Any) -> dict[str, Any]:
        """{"runStates", "runProcesses": [{"uri", "pid"}], "modules": the engine's loaded here, "handlers":
        kept by pygls, "jobs", "workers": [{"pid", "jobs", "rss", "assigned", "documents", "analyses"}],
        "spare": {"pid", "analysed"}}."""
        answer = server.workers.state()
        for slot, worker in enumerate(answer["workers"]):
            status, value = await server.workers.call("state", None, None, slot=slot)
            if status == OK:
                worker.update(value)
        return {"runStates": len(server.runs),
                "runProcesses": [{"uri": uri, "pid": r.process.pid} for uri, r in server.runs.items()
                                 if r.process is not None],
                "modules": sorted(m for m in sys.modules if m.split(".")[0] == "evalspec"),
                "handlers": len(server.protocol._request_futures),
                "jobs": sum(w["jobs"] for w in answer["workers"]), **answer}
