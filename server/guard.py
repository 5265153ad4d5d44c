"""The guard: a small process between the editor and the server that answers every request in time.

The server (`server.py`) analyses files on worker threads of its own process. They share one
interpreter lock with the event loop that answers requests, and on a loaded machine a thread holding it
may be off its CPU for tens of milliseconds at a time; long C calls (libyaml on a 4 MB scalar, a regex
over a 4 MB line, freeing a large tree) hold it throughout. So `evalspec-lsp` on stdio runs as two
processes: this guard, which only frames, forwards and times messages (no analysis, no lock shared
with one), and the server itself as its child (`--backend`). The guard

- answers a request the server has not answered within its deadline (`DEADLINE_S` from when its first
  line arrived, or the configured `requestBudgetMs` plus a margin) with RequestFailed, "ask again in a
  moment", and cancels it in the server (`$/cancelRequest`); the server's late answer is dropped;
- bounds the requests in the server (`MAX_ACTIVE`) and those waiting for a place (`MAX_QUEUED`): a client
  that sends thousands at once gets the oldest waiting ones answered ServerCancelled, not a queue of
  seconds in front of its next hover; a request reusing the id of one not yet answered is refused
  (JSON-RPC ids are unique among requests in flight);
- answers `shutdown` itself (null, as a server that has shut down) when the server has not within
  `SHUTDOWN_MARGIN_S` past the deadline (a server SIGSTOPped or stuck in one C call), and then stops it
  on `exit` after `OVERDUE_EXIT_WAIT_S` rather than `EXIT_WAIT_S`;
- restarts a server stuck in the middle of a message (a header or part of a body written, then nothing
  for `FRAME_STALL_S` while requests wait for it): nothing it answers after that could be read;
- restarts a server that died (killed, crashed, out of memory): the requests it held are answered with
  an error, the editor is told (`window/showMessage`), and the new server gets `initialize`, the
  configuration and every open document again (their didOpen and didChange messages, replayed; a
  document whose changes outgrew `REPLAY_BYTES` gets a diagnostic asking to reopen it instead). After
  `MAX_RESTARTS` within `RESTART_WINDOW_S` it stops restarting and answers every request with an error.

Messages keep their order: requests wait in the same queue as notifications. The server marks each
response with an `Evalspec-Response-Id` header (`protocol.EvalspecProtocol`, only under a guard), so the
guard never decodes an answer (an outline of a 4 MB file is megabytes of JSON). Everything the guard
cannot read (invalid JSON, batches, odd ids) is passed through untouched, and the server answers it.
Imports stay small (no pygls, no engine): the guard starts in a few tens of milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from .framing import frame, read_frames

log = logging.getLogger(__name__)

DEADLINE_S = 0.9  # the 1 s promise less a margin for the client's own reading
BUDGET_MARGIN_S = 0.5  # past a configured request budget (slow CI: `requestBudgetMs`), before the guard steps in
MAX_ACTIVE = 16  # requests handed to the server and not yet answered by it
MAX_QUEUED = 32  # requests waiting for a place; past this the oldest waiting is answered ServerCancelled
UNTIMED = frozenset({"initialize"})  # the server's start takes what it takes
NEVER_SHED = frozenset({"initialize", "shutdown"})  # never dropped for newer requests
SHUTDOWN_MARGIN_S = 1.5  # past the deadline (the server first lets its requests answer, each within it)
REPLAY_BYTES = 32 * 1024 * 1024  # didOpen + didChange bytes kept per document to replay after a restart
MAX_RESTARTS = 3
RESTART_WINDOW_S = 120.0
LATE_KEPT_S = 120.0  # how long an id answered by the guard waits for the server's answer, to drop it
EXIT_WAIT_S = 10.0
OVERDUE_EXIT_WAIT_S = 2.0  # after the guard answered `shutdown` for the server: it had its chance
FRAME_STALL_S = 10.0  # a message begun and not one more byte of it for this long, while requests wait: stuck
STALL_CHECK_S = 1.0

SERVER_NOT_INITIALIZED = -32002
REQUEST_FAILED = -32803
SERVER_CANCELLED = -32802
INVALID_REQUEST = -32600

ID_HEADER = b"evalspec-response-id"
LINE_LIMIT = 1 << 20
PIPE_SIZE = 1 << 20
MAX_ID_BYTES = 64 * 1024  # a request id longer than this as JSON is refused (the server's answer names it in a header line)
MAX_FRAME = 1 << 30  # a frame from the server claiming more is not one (the outline of a 4 MB file: ~100 MB)
OUTPUT_GONE_S = 2.0  # a server whose output ended, still running after this: stopped (and started again)


def _encode_id(msg_id: Any) -> bytes:
    return json.dumps(msg_id).encode()  # an id past 64 bits stays exact (orjson refuses it)


def error_body(msg_id: Any, code: int, message: str) -> bytes:
    return (b'{"jsonrpc":"2.0","id":' + _encode_id(msg_id) + b',"error":'
            + orjson.dumps({"code": code, "message": message}) + b"}")


def notification_body(method: str, params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params})


def decode(body: bytes) -> Any:
    """The message, or None when it is not JSON the guard can read (passed through as it is)."""
    try:
        message = orjson.loads(body)
        if isinstance(message, dict) and type(message.get("id")) is float:
            message = json.loads(body)  # an integer id past 64 bits, exactly
        return message
    except (orjson.JSONDecodeError, ValueError, RecursionError):
        return None


def budget_of(options: Any) -> float | None:
    """`requestBudgetMs` of initializationOptions (optionally under `evalspec`), as the server reads it."""
    if isinstance(options, dict) and isinstance(options.get("evalspec"), dict):
        options = options["evalspec"]
    value = options.get("requestBudgetMs") if isinstance(options, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 50 <= value <= 600_000:
        return value / 1000
    return None


@dataclass(eq=False)
class Request:
    key: bytes  # its id as JSON
    msg_id: Any
    method: str
    arrived: float
    body: bytes
    timer: asyncio.TimerHandle | None = None
    sent: bool = False  # handed to the server
    answered: bool = False  # the client has its answer (from the server or from the guard)
    internal: bool = False  # the guard's own (initialize replayed after a restart): never shown to the client


@dataclass
class Document:
    messages: list[bytes] = field(default_factory=list)  # didOpen then its didChanges, to replay
    size: int = 0
    lost: bool = False  # past REPLAY_BYTES: not replayed


@dataclass(eq=False)
class Queued:
    body: bytes
    request: Request | None = None
    kept: tuple[str, str] | None = None  # (method, uri) when a restarted server must see it again


class Backend:
    """The server process, its pipes and the task reading its output."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.reader: asyncio.Task[None] | None = None
        self.mid_frame = False  # a message begun (its first header line read) and not yet whole
        self.progress = 0.0  # when the last piece of it arrived
        self.watch: asyncio.TimerHandle | None = None  # the stall check, while mid_frame
        self.stopped_because: str | None = None  # the guard stopped it: why, for the editor


