"""initialize, text synchronisation (incremental), configuration and shutdown. The engine workers
start right after `initialize` is answered."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

from ..capabilities import ClientSupport
from ..server import EvalspecServer
from ..settings import Settings
from ..text_documents import apply_changes


def context(server: EvalspecServer) -> object:
    from ..wire import Context

    return Context(server.client, server.encoding, server.settings.run.diagnostics)


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
        # After pygls has answered (the encoding is agreed then); the workers load the engine meanwhile.
        asyncio.get_running_loop().call_soon(start)

    def start() -> None:
        server.workers.context = context(server)
        server.workers.start()

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
            server.settings.run = Settings.of(params.settings).run
            server.workers.context = context(server)
            server.documents.check_all(server.runs)  # run notes follow the `diagnostics` setting

    @server.feature(lsp.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.documents.shutdown()
        for runs in server.runs.values():  # runs stop; their journals keep every result received
            if runs.task is not None:
                runs.task.cancel()
        server.workers.shutdown()
