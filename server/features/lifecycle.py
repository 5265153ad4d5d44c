"""initialize, text synchronisation (incremental) and shutdown."""

from __future__ import annotations

import asyncio
import logging
import time

from lsprotocol import types as lsp

from evalspec.ide.completion import complete
from evalspec.ide.hover import hover
from evalspec.incremental import DocumentAnalyzer

from .. import loop_watch
from ..capabilities import ClientSupport
from ..freeing import free_later
from ..server import EvalspecServer, Settings
from ..text_documents import apply_changes

log = logging.getLogger(__name__)

# Small files of each format, analysed once at start-up so the first real file does not pay for
# importing the checkers and loading the registries (≈150 ms, which would be most of open→diagnostics).
_WARM_UP = (
    "# evalspec: weval\ntitle: warm-up\nmodels: [openai:gpt-4o-mini]\n---\n"
    "- id: w\n  prompt: Hi\n  should:\n    - $contains: hi\n    - is friendly\n",
    "# evalspec: agentv\ntests:\n  - id: w\n    input: Hi\n    criteria: Says hi\n",
)


def register(server: EvalspecServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        server.client = ClientSupport.of(params.capabilities)
        server.settings = Settings.of(params.initialization_options)
        server.documents.debounce_s = server.settings.debounce_s
        loop_watch.install(asyncio.get_running_loop())  # workers give way to requests from now on
        for hook in server.on_initialize:
            hook(params)
        warm_up()

    @server.notification(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(server: EvalspecServer, params: lsp.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        server.documents.open(doc.uri, doc.version, doc.text)

    @server.notification(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(server: EvalspecServer, params: lsp.DidChangeTextDocumentParams) -> None:
        # The server keeps the text itself (text_documents.py: lines as LSP counts them).
        uri = params.text_document.uri
        state = server.documents.get(uri)
        text = state.text if state is not None else ""
        text = apply_changes(text, params.content_changes, server.encoding)
        server.documents.change(uri, params.text_document.version, text)

    @server.notification(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(server: EvalspecServer, params: lsp.DidCloseTextDocumentParams) -> None:
        state = server.documents.close(params.text_document.uri)
        if state is not None:
            for hook in server.on_closed:
                hook(state)
            free_later(state)  # its analysis and caches, slice by slice (freeing.py)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.documents.shutdown()
        for runs in server.runs.values():  # runs stop; their journals keep every result received
            if runs.task is not None:
                runs.task.cancel()


def warm_up() -> None:
    started = time.perf_counter()
    for text in _WARM_UP:
        try:
            analysis = DocumentAnalyzer(None).analyze(text)
            # The IDE layer builds its registry-derived items on first use: pay for that here too.
            complete(analysis, 7, 6, snippets=True)
            hover(analysis, 7, 6)
        except Exception:  # a checker still being written must not stop the server from starting
            log.warning("warm-up failed", exc_info=True)
    log.info("engine warmed up in %.0f ms", (time.perf_counter() - started) * 1000)