class Guard:
    def __init__(self, command: list[str], write: Callable[[bytes], None]) -> None:
        self.command = command
        self.write_client = write
        self.loop = asyncio.get_running_loop()
        self.backend: Backend | None = None
        self.queue: deque[Queued] = deque()  # messages for the server, in order
        self.waiting = 0  # requests in the queue
        self.active: dict[bytes, Request] = {}  # handed to the server, not answered by it
        self.late: dict[bytes, float] = {}  # answered by the guard, the server's answer still to drop
        self.deadline_s = DEADLINE_S
        self.initialize: bytes | None = None
        self.setup: list[bytes] = []  # `initialized` and configuration, replayed after a restart
        self.documents: dict[str, Document] = {}
        self.restarts: list[float] = []
        self.given_up = False
        self.exiting = False
        self.shut_down = False
        self.shutdown_overdue = False  # the guard answered `shutdown` for a server that did not
        self.exit_code: int | None = None
        self.done = asyncio.Event()
        self.ready = False  # the server has answered `initialize`
        self.ready_at = 0.0
        self.unarmed: list[Request] = []  # requests sent before that, timed from then

    # --- the server process -------------------------------------------------------------------------

    async def start_backend(self) -> None:
        proc = await asyncio.create_subprocess_exec(*self.command, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, limit=LINE_LIMIT,
                                                    start_new_session=True)  # its own CPU share (see serve)
        assert proc.stdin is not None
        _grow_pipe(proc.stdin.get_extra_info("pipe"))
        backend = Backend(proc)
        backend.reader = self.loop.create_task(self.read_backend(backend))
        self.backend = backend
        log.info("server process %d started", proc.pid)

    def send_backend(self, body: bytes) -> None:
        backend = self.backend
        if backend is None or backend.proc.stdin is None or backend.proc.stdin.is_closing():
            return
        backend.proc.stdin.write(frame(body))

    async def read_backend(self, backend: Backend) -> None:
        # Read strictly, not with `framing.read_frames`' tolerance for the client: a server whose output is
        # out of step with its frames is stopped and started again (every later answer would be lost).
        out = backend.proc.stdout
        assert out is not None
        while True:
            length, response_id = -1, None
            try:
                while True:
                    line = await out.readline()
                    if not line:
                        return await self.backend_ended(backend, OUTPUT_GONE_S)
                    self.frame_progress(backend)
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length" and value.strip().isdigit():
                        length = int(value)
                    elif name == ID_HEADER:
                        response_id = value.strip()
                if not 0 < length <= MAX_FRAME:
                    # Not a frame (no length, 0, past MAX_FRAME): the output is out of step with its frames,
                    # and every answer after this would be lost. The server is stopped and started again.
                    return await self.backend_unreadable(backend, f"a frame of length {length}")
                body = await self.read_body(backend, out, length)
            except ValueError:  # a line past LINE_LIMIT: not a header
                return await self.backend_unreadable(backend, "a header line over 1 MB")
            except (asyncio.IncompleteReadError, ConnectionError):
                return await self.backend_ended(backend, OUTPUT_GONE_S)
            finally:
                self.frame_done(backend)
            if backend is not self.backend:
                continue
            try:
                if response_id is not None:
                    self.server_answered(response_id, body)
                elif not (self.restarts and self.registered_again(body)):
                    self.write_client(frame(body))
            except Exception:  # never stop reading the server: passed on as it came
                log.exception("the guard could not handle a message from the server; passed on")
                self.write_client(frame(body))

    async def read_body(self, backend: Backend, out: asyncio.StreamReader, length: int) -> bytes:
        """`length` bytes, read as they come so that the stall check sees each piece arrive."""
        parts: list[bytes] = []
        left = length
        while left:
            part = await out.read(min(left, PIPE_SIZE))
            if not part:
                raise asyncio.IncompleteReadError(b"".join(parts), length)
            self.frame_progress(backend)
            parts.append(part)
            left -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def frame_progress(self, backend: Backend) -> None:
        backend.progress = time.monotonic()
        if not backend.mid_frame:
            backend.mid_frame = True
            backend.watch = self.loop.call_later(STALL_CHECK_S, self.check_stall, backend)

    @staticmethod
    def frame_done(backend: Backend) -> None:
        backend.mid_frame = False
        if backend.watch is not None:
            backend.watch.cancel()
            backend.watch = None

    def check_stall(self, backend: Backend) -> None:
        """A server that began a message and has written nothing more of it for FRAME_STALL_S while
        requests wait for it is stuck (stopped mid-write, hung in a C call between two writes): nothing it
        answers after that can be read, as every later answer sits behind the missing bytes. It is
        stopped and started again, like a server whose output is not frames. A message that keeps coming,
        however slowly, is waited for; so is one nobody waits behind (the next request starts the clock)."""
        backend.watch = None
        if backend is not self.backend or not backend.mid_frame or backend.proc.returncode is not None:
            return
        stalled = time.monotonic() - backend.progress
        if stalled >= FRAME_STALL_S and (self.active or self.late or self.waiting):
            log.error("the server process wrote part of a message and nothing more for %.0f s while requests "
                      "waited: stopped", stalled)
            backend.stopped_because = f"stuck for {stalled:.0f} s in the middle of an answer"
            self.stop_backend(backend)
            return
        backend.watch = self.loop.call_later(STALL_CHECK_S, self.check_stall, backend)

    def registered_again(self, body: bytes) -> bool:
        """A restarted server registers its capabilities again (file watchers): the editor has them from
        the first one, and some refuse an id they already know. The guard says yes itself."""
        if len(body) > 65_536 or b"client/registerCapability" not in body:
            return False
        message = decode(body)
        if not isinstance(message, dict) or message.get("method") != "client/registerCapability" \
                or "id" not in message:
            return False
        self.send_backend(b'{"jsonrpc":"2.0","id":' + _encode_id(message["id"]) + b',"result":null}')
        return True

    def server_answered(self, key: bytes, body: bytes) -> None:
        key = _key_of_json(key)
        request = self.active.pop(key, None)
        if request is None:
            if self.late.pop(key, None) is None:
                self.write_client(frame(body))  # an id the guard did not track: the client's anyway
            self.pump()
            return
        if request.timer is not None:
            request.timer.cancel()
        if not request.answered and not request.internal:
            request.answered = True
            self.write_client(frame(body))
            log.info("%s answered by the server in %.1f ms", request.method,
                     (time.monotonic() - request.arrived) * 1000)
        if request.method == "shutdown":
            self.shut_down = True
        if request.method == "initialize" and not self.ready:
            self.ready, self.ready_at = True, time.monotonic()
            for waiting in self.unarmed:
                if not waiting.answered:
                    self.arm(waiting)
            self.unarmed.clear()
        self.pump()

    async def backend_unreadable(self, backend: Backend, what: str) -> None:
        if backend is self.backend:
            log.error("the server process wrote what is not a message (%s): stopped", what)
        self.stop_backend(backend)
        await self.backend_ended(backend)

    @staticmethod
    def stop_backend(backend: Backend | None) -> None:
        if backend is not None and backend.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                backend.proc.kill()

    async def backend_ended(self, backend: Backend, grace: float | None = None) -> None:
        """Its output ended: it is ending (after `exit`, or it died), or it closed its output and lives
        on, hung or broken: after `grace` seconds it is stopped, as nothing it answers can be read."""
        try:
            code = await asyncio.wait_for(backend.proc.wait(), EXIT_WAIT_S if self.exiting else grace)
        except TimeoutError:
            log.error("the server process's output ended and it still runs: stopped")
            self.stop_backend(backend)
            code = await backend.proc.wait()
        if backend is not self.backend:
            return
        if self.exiting or (self.shut_down and not self.active):
            # LSP: 0 after `shutdown`; the guard answered it for a server that could not, so the session
            # ended as the editor asked, whatever stopping that server took
            self.exit_code = 0 if self.shutdown_overdue else code
            self.done.set()
            return
        why = backend.stopped_because or (f"killed by signal {-code}" if code < 0 else f"exit code {code}")
        log.error("the server process stopped (%s)", why)
        self.backend = None
        for request in list(self.active.values()):
            if request.timer is not None:
                request.timer.cancel()
            if not request.answered and not request.internal:
                self.answer(request, REQUEST_FAILED, f"evalspec: the checking process stopped ({why}) while "
                                                     f"handling {request.method}; it is being restarted")
        self.active.clear()
        self.late.clear()
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW_S] + [now]
        if len(self.restarts) > MAX_RESTARTS or self.initialize is None:
            self.given_up = True
            self.show(1, f"evalspec: the checking process stopped ({why}) and is not restarted (it stopped "
                         f"{len(self.restarts)} times in {RESTART_WINDOW_S:.0f} s). Restart the language server.")
            for queued in self.queue:
                if queued.request is not None and not queued.request.answered:
                    self.answer(queued.request, REQUEST_FAILED, "evalspec: the checking process is not running; "
                                                         "restart the language server")
            self.queue.clear()
            self.waiting = 0
            return
        try:
            await self.start_backend()
        except OSError as exc:
            self.restarts += [now] * MAX_RESTARTS  # cannot even start: give up below
            log.error("the server process could not be started again: %s", exc)
            self.backend = backend
            return await self.backend_ended(backend)
        self.show(2, f"evalspec: the checking process stopped ({why}); restarted, open files are checked again.")
        self.replay()
        self.pump()

    def replay(self) -> None:
        """What the new server must know, ahead of the messages still queued."""
        assert self.initialize is not None
        message = decode(self.initialize)
        # Under an id of the guard's own: the client may have reused its `initialize` id for a request
        # still queued, whose answer this one must not take.
        private = f"evalspec-guard-initialize-{len(self.restarts)}"
        body = json.dumps({**message, "id": private}).encode()
        request = Request(_key(private), private, "initialize", time.monotonic(), body, sent=True, internal=True)
        self.active[request.key] = request
        self.send_backend(body)
        for body in self.setup:
            self.send_backend(body)
        for uri, doc in self.documents.items():
            if doc.lost:
                self.client_notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": [{
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                    "severity": 2, "source": "evalspec", "code": "server-restarted",
                    "message": "evalspec restarted its checking process and lost this file's edits; close "
                               "and reopen the file to check it again."}]})
                continue
            for body in doc.messages:
                self.send_backend(body)

    def show(self, kind: int, message: str) -> None:
        self.client_notify("window/showMessage", {"type": kind, "message": message})

    def client_notify(self, method: str, params: Any) -> None:
        self.write_client(frame(notification_body(method, params)))

    # --- messages from the client -------------------------------------------------------------------

    def from_client(self, body: bytes, arrived: float) -> None:
        try:
            self._from_client(body, arrived)
        except Exception:  # the guard never goes down on a message: the server gets it as it came
            log.exception("the guard could not read a message; passed on")
            self.enqueue(Queued(body))

    def _from_client(self, body: bytes, arrived: float) -> None:
        message = decode(body)
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str):  # a response to the server's request, a batch, not JSON: as it is
            self.enqueue(Queued(body))
            return
        assert isinstance(message, dict)
        kept = self.kept_for_replay(method, message)
        msg_id = message.get("id")
        if "id" not in message or type(msg_id) not in (int, str):  # a notification, or an id the server answers
            if method == "exit":
                self.exiting = True
                # a server that does not end on `exit` (hung, or not reading) is stopped: the editor is waiting
                self.loop.call_later(OVERDUE_EXIT_WAIT_S if self.shutdown_overdue else EXIT_WAIT_S,
                                     self.stop_backend, self.backend)
                if self.backend is None:  # no server to pass it to (it stayed down): end here
                    self.exit_code = 1
                    self.done.set()
                    return
            self.enqueue(Queued(body, kept=kept))
            return
        key = _key(msg_id)
        request = Request(key, msg_id, method, arrived, body)
        if len(key) > MAX_ID_BYTES:
            self.answer(request, INVALID_REQUEST, f"evalspec: a request id of {len(key):,} bytes; ids must be at "
                                                  f"most {MAX_ID_BYTES:,} bytes as JSON")
            return
        if self.given_up:
            self.answer(request, REQUEST_FAILED, "evalspec: the checking process is not running; restart the "
                                                 "language server")
            return
        if key in self.active or key in self.late or any(q.request is not None and q.request.key == key
                                                         for q in self.queue):
            self.answer(request, INVALID_REQUEST, f"evalspec: a request with the id {str(msg_id)[:40]} is still "
                                                  "being handled; ids must be unique among requests in flight")
            return
        if self.initialize is None and method != "initialize":
            # LSP's ServerNotInitialized, as the server answers it (it may still be starting: a second or two)
            self.answer(request, SERVER_NOT_INITIALIZED, f"evalspec: '{method:.100}' before 'initialize'")
            return
        if method == "initialize" and self.initialize is None:
            self.initialize = body
            params = message.get("params")
            budget = budget_of(params.get("initializationOptions") if isinstance(params, dict) else None)
            if budget is not None:
                self.deadline_s = max(DEADLINE_S, budget + BUDGET_MARGIN_S)
        if method not in UNTIMED:
            if self.ready:
                self.arm(request)
            else:  # the server is starting: timed from its answer to `initialize` (clients wait for it anyway)
                self.unarmed.append(request)
        self.enqueue(Queued(body, request))

    def arm(self, request: Request) -> None:
        since = max(request.arrived, self.ready_at)
        bound = self.deadline_s + (SHUTDOWN_MARGIN_S if request.method == "shutdown" else 0.0)
        request.timer = self.loop.call_at(self.loop.time() + bound - (time.monotonic() - since),
                                          self.expire, request)

    @staticmethod
    def kept_for_replay(method: str, message: dict[str, Any]) -> tuple[str, str] | None:
        """(method, uri) of a message a restarted server must see again (setup, open documents' texts);
        the method is `full` for a didChange that replaces the whole text."""
        if method in ("initialized", "workspace/didChangeConfiguration"):
            return method, ""
        if method not in ("textDocument/didOpen", "textDocument/didChange", "textDocument/didClose"):
            return None
        params = message.get("params")
        doc = params.get("textDocument") if isinstance(params, dict) else None
        uri = doc.get("uri") if isinstance(doc, dict) else None
        if not isinstance(uri, str):
            return None
        if method == "textDocument/didChange":
            changes = params.get("contentChanges") if isinstance(params, dict) else None
            if isinstance(changes, list) and changes and isinstance(changes[-1], dict) and "range" not in changes[-1]:
                return "full", uri
        return method, uri

    def remember(self, kept: tuple[str, str], body: bytes) -> None:
        """As the message goes to the server: what to replay if it has to be started again."""
        method, uri = kept
        if not uri:
            if method == "initialized" or len(self.setup) < 16:
                self.setup.append(body)
        elif method == "textDocument/didOpen":
            self.documents[uri] = Document([body], len(body))
        elif method == "textDocument/didClose":
            self.documents.pop(uri, None)
        elif method == "full" and uri in self.documents:  # the text anew: what came before it is not needed
            doc = self.documents[uri]
            if not doc.lost:
                doc.messages = [doc.messages[0], body]
                doc.size = len(doc.messages[0]) + len(body)
        elif uri in self.documents:
            doc = self.documents[uri]
            if doc.lost:
                return
            doc.size += len(body)
            if doc.size > REPLAY_BYTES:
                doc.messages, doc.lost = [], True
            else:
                doc.messages.append(body)

    def enqueue(self, item: Queued) -> None:
        if item.request is not None:
            if self.waiting >= MAX_QUEUED:
                self.shed_oldest()
            self.waiting += 1
        self.queue.append(item)
        self.pump()

    def shed_oldest(self) -> None:
        for i, queued in enumerate(self.queue):
            request = queued.request
            if request is not None and request.method not in NEVER_SHED:
                del self.queue[i]
                self.waiting -= 1
                if request.timer is not None:
                    request.timer.cancel()
                self.answer(request, SERVER_CANCELLED, f"evalspec: over {MAX_ACTIVE + MAX_QUEUED} requests in "
                                                       "flight; the oldest waiting ones are dropped, ask again")
                return

    def pump(self) -> None:
        """Hand the queued messages to the server, in order, while it has room for requests."""
        while self.queue and self.backend is not None:
            queued = self.queue[0]
            request = queued.request
            if request is not None:
                if len(self.active) >= MAX_ACTIVE:
                    return
                self.waiting -= 1
                request.sent = True
                self.active[request.key] = request
            self.queue.popleft()
            if queued.kept is not None:
                self.remember(queued.kept, queued.body)
            self.send_backend(queued.body)

    def expire(self, request: Request) -> None:
        """The deadline: the client gets an error now; the server, a cancel."""
        if request.answered:
            return
        if request.method == "shutdown":
            # The server has not answered `shutdown` (it lets its requests answer first, each within the
            # deadline): it is hung or stopped. The editor gets its answer from the guard, and `exit` will
            # stop the server. The request stays where it is; a late answer from the server is dropped.
            request.answered = self.shutdown_overdue = True
            self.write_client(frame(b'{"jsonrpc":"2.0","id":' + _encode_id(request.msg_id) + b',"result":null}'))
            log.error("shutdown not answered by the server within %.1f s: answered by the guard",
                      time.monotonic() - request.arrived)
            return
        self.answer(request, REQUEST_FAILED, f"evalspec is busy: no answer to {request.method} within "
                                             f"{self.deadline_s:.1f} s; ask again in a moment")
        if request.sent:
            if self.active.pop(request.key, None) is not None:
                self.late[request.key] = time.monotonic()
                self.send_backend(notification_body("$/cancelRequest", {"id": request.msg_id}))
                self.forget_late()
                self.pump()
        else:
            for i, queued in enumerate(self.queue):
                if queued.request is request:
                    del self.queue[i]
                    self.waiting -= 1
                    break

    def forget_late(self) -> None:
        now = time.monotonic()
        for key in [k for k, t in self.late.items() if now - t > LATE_KEPT_S]:
            del self.late[key]

    def answer(self, request: Request, code: int, message: str) -> None:
        request.answered = True
        self.write_client(frame(error_body(request.msg_id, code, message)))
        log.info("%s answered by the guard (%d) in %.1f ms", request.method, code,
                 (time.monotonic() - request.arrived) * 1000)

    def client_ended(self) -> None:
        """The editor closed our input: so does the server (after what was read before); its exit code
        is ours."""
        self.exiting = True
        backend = self.backend
        if backend is None:
            self.exit_code = 1
            self.done.set()
            return
        while self.queue:
            queued = self.queue.popleft()
            if queued.request is not None:
                self.active[queued.request.key] = queued.request
            self.send_backend(queued.body)
        if backend.proc.stdin is not None:
            with contextlib.suppress(Exception):
                backend.proc.stdin.close()


