"""The language server object: documents, what the client supports, and guarded handler registration."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import FeatureRequestError, JsonRpcException, JsonRpcInternalError
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer

from evalspec.analysis import Analysis
from evalspec.detect import FileKind
from evalspec.file_source import MAX_READ, read_regular_bytes
from evalspec.finding_docs import set_docs_url
from evalspec.line_breaks import as_read
from evalspec.source import gc_paused

from . import loop_watch, workers
from .bare_cr import BARE_CRS, bare_crs_of
from .capabilities import ClientSupport
from .convert import LineIndex
from .documents import DEFAULT_DEBOUNCE_S, Documents, DocumentState, in_thread
from .framing import ByteSource
from .protocol import EvalspecProtocol, JsonReady
from .run_state import DocumentRuns
from .stdio import arrived, is_pipe, pipe_reader, read_messages

log = logging.getLogger(__name__)

try:
    __version__ = version("evalspec-lsp")  # the distribution's name
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0"

P = TypeVar("P")
R = TypeVar("R")
Handler = Callable[["EvalspecServer", P], Awaitable[R]]


@dataclass
class RunSettings:
    """How the run lenses run (`run` in the settings). API keys are never settings: the server reads
    them from its environment, as the CLI does."""

    models: list[str] = field(default_factory=list)  # replaces the file's models / targets, e.g. ["echo"]
    judges: list[str] = field(default_factory=list)  # replaces the file's judges
    output: str = "evalspec-results"  # relative to the workspace folder of the file
    # On by default in the editor: re-running a prompt after editing its rubric re-scores the same
    # answer instead of paying for a new one. Errors are never cached.
    cache: bool = True
    concurrency: int | None = None
    eval_methods: str | None = None  # "llm-coverage" | "embedding" | "all" | "none"
    timeout_s: float | None = None
    diagnostics: bool = True  # failed points as Information diagnostics at their lines
    # Batch mode (`--batch-model`): the model ids / target names (globs) whose calls go through their
    # provider's batch API; ["*"] for every model that has one (`--batch`).
    batch_models: list[str] = field(default_factory=list)
    max_cost: float | None = None  # `--max-cost`: US dollars a run from the editor may spend
    max_wait_s: float | None = None  # `--max-wait`: seconds of back-off per call before a provider is given up

    @classmethod
    def of(cls, options: Any) -> RunSettings:
        out = cls()
        if not isinstance(options, dict):
            return out
        for key, attr in (("models", "models"), ("judges", "judges"), ("batchModels", "batch_models")):
            value = options.get(key)
            if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
                setattr(out, attr, [v.strip() for v in value])
        if isinstance(options.get("output"), str) and options["output"].strip():
            out.output = options["output"].strip()
        if isinstance(options.get("cache"), bool):
            out.cache = options["cache"]
        n = options.get("concurrency")
        if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 1000:
            out.concurrency = n
        if isinstance(options.get("evalMethods"), str):
            out.eval_methods = options["evalMethods"]
        if isinstance(options.get("diagnostics"), bool):
            out.diagnostics = options["diagnostics"]
        t = options.get("timeoutSeconds")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t <= 3600:
            out.timeout_s = float(t)
        cap = options.get("maxCost")
        if isinstance(cap, (int, float)) and not isinstance(cap, bool) and 0 <= cap < float("inf"):
            out.max_cost = float(cap)
        wait = options.get("maxWaitSeconds")
        if isinstance(wait, (int, float)) and not isinstance(wait, bool) and 0 <= wait <= 86_400:
            out.max_wait_s = float(wait)
        return out


# Requests answer within this (a result, or an error while the analysis they need is still running).
# Well under the 1 s promise: what is left covers writing a large answer and a loaded machine.
REQUEST_BUDGET_S = 0.4
# The promise, less a margin; on a loaded machine the budget shrinks to keep it (remaining_budget).
ANSWER_WITHIN_S = 0.85
MIN_BUDGET_S = 0.05
# When the request being handled arrived (set per handler task): its analysis wait and the building of a
# large answer share one budget.
_request_started: contextvars.ContextVar[float | None] = contextvars.ContextVar("evalspec_request_started",
                                                                                default=None)


@dataclass
class WorkerTimes:
    """Where a request's time on worker threads went (logged with it at INFO): waiting for a worker to
    start its job, the job, and its result waiting for the event loop. On a loaded machine each hand-off
    waits for the interpreter lock and a CPU; the log says which wait a slow answer spent its time in."""

    to_start: float = 0.0
    running: float = 0.0
    back: float = 0.0

    def __str__(self) -> str:
        return (f"workers: {self.to_start * 1000:.1f} ms to start, {self.running * 1000:.1f} ms running, "
                f"{self.back * 1000:.1f} ms back to the loop")


_worker_times: contextvars.ContextVar[WorkerTimes | None] = contextvars.ContextVar("evalspec_worker_times",
                                                                                   default=None)


class StillAnalysing(JsonRpcException):
    """LSP RequestFailed: the analysis a request needs has not finished within the request budget."""

    CODE = -32803

    def __init__(self, uri: str) -> None:
        name = uri.rsplit("/", 1)[-1]
        super().__init__(f"evalspec is still checking {name}; ask again in a moment")


@dataclass
class Settings:
    """`initializationOptions` or `workspace/didChangeConfiguration` settings, optionally under an
    `evalspec` key; unknown keys are ignored so editors can pass extra configuration."""

    debounce_s: float = DEFAULT_DEBOUNCE_S
    request_budget_s: float = REQUEST_BUDGET_S
    run: RunSettings = field(default_factory=RunSettings)
    inlay_hints: bool = True  # `inlayHints: false` turns textDocument/inlayHint off (features/inlay_hints.py)
    run_costs: bool = True  # `runCosts: false`: the Run lenses say nothing of cost (features/code_lens.py)

    @classmethod
    def of(cls, options: Any) -> Settings:
        if not isinstance(options, dict):
            return cls()
        if isinstance(options.get("evalspec"), dict):  # editors that namespace their options
            options = options["evalspec"]
        settings = cls()
        debounce = options.get("debounceMs")
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and 0 <= debounce <= 5000:
            settings.debounce_s = debounce / 1000
        budget = options.get("requestBudgetMs")  # for slow machines (CI); the default keeps the 1 s promise
        if isinstance(budget, (int, float)) and not isinstance(budget, bool) and 50 <= budget <= 600_000:
            settings.request_budget_s = budget / 1000
        settings.run = RunSettings.of(options.get("run"))
        if isinstance(options.get("inlayHints"), bool):
            settings.inlay_hints = options["inlayHints"]
        if isinstance(options.get("runCosts"), bool):
            settings.run_costs = options["runCosts"]
        set_docs_url(options.get("docsUrl"))  # where diagnostics' codes link (finding_docs.doc_url)
        return settings


@dataclass(frozen=True)
class Snapshot:
    """One analysed version of an eval file, with the positions of its text."""

    uri: str
    version: int
    analysis: Analysis
    index: LineIndex


@dataclass(eq=False)
class SharedComputation:
    """One `computed` computation and how many requests wait for it."""

    future: asyncio.Future[Any]
    stop: workers.Stop
    waiting: int = 0


def as_json(build: Callable[..., Any]) -> Callable[..., JsonReady]:
    """`build`, its result encoded (for answers kept as JSON in a memo)."""

    def encoded(*args: Any) -> JsonReady:
        return JsonReady.of(build(*args))

    return encoded


class EvalspecServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("evalspec-lsp", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=EvalspecProtocol)
        self.client = ClientSupport()
        self.settings = Settings()
        self.documents = Documents(self._analysed, self._analysis_failed, prepare=self._prepare)
        # Called on the analysis thread with each new analysis (see Documents.prepare).
        self.on_prepare: list[Callable[[DocumentState, Analysis], None]] = []
        # Hooks for features that follow the document lifecycle (diagnostics, mostly).
        self.on_initialize: list[Callable[[lsp.InitializeParams], None]] = []
        self.on_analysed: list[Callable[[DocumentState], None]] = []  # the current version is analysed
        self.on_closed: list[Callable[[DocumentState], None]] = []
        # Files changed on disk (features/watched_files.py): features/workspace_diagnostics.py scans again.
        self.on_files_changed: list[Callable[[list[Path]], None]] = []
        self.runs: dict[str, DocumentRuns] = {}  # uri -> its run lenses' state (features/run.py)
        self.on_runs_changed: list[Callable[[str], None]] = []  # a document's run results changed
        # What to build ahead after each fresh analysis (see prepare_answers): per request method, the
        # memo entries of its large answers, as (key, function, arguments); built only for the methods
        # this client has asked for (`asked`), so none is built for an editor that never shows it.
        self.answers: dict[str, Callable[[Snapshot], list[tuple[str, Callable[..., Any], tuple[Any, ...]]]]] = {}
        self.asked: set[str] = set()
        self.in_flight: set[asyncio.Task[Any]] = set()  # requests being handled (see answer_pending)
        self.computing: dict[tuple[Any, ...], SharedComputation] = {}  # see computed

    # --- transport ----------------------------------------------------------------------------------

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve over stdin/stdout, messages read by `stdio.read_messages`; a piped stdin (an editor's)
        on the event loop itself, anything else through pygls's thread-pool reader."""
        stdin = stdin or sys.stdin.buffer
        stop = self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def serve() -> None:
            reader: ByteSource = await pipe_reader(stdin) if is_pipe(stdin) else \
                StdinAsyncReader(stdin, self.thread_pool)
            protocol = self.protocol
            assert isinstance(protocol, EvalspecProtocol)
            await read_messages(stop, reader, protocol, self.report_server_error, self.answer_pending,
                                protocol.answer_unreadable)

        try:
            asyncio.run(serve())
        except BrokenPipeError:
            log.error("Connection to the client is lost! Shutting down the server.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    async def answer_pending(self) -> None:
        """Before `shutdown` and `exit`: let the requests being handled answer (each within its budget).
        A client may send them right behind a request; read on the loop, they all arrive at once, and
        pygls would cancel the request or exit before it answered."""
        pending = [t for t in self.in_flight if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=self.settings.request_budget_s + 0.5)

    # --- positions ----------------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        try:
            return str(self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)
        except RuntimeError:  # before initialize
            return lsp.PositionEncodingKind.Utf16

    def index(self, analysis: Analysis) -> LineIndex:
        """Positions in the text `analysis` was computed from (its spans count in those lines)."""
        return LineIndex(analysis.parsed.lines, self.encoding, analysis.memoised(BARE_CRS, bare_crs_of))

    def index_of_path(self, path: Path) -> LineIndex:
        """Positions in another file: its open text if the editor has it, else the file on disk."""
        state = self.documents.by_path(path)
        if state is not None:
            return LineIndex.of_text(as_read(state.text, path), self.encoding)
        try:
            data = read_regular_bytes(path, MAX_READ)  # a FIFO would block the server for good
            if data is None:
                raise OSError("not a regular file")
            text = data.decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return LineIndex([], self.encoding)  # unreadable: columns pass through unchanged
        # The engine read its bare CRs as line breaks (line_breaks.py), a dataset's as they are: LineIndex
        # finds those and converts its positions to the client's lines.
        return LineIndex.of_text(as_read(text, path), self.encoding)

    # --- analyses -----------------------------------------------------------------------------------

    async def snapshot(self, uri: str) -> Snapshot | None:
        """The current analysis if the document is an eval file; None for anything else, so features
        stay silent on unrelated YAML and JSON."""
        current = await self.within_budget(self.documents.current(uri), uri)
        if current is None or current[1].kind is FileKind.NONE:
            return None
        version, analysis = current
        return Snapshot(uri, version, analysis, self.index(analysis))

    async def within_budget(self, waiting: Awaitable[R], uri: str) -> R:
        """`waiting` (an analysis), or an error once the request budget is spent: every request is
        answered within about a second, even while a large file is still being checked. The analysis
        goes on; the next request finds it done."""
        try:
            return await asyncio.wait_for(waiting, self.remaining_budget())
        except TimeoutError:
            raise StillAnalysing(uri) from None

    def remaining_budget(self) -> float:
        """What is left of the request budget for the request being handled (all of it outside one)."""
        budget = self.settings.request_budget_s
        watch = loop_watch.installed()
        if watch is not None and budget <= ANSWER_WITHIN_S:  # a longer budget was asked for (slow CI): kept
            # The loop was late by `lag` lately: a request may have waited about as long before it was
            # read, and its answer will wait again after the deadline fires.
            budget = min(budget, ANSWER_WITHIN_S - 2 * watch.lag.recent())
        started = _request_started.get()
        if started is None:
            return max(MIN_BUDGET_S, budget)
        # From when the request began to arrive: reading and decoding a large one (a code action
        # with thousands of diagnostics) on a loaded machine takes a good part of the budget.
        came = arrived.get()
        if came is not None and came < started:
            started = came
        return max(MIN_BUDGET_S, budget - (time.perf_counter() - started))

    async def computed(self, uri: str, fn: Callable[..., R], *args: Any) -> R:
        """`fn(*args)` on a worker thread within the request budget (then "still checking"): a request
        about one position of a pathological file can neither hold the event loop, and with it every
        other document, nor go past the budget.

        Requests for the same `fn(*args)` while it runs share it (an editor asks for a hover on every
        move of the mouse: each one started its own, and 200 of them on a slow spot ran 200 threads);
        once none waits for it any more it stops at its next yield point (`workers.Stop`)."""
        # An argument that is not a plain value is keyed by its id, which stays its own while the
        # computation holds it (and the entry goes when the computation ends or stops).
        key = (fn, *(a if isinstance(a, (str, int, float, type(None))) else ("id", id(a)) for a in args))
        shared = self.computing.get(key)
        if shared is None:
            stop = workers.Stop()
            shared = self.computing[key] = SharedComputation(self.in_thread(fn, *args, stop=stop), stop)

            def forget(_: asyncio.Future[Any], shared: SharedComputation = shared) -> None:
                if self.computing.get(key) is shared:
                    del self.computing[key]

            shared.future.add_done_callback(forget)
        shared.waiting += 1
        try:
            return await self.within_budget(asyncio.shield(shared.future), uri)
        finally:
            shared.waiting -= 1
            if not shared.waiting and not shared.future.done():
                shared.stop.requested = True
                if self.computing.get(key) is shared:  # the next request starts afresh
                    del self.computing[key]

    def in_thread(self, fn: Callable[..., R], *args: Any, stop: workers.Stop | None = None) -> asyncio.Future[R]:
        """`fn(*args)` on a worker thread (with the cyclic collector held off), for work that grows with
        the file; `fn` must only read what does not change."""

        times = _worker_times.get()
        if times is None:
            def run() -> R:
                with gc_paused():
                    return fn(*args)

            return in_thread(run, foreground=True, stop=stop)
        submitted = time.perf_counter()
        ended = submitted

        def timed() -> R:
            nonlocal ended
            began = time.perf_counter()
            try:
                with gc_paused():
                    return fn(*args)
            finally:
                ended = time.perf_counter()
                times.to_start += began - submitted
                times.running += ended - began

        def back(_: asyncio.Future[R]) -> None:
            times.back += max(0.0, time.perf_counter() - ended)

        future = in_thread(timed, foreground=True, stop=stop)
        future.add_done_callback(back)
        return future

    async def memoised_in_thread(self, uri: str, analysis: Analysis, key: str, fn: Callable[..., R],
                                 *args: Any) -> R:
        """`in_thread(fn, *args)` once per analysis (kept in its memo under `key`): editors ask for the
        outline and folding of a file again and again, and several requests share one computation.
        A request waits for it within the request budget, then answers "still checking" while the
        computation goes on for the next one."""
        entry = self.memoised(analysis, key, fn, *args)
        try:
            if entry.done():
                return entry.result()
            return await self.within_budget(asyncio.shield(entry), uri)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not entry.cancelled() or (task is not None and task.cancelling()):
                raise  # this request was cancelled ($/cancelRequest)
        # The computation prepare_answers started was dropped (a newer analysis replaced this one while
        # it waited): the request computes its own. Passing the cancellation on answered it
        # RequestCancelled, which Neovim 0.7 asserts against and then never asks for lenses again.
        if analysis.memo.get(key) is entry:
            analysis.memo.pop(key, None)
        return await self.within_budget(asyncio.shield(self.memoised(analysis, key, fn, *args)), uri)

    def memoised(self, analysis: Analysis, key: str, fn: Callable[..., R], *args: Any) -> asyncio.Future[R]:
        """The one computation of `fn(*args)` on a worker thread for `analysis` (under `key` in its memo),
        started now unless it was already (by a request, or by `prepare_answers`)."""
        entry = analysis.memo.get(key)
        if isinstance(entry, asyncio.Future):
            return entry
        entry = self.in_thread(fn, *args)
        self._remember(analysis, key, entry)
        return entry

    @staticmethod
    def _remember(analysis: Analysis, key: str, entry: asyncio.Future[Any]) -> None:
        analysis.memo[key] = entry

        def forget_failure(done: asyncio.Future[Any]) -> None:
            failed = done.cancelled() or done.exception() is not None
            if failed and analysis.memo.get(key) is done:
                analysis.memo.pop(key, None)  # the next request tries again

        entry.add_done_callback(forget_failure)

    def prepare_answers(self, state: DocumentState, analysis: Analysis) -> None:
        """Right after a fresh analysis is published, build what the client will ask for next (the
        outline, folding, lenses, links it has asked for before: `answers`) on one worker thread, one
        after the other, so that those requests find their answers ready instead of waiting for them,
        and answering "still checking" on a large file. Each is the same memo entry a request would make or share; one
        that is not yet started is dropped when a newer analysis of the document replaces this one."""
        loop = asyncio.get_running_loop()
        todo: list[tuple[asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]] = []
        snap = Snapshot(state.uri, state.version, analysis, self.index(analysis))
        for method, make in self.answers.items():
            if method not in self.asked:
                continue
            for key, fn, args in make(snap):
                if isinstance(analysis.memo.get(key), asyncio.Future):
                    continue
                future: asyncio.Future[Any] = loop.create_future()
                self._remember(analysis, key, future)
                todo.append((future, fn, args))
        if not todo:
            return

        def settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
            if future.done():
                return
            if ok:
                future.set_result(value)
            elif isinstance(value, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(value)

        def run() -> None:
            for future, fn, args in todo:
                if state.analysis is not analysis:  # superseded: a request for it computes its own
                    outcome: tuple[bool, Any] = (False, asyncio.CancelledError())
                else:
                    try:
                        with gc_paused():
                            outcome = (True, fn(*args))
                    except Exception as exc:
                        outcome = (False, exc)
                try:
                    loop.call_soon_threadsafe(settle, future, *outcome)
                except RuntimeError:  # the loop is closed
                    return

        workers.submit(run, foreground=False)  # built ahead: background work, requests go first

    def notify_json(self, method: str, params: JsonReady) -> None:
        """A notification whose params are already JSON (see protocol.JsonReady)."""
        protocol = self.protocol
        assert isinstance(protocol, EvalspecProtocol)
        protocol.notify_json(method, params)

    def _prepare(self, state: DocumentState, analysis: Analysis) -> None:
        for listener in self.on_prepare:
            listener(state, analysis)

    def _analysed(self, state: DocumentState) -> None:
        for listener in self.on_analysed:
            listener(state)
        if state.analysis is not None and state.analysis.kind is not FileKind.NONE and self.asked:
            self.prepare_answers(state, state.analysis)

    def _analysis_failed(self, state: DocumentState, exc: Exception) -> None:
        self.report_failure(f"analysis of {state.uri} (version {state.version})", exc)

    # --- never going down ---------------------------------------------------------------------------

    def request(self, method: str, options: Any = None, *,
                empty: Callable[[], Any] | None) -> Callable[[Handler[P, R]], Handler[P, R]]:
        """Register an async request handler that cannot take the server down.

        A failure is logged to the client (`window/logMessage`) and answered with `empty()` (an empty
        result the editor shows as "nothing here"), or with an error response when `empty` is None.
        Cancellation (`$/cancelRequest`) passes through: pygls cancels the task and answers
        RequestCancelled.
        """

        def register(fn: Handler[P, R]) -> Handler[P, R]:
            async def handle(params):  # no annotation: pygls must not inject the server again
                started = time.perf_counter()
                came, watch = arrived.get(), loop_watch.installed()
                if came is not None and watch is not None:
                    watch.lag.note(started - came)  # read, then queued behind other work on the loop
                self.asked.add(method)
                _request_started.set(started)
                times = WorkerTimes()
                _worker_times.set(times)
                task = asyncio.current_task()
                if task is not None:
                    self.in_flight.add(task)
                    task.add_done_callback(self.in_flight.discard)
                try:
                    return await fn(self, params)
                except (asyncio.CancelledError, JsonRpcException):
                    raise
                except Exception as exc:
                    self.report_failure(method, exc)
                    if empty is None:
                        raise JsonRpcInternalError(f"evalspec: {method} failed: {exc}") from exc
                    return empty()
                finally:
                    now = time.perf_counter()
                    log.info("%s %.1f ms (%.1f ms since read; %s)", method, (now - started) * 1000,
                             (now - came) * 1000 if came is not None else 0.0, times)

            handle.__name__ = fn.__name__
            self.feature(method, options)(handle)
            return fn

        return register

    def notification(self, method: str) -> Callable[[Callable[[EvalspecServer, P], None]],
                                                      Callable[[EvalspecServer, P], None]]:
        """Register a notification handler (runs on the event loop, must be quick) that logs failures."""

        def register(fn: Callable[[EvalspecServer, P], None]) -> Callable[[EvalspecServer, P], None]:
            def handle(params):
                started = time.perf_counter()
                try:
                    fn(self, params)
                except Exception as exc:
                    self.report_failure(method, exc)
                finally:
                    log.info("%s %.1f ms", method, (time.perf_counter() - started) * 1000)

            handle.__name__ = fn.__name__
            self.feature(method)(handle)
            return fn

        return register

    def report_failure(self, what: str, exc: BaseException) -> None:
        detail = "".join(traceback.format_exception(exc)).rstrip()
        log.error("%s failed: %s", what, detail)
        self.log_to_client(lsp.MessageType.Error, f"evalspec: {what} failed: {exc!r}\n{detail}")

    def log_to_client(self, kind: lsp.MessageType, message: str) -> None:
        try:
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))
        except Exception:  # no connection yet, or it is gone: the local log has it
            log.debug("could not send a log message", exc_info=True)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would pop up a window/showMessage; a log line is enough and never nags the user.
        # Failed requests were logged by `request` already and answered with an error.
        if source is FeatureRequestError:
            return
        self.report_failure(getattr(source, "__name__", "server"), error)
