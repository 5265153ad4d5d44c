"""initialize, text synchronisation (incremental), configuration and shutdown. The engine workers
start when the client says `initialized` (after `initialize` is answered, which they do not slow)."""

from __future__ import annotations

import sys

from lsprotocol import types as lsp

from ..capabilities import ClientSupport
from ..server import EvalspecServer
from ..settings import Settings
from ..text_documents import apply_changes


def context(server: EvalspecServer) -> object:
    from ..wire import Context

    settings = server.settings
    return Context(server.client, server.encoding, settings.run.diagnostics, settings.run_costs, settings.docs_url)


def docs_url_changed(url: str | None) -> None:
    """Where diagnostics' codes link, in this process too (the workers get it in their Context)."""
    if url is not None:  # the default needs nothing loaded here
        from evalspec.finding_docs import set_docs_url

        set_docs_url(url)
    elif "evalspec.finding_docs" in sys.modules:
        sys.modules["evalspec.finding_docs"].set_docs_url(None)


def register(server: EvalspecServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        server.client = ClientSupport.of(params.capabilities)
        server.settings = Settings.of(params.initialization_options)
        docs_url_changed(server.settings.docs_url)
        server.documents.debounce_s = server.settings.debounce_s
        server.workers.count = server.settings.workers
        server.workers.timeout_s = server.settings.worker_timeout_s
        server.workers.memory_bytes = server.settings.worker_memory_mb << 20
        for hook in server.on_initialize:
            hook(params)

    @server.feature(lsp.INITIALIZED)
    async def initialized(params: lsp.InitializedParams) -> None:
        # `initialize` has been answered (the encoding is agreed): the workers load the engine now, in
        # their own processes, so that the first document opened finds one ready.
        start()
        for hook in server.on_initialized:
            await hook(params)

    def start() -> None:
        server.workers.context = context(server)
        if not server.workers.workers:
            server.workers.start()

    server.workers.before_start = start  # a client that never says `initialized`: started when first needed

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

    @server.notification(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(server: EvalspecServer, params: lsp.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            from . import inlay_hints

            changed = Settings.of(params.settings)
            server.settings.run = changed.run
            if inlay_hints.setting_given(params.settings):
                inlay_hints.change_setting(server, changed.inlay_hints)
            if inlay_hints.setting_given(params.settings, "runCosts"):  # the Run lenses' costs (code_lens.py)
                server.settings.run_costs = changed.run_costs
                if server.client.code_lens_refresh:
                    server.workspace_code_lens_refresh(None)
            if server.settings.docs_url != changed.docs_url:
                server.settings.docs_url = changed.docs_url
                docs_url_changed(changed.docs_url)
            server.workers.context = context(server)
            server.documents.check_all(server.runs)  # run notes follow the `diagnostics` setting

    @server.feature(lsp.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.documents.shutdown()
        for runs in server.runs.values():  # runs stop; their journals keep every result received
            if runs.task is not None:
                runs.task.cancel()
        server.workers.shutdown()
