"""The LSP process's server object: settings, what the client supports, the open documents, the
engine workers, and handlers that never take the server down.

A request about a document is answered with what its worker built (`ask`), or past the request budget
"still checking, ask again" (`still_checking`: an ordinary answer no editor shows as an error; once the
document is checked the client is asked to refresh its lenses, hints, tokens and folds), or
ContentModified for a version the client has left. A handler that fails is logged and answered empty.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.lsp.server import LanguageServer

from evalspec.ide.wire import Runs

from .capabilities import ClientSupport
from .convert import path_of
from .documents import Document, Documents
from .engine_workers import ERROR, GONE, LATE, OK, STALE, EngineWorkers, Job, worker_command
from .protocol import EvalspecProtocol, JsonReady
from .settings import Settings

if TYPE_CHECKING:
    from .features.run import DocumentRuns

log = logging.getLogger(__name__)

try:
    __version__ = version("evalspec-lsp")  # the distribution's name
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0"

P = TypeVar("P")
R = TypeVar("R")
Handler = Callable[["EvalspecServer", P], Awaitable[R]]
SERVER_CANCELLED = -32802  # "still checking", to a client that takes it as a cancellation
CONTENT_MODIFIED = -32801  # "still checking" to other clients; a version the client has left
LATE_REFRESH_S = 0.5  # at most one round of refresh requests this often


class EvalspecServer(LanguageServer):
    protocol: EvalspecProtocol

    def __init__(self, worker: list[str] | None = None) -> None:
        super().__init__("evalspec-lsp", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=EvalspecProtocol)
        self.client = ClientSupport()
        self.settings = Settings()
        self.workers = EngineWorkers(worker or worker_command("WARNING", None), 1,
                                     texts=lambda: self.documents.texts(), on_restart=self._worker_restarted)
        self.documents = Documents(self.workers, self._checked, self.board, on_error=lambda doc, detail: self.report(
            detail[0] or f"checking {doc.uri} (version {doc.version})", detail[1]))
        self.on_initialize: list[Callable[[lsp.InitializeParams], None]] = []
        self.on_checked: list[Callable[[Document], None]] = []  # the current version was checked
        self.on_closed: list[Callable[[Document], None]] = []
        # Files saved or changed on disk (features/lifecycle.py): features/workspace_diagnostics.py scans again.
        self.on_files_changed: list[Callable[[list[Path]], None]] = []
        self.runs: dict[str, DocumentRuns] = {}  # uri -> its run lenses' state (features/run.py)
        self._suspect: tuple[str, int] | None = None  # the text a worker last stopped on
        self._late: set[str] = set()  # documents answered "still checking": refreshed once checked
        self._late_task: asyncio.Future[None] | None = None

    @property
    def encoding(self) -> str:
        try:
            return str(self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)
        except RuntimeError:  # before initialize
            return lsp.PositionEncodingKind.Utf16

    def board(self, uri: str) -> tuple[int, Any] | None:
        """The document's runs as the worker needs them: (generation, wire.Runs)."""
        state = self.runs.get(uri)
        if state is None:
            return None
        return state.generation, Runs(state.board, state.running, state.planning)

    def folders(self) -> list[Path]:
        """The workspace folders (the root path when the client named none); none before initialize."""
        try:
            found = [path_of(f.uri) for f in self.workspace.folders.values()]
            if not found and self.workspace.root_path:
                found = [Path(self.workspace.root_path)]
        except RuntimeError:
            return []
        return [f for f in found if f is not None]

    def publish(self, uri: str, diagnostics: bytes, version: int | None = None) -> None:
        """textDocument/publishDiagnostics, the diagnostics given as a JSON list."""
        head = b'{"uri":' + json.dumps(uri).encode() + (b',"version":%d' % version if version is not None else b"")
        self.protocol.send_json(b'{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":' + head
                             + b',"diagnostics":' + diagnostics + b"}}")

    # --- asking the workers -------------------------------------------------------------------------

    def remaining_budget(self) -> float:
        """What is left of the request budget for the request being handled (all of it outside one)."""
        started = getattr(asyncio.current_task(), "started", None)  # set by `request`
        budget = self.settings.request_budget_s
        return max(0.05, budget - (time.perf_counter() - started)) if started is not None else budget

    async def ask(self, name: str, uri: str, *args: Any, what: str = "") -> Any:
        """The worker's answer to job `name` about the current version of open document `uri`; the
        "still checking" or "content modified" error (as an answer) when it has none within the
        request budget; None when the document is not open, or not an eval file."""
        doc = self.documents.get(uri)
        if doc is None:
            return None
        if doc.stopped_worker == doc.version:
            return None  # its check stopped a worker: nothing is computed on this text
        status, value = await self.workers.call(name, uri, doc.version, *args, board=self.board(uri),
                                                budget=self.remaining_budget())
        if status == OK:
            return JsonReady(value) if isinstance(value, bytes) else value
        if status == LATE:
            self._late.add(uri)
            if self._late_task is None or self._late_task.done():
                self._late_task = asyncio.ensure_future(self._refresh_once_checked())
            return self.still_checking(uri)
        if status == STALE:
            return self.error(CONTENT_MODIFIED, "evalspec: the document changed meanwhile")
        if status == ERROR:
            self.report(value[0] or f"{what or name} on {uri}", value[1])
        return None if status in (GONE, ERROR) else value

    def still_checking(self, uri: str, data: Any = None) -> lsp.ResponseError:
        """"Still checking, ask again", in the code the client leaves unshown: ServerCancelled where it
        takes that as a cancellation (vscode-languageclient), else ContentModified, the one code clients
        are told not to show (Neovim 0.7's handlers show any other as an error)."""
        code = SERVER_CANCELLED if self.client.server_cancel else CONTENT_MODIFIED
        return self.error(code, f"evalspec is still checking {uri.rsplit('/', 1)[-1]}; ask again in a moment", data)

    async def _refresh_once_checked(self) -> None:
        """The client asked for a view of a document (lenses, hints, tokens) before it was ready and got
        "still checking": once it is checked, ask the client for them again."""
        await asyncio.sleep(LATE_REFRESH_S)
        while self._late:
            await self.documents.settled(self._late.pop())
        try:
            self.refresh_views()
        except Exception:
            self.report("asking the client to refresh", traceback.format_exc())

    def refresh_views(self) -> None:
        """Ask the client for its code lenses, inlay hints, semantic tokens and folding ranges again."""
        client = self.client
        for able, refresh in ((client.code_lens_refresh, self.workspace_code_lens_refresh),
                              (client.inlay_hint_refresh, self.workspace_inlay_hint_refresh),
                              (client.semantic_tokens_refresh, self.workspace_semantic_tokens_refresh),
                              (client.folding_range_refresh, self.workspace_folding_range_refresh)):
            if able:
                refresh(None)

    @staticmethod
    def error(code: int, message: str, data: Any = None) -> lsp.ResponseError:
        return lsp.ResponseError(code=code, message=message, data=data)

    # --- registration -------------------------------------------------------------------------------

    def request(self, method: str, options: Any = None, *,
                empty: Callable[[], Any] | None) -> Callable[[Handler[P, R]], Handler[P, R]]:
        """Register an async request handler that cannot take the server down: a failure is logged
        and answered with `empty()`, or an internal error when `empty` is None. A None answer from the
        handler is `empty()` too."""

        def register(fn: Handler[P, R]) -> Handler[P, R]:
            async def handle(params):  # no annotation: pygls must not inject the server again
                started = asyncio.current_task().started = time.perf_counter()  # remaining_budget reads it
                try:
                    answer = await fn(self, params)
                    return empty() if answer is None and empty is not None else answer
                except (asyncio.CancelledError, JsonRpcException):
                    raise
                except Exception as exc:
                    self.report(method, traceback.format_exc())
                    if empty is None:
                        return self.error(int(lsp.ErrorCodes.InternalError), f"evalspec: {method} failed: {exc}")
                    return empty()
                finally:
                    log.info("%s %.1f ms", method, (time.perf_counter() - started) * 1000)

            handle.__name__ = fn.__name__
            self.feature(method, options)(handle)
            return fn

        return register

    def forward(self, method: str, options: Any, empty: Callable[[], Any] | None, job: str) -> None:
        """Register `method` as answered by the worker's job of that name, given the request's params
        (features.answers)."""

        async def forwarded(server: EvalspecServer, params: Any) -> Any:
            return await server.ask(job, params.text_document.uri, params, what=method)

        forwarded.__name__ = job
        self.request(method, options, empty=empty)(forwarded)

    def notification(self, method: str) -> Callable[[Callable[[EvalspecServer, P], None]],
                                                      Callable[[EvalspecServer, P], None]]:
        """Register a notification handler (must be quick) that logs failures."""

        def register(fn: Callable[[EvalspecServer, P], None]) -> Callable[[EvalspecServer, P], None]:
            def handle(params):
                started = time.perf_counter()
                try:
                    fn(self, params)
                except Exception:
                    self.report(method, traceback.format_exc())
                log.info("%s %.1f ms", method, (time.perf_counter() - started) * 1000)

            handle.__name__ = fn.__name__
            self.feature(method)(handle)
            return fn

        return register

    # --- what the workers say -----------------------------------------------------------------------

    def _checked(self, doc: Document) -> None:
        for listener in self.on_checked:
            listener(doc)

    def _worker_restarted(self, why: str, culprit: Job | None) -> None:
        """A worker was replaced: the documents are checked again (and their diagnostics restored). A
        text that was being worked on when a worker stopped a second time is not, until it changes."""
        if why == "memory":
            return
        name = ""
        if culprit is not None and culprit.uri is not None:
            doc = self.documents.get(culprit.uri)
            if doc is not None and culprit.version == doc.version:
                if self._suspect == (doc.uri, doc.version):
                    doc.stopped_worker = doc.version
                    name = culprit.uri.rsplit("/", 1)[-1]
                self._suspect = (doc.uri, doc.version)
        message = (f"evalspec: checking {name} stopped the checker twice ({why}); it was restarted, and {name} "
                   "will be checked again after its next change" if name else
                   f"evalspec: the checker stopped ({why}) and was restarted")
        self.tell(lsp.MessageType.Warning, message)
        self.documents.check_all()

    # --- telling the client -------------------------------------------------------------------------

    def report(self, what: str, detail: str) -> None:
        log.error("%s failed: %s", what, detail)
        self.log_to_client(lsp.MessageType.Error, f"evalspec: {what} failed:\n{detail}")

    def report_failure(self, what: str, exc: BaseException) -> None:
        self.report(what, "".join(traceback.format_exception(exc)).rstrip())

    def tell(self, kind: lsp.MessageType, message: str) -> None:
        """A message in the client's log and on screen."""
        self.log_to_client(kind, message)
        try:
            self.window_show_message(lsp.ShowMessageParams(type=kind, message=message))
        except Exception:
            log.debug("could not show a message", exc_info=True)

    def log_to_client(self, kind: lsp.MessageType, message: str) -> None:
        try:
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))
        except Exception:  # no connection yet, or it is gone: the local log has it
            log.debug("could not send a log message", exc_info=True)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would pop up a window/showMessage; a log line is enough and never nags the user.
        if isinstance(error, RecursionError):
            self.protocol.answer_unreadable()
            return
        if source is FeatureRequestError:
            return
        self.report_failure(getattr(source, "__name__", "server"), error)