def _key(msg_id: Any) -> bytes:
    return _encode_id(msg_id)


def _key_of_json(raw: bytes) -> bytes:
    try:
        return _key(json.loads(raw))
    except ValueError:
        return raw


async def read_client(reader: asyncio.StreamReader, handle: Callable[[bytes, float], None]) -> None:
    """The client's messages, framed as the server frames them (`framing.py`): one bad frame is lost,
    not the session."""
    async for message in read_frames(reader, clock=time.monotonic):
        handle(message.body, message.started)


def backend_command() -> list[str]:
    """This program again (`evalspec-lsp`, `python -m evalspec_lsp`, or a script that calls `main`), as the
    guarded server."""
    return [sys.executable, *sys.orig_argv[1:], "--backend"]


async def serve(command: list[str]) -> int:
    # A session of its own, and one for the server: on Linux with autogroup scheduling (the default of
    # most desktop distributions) each session shares the CPU as one group, so the guard is not queued
    # behind everything else the editor's session runs (a build, a test run: with twelve busy processes
    # in its session a process that only echoes a byte waited up to 1.2 s for a CPU; in a session of its
    # own, 0.2 s). The editor's pipes still end it: at the end of its input it stops the server and exits.
    with contextlib.suppress(OSError):
        os.setsid()
    loop = asyncio.get_running_loop()
    _grow_pipe(sys.stdin)
    reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
                                                os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False))
    with contextlib.suppress(AttributeError):
        transport.max_size = PIPE_SIZE  # type: ignore[attr-defined]
    out_transport, _ = await loop.connect_write_pipe(asyncio.Protocol,
                                                     os.fdopen(sys.stdout.fileno(), "wb", buffering=0, closefd=False))

    def write(data: bytes) -> None:
        if not out_transport.is_closing():
            out_transport.write(data)

    guard = Guard(command, write)
    await guard.start_backend()
    reading = loop.create_task(read_client(reader, guard.from_client))
    ended = loop.create_task(guard.done.wait())
    await asyncio.wait([reading, ended], return_when=asyncio.FIRST_COMPLETED)
    if not guard.done.is_set():  # the input ended: the server's input ends too
        guard.client_ended()
        try:
            await asyncio.wait_for(guard.done.wait(), EXIT_WAIT_S)
        except TimeoutError:
            backend = guard.backend
            if backend is not None:
                with contextlib.suppress(ProcessLookupError):
                    backend.proc.send_signal(signal.SIGKILL)
                await backend.proc.wait()
    reading.cancel()
    ended.cancel()
    for _ in range(500):  # what the server answered last (the `shutdown` reply) goes out before we exit
        if not out_transport.get_write_buffer_size():
            break
        await asyncio.sleep(0.01)
    return 0 if guard.exit_code == 0 else 1


def _grow_pipe(pipe: Any) -> None:
    """Room for 1 MB in a pipe (Linux lets any process grow its pipes that far): a 4 MB message in 4 reads."""
    with contextlib.suppress(OSError, AttributeError, ValueError):
        import fcntl
        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)


def run() -> int:
    return asyncio.run(serve(backend_command()))
