"""pygls's JSON-RPC protocol with the answers it leaves out.

- A request whose params fail validation (a negative position, a line of 2^31, `references` without
  its `context`) is answered with InvalidParams. pygls raises while it decodes the message, before it
  knows it is a request, so the client got no reply at all and waited forever.
- A second `initialize` is refused (InvalidRequest). pygls would build a new, empty workspace, and every
  later change to a document opened before it failed.
- A request before `initialize` gets ServerNotInitialized, one after `shutdown` InvalidRequest (pygls
  answered the first with a result and never the second).

It also sends results and notifications that are already JSON (`JsonReady`) as they are. pygls turns
lsprotocol objects into JSON through cattrs on the event loop; for the outline of a 4 MB blueprint
(64,000 symbols) building those objects and converting them cost ~2.5 s, during which no other
request was answered. Such answers are built as plain data and encoded on a worker thread instead
(`EvalspecServer.memoised_in_thread` with `as_json`), and the loop only writes the bytes.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from cattrs import transform_error
from lsprotocol import types as lsp
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from evalspec import jsonio
from evalspec.yielding import yield_point

from .framing import frame

log = logging.getLogger(__name__)
# pygls logs each message it sends ("Sending data: …") on this logger: kept at DEBUG, dropped below it
# (server/logs.py); answers sent here are logged the same way.
_sent_log = logging.getLogger("pygls.protocol.json_rpc")
_writes: set[asyncio.Future[Any]] = set()

# What `structure_message` returns for a message it already answered: `handle_message` drops it.
_ANSWERED = object()


@dataclass(frozen=True, slots=True)
class JsonReady:
    """A request's result or a notification's params, already encoded as JSON (UTF-8 bytes)."""

    body: bytes

    @classmethod
    def of(cls, value: Any) -> JsonReady:
        """`value` (dicts, lists, strings, numbers, None) encoded; strings with lone surrogates are
        escaped, as pygls's encoder does. Long lists are encoded a slice at a time (see `encode`)."""
        return cls(encode(value))


# Items encoded by one C call. orjson holds the GIL while it encodes: the 60,000 symbols of a 4 MB
# outline in one call held every other thread, the event loop included, for 0.2-0.3 s. A slice of
# this many takes a few milliseconds, and the GIL can change hands between slices.
SLICE = 500


def encode(value: Any, depth: int = 0) -> bytes:
    """`jsonio.dumps_bytes(value)`, the same bytes, with lists longer than SLICE, and the long lists
    inside the first few levels of dicts and short lists, encoded a slice at a time."""
    if depth < 4:
        if isinstance(value, list):
            if len(value) > SLICE:
                parts = []
                for i in range(0, len(value), SLICE):
                    yield_point()
                    parts.append(encode(value[i:i + SLICE], depth + 1)[1:-1])
                return b"[" + b",".join(parts) + b"]"
            if 0 < len(value) <= 4:  # an outline's one suite with its 16,000 tests
                return b"[" + b",".join(encode(v, depth + 1) for v in value) + b"]"
        elif isinstance(value, dict) and 0 < len(value) <= 8 and all(type(k) is str for k in value):
            return b"{" + b",".join(jsonio.dumps_bytes(str(k)) + b":" + encode(v, depth + 1)
                                    for k, v in value.items()) + b"}"
    return jsonio.dumps_bytes(value)


class EvalspecProtocol(LanguageServerProtocol):
    _initialized = False
    # Under the guard process (guard.py): each response carries its id in a header of its own, so the
    # guard matches answers to requests without decoding them.
    guarded = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._finished_handlers: list[tuple[Any, Any]] = []  # (id, future): see _execute_handler

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, JsonReady):
            self._result_types.pop(msg_id, None)
            self._write_json(b'{"jsonrpc":"2.0","id":' + jsonio.dumps_bytes(msg_id) + b',"result":' + result.body
                             + b"}", response_id=msg_id)
            return
        super()._send_response(msg_id, result, error)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: tuple[Any, ...] | None = None,
                         kwargs: dict[str, Any] | None = None) -> None:
        """pygls's, with the handler's future taken out of `_request_futures` once done. pygls 2.1 files
        the future of every coroutine or generator handler there under the message's id, or a fresh one
        for a notification and for the user handler a built-in one calls (didOpen, didChange, didClose,
        $/setTrace, executeCommand's command…), and only a request's own answer takes its out: each such
        message left ~1 KB for the server's lifetime (200,000 `$/setTrace` took it from 64 to 258 MB; a day
        of typing, a didChange a keystroke). Taken out at the next message, not in the callback: pygls's
        `shutdown` cancels the futures while it walks the table. Only that future is taken: an id reused
        while the first is in flight keeps the other's."""
        finished = self._finished_handlers
        while finished:
            done_id, future = finished.pop()
            if self._request_futures.get(done_id) is future:
                del self._request_futures[done_id]

        def done(future: Any) -> None:
            try:
                callback(future)
            finally:
                finished.append((msg_id, future))  # (a list's append: safe from a worker thread too)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def _send_data(self, data: Any) -> None:
        """pygls's: the message encoded by the standard library, through `_write_json`."""
        if not data:
            return
        try:
            body = json.dumps(data, default=self._serialize_message).encode(self.CHARSET)
        except Exception as error:
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)
            return
        is_response = hasattr(data, "id") and not hasattr(data, "method")
        self._write_json(body, response_id=data.id if is_response else None)

    def notify_json(self, method: str, params: JsonReady) -> None:
        """A notification whose params are already JSON."""
        self._write_json(b'{"jsonrpc":"2.0","method":' + jsonio.dumps_bytes(method) + b',"params":' + params.body
                         + b"}")

    def _write_json(self, body: bytes, response_id: Any = None) -> None:
        """What pygls's `_send_data` does after encoding: the header, then the body."""
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        _sent_log.info("Sending data: %s", _Decoded(body))
        if self._include_headers:
            marked = b""
            if self.guarded and response_id is not None:
                marked = b"Evalspec-Response-Id: " + json.dumps(response_id).encode() + b"\r\n"
            body = frame(body, f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n".encode("ascii")
                         + marked)
        try:
            res = self.writer.write(body)
            if inspect.isawaitable(res):  # an async transport: keep the write alive until it is done
                task = asyncio.ensure_future(res)
                _writes.add(task)
                task.add_done_callback(_writes.discard)
        except BrokenPipeError:
            log.exception("Error sending data. BrokenPipeError")
            raise
        except Exception as error:
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)

    # pygls decodes each message with `json.loads(body, object_hook=protocol.structure_message)`: a
    # Python call for every JSON object in it, 65,000 for a code action carrying 12,000 diagnostics
    # (0.2 s on the event loop). None here makes that a plain decode; `handle_message` then structures
    # the message as a whole, as the hook did for the outermost object.
    @property
    def structure_message(self) -> None:  # type: ignore[override]
        return None

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict):
            message = self.structure(message)
        if message is _ANSWERED:
            return
        method = getattr(message, "method", None)
        if method is not None and hasattr(message, "id") and method not in (lsp.INITIALIZE, lsp.EXIT):
            # LSP: a request before `initialize` is ServerNotInitialized, one after `shutdown` is
            # InvalidRequest. pygls answered the first as if initialized and dropped the second
            # silently, so the client waited forever.
            if not self._initialized:
                self._send_response(message.id, None, ResponseError(
                    code=lsp.ErrorCodes.ServerNotInitialized,
                    message=f"evalspec: '{method!s:.100}' before 'initialize'"))
                return
            if self._shutdown:
                self._send_response(message.id, None, ResponseError(
                    code=lsp.ErrorCodes.InvalidRequest,
                    message=f"evalspec: '{method!s:.100}' after 'shutdown'; only 'exit' is accepted"))
                return
        super().handle_message(message)

    def structure(self, data: dict[str, Any]) -> Any:
        """The message `data` (decoded JSON) as pygls's types (what pygls's `structure_message` did)."""
        if "jsonrpc" not in data:
            return data  # not a message: pygls warns and drops it
        raw = _raw_diagnostics(data)
        if raw is not None:  # structured without them; put back as they came
            data["params"]["context"]["diagnostics"] = []
        try:
            message = LanguageServerProtocol.structure_message(self, data)
            if raw is not None:
                message.params.context.diagnostics = raw
            return message
        except JsonRpcException as exc:
            if "method" in data and "id" in data:  # a request: it must get an answer
                msg_id = data["id"]
                if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
                    msg_id = None  # JSON-RPC: null when the id cannot be read
                error = exc.to_response_error()
                error.message = f"evalspec: invalid params for {data['method']!s:.100}: {_why(exc)}"
                self._send_response(msg_id, None, error)
            return _ANSWERED

    def answer_unreadable(self, body: bytes) -> None:
        """Answer the request in a body the JSON parser gave up on (nested too deeply); a notification
        gets nothing, as JSON-RPC says."""
        msg_id = request_id(body)
        if msg_id is not _NO_ID:
            self._send_response(msg_id, None, ResponseError(
                code=lsp.ErrorCodes.InvalidRequest,
                message="evalspec: the message is nested too deeply to read (over ~1,000 levels)"))

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        """The server's handler only: pygls would also apply the change to its own copy of the text,
        which nothing reads (text_documents.py), in a Python loop over every line: 0.2-0.3 s on the
        event loop for each edit of a 4 MB file."""
        user_handler = self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)
        if user_handler is not None:
            yield user_handler, (params,), None

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        if self._initialized:
            raise JsonRpcInvalidRequest("evalspec: the server is already initialized; 'initialize' may be "
                                        "sent only once")
        self._initialized = True
        return (yield from super().lsp_initialize(params))


# More diagnostics than this in a code action's context are kept as the client's JSON (RawDiagnostics).
RAW_DIAGNOSTICS_OVER = 64


class RawDiagnostics(list[dict[str, Any]]):
    """The diagnostics of a codeAction request's context, as the client sent them (JSON data, checked
    for the fields the server reads). With a whole 4 MB file selected VS Code sends every diagnostic
    (12,000); pygls turned them into lsprotocol objects through cattrs on the event loop, 0.2-0.5 s
    during which no other request was answered."""


def _raw_diagnostics(data: Any) -> RawDiagnostics | None:
    """The context's diagnostics of a codeAction request with many, if each is well formed (else None:
    pygls structures them, and answers InvalidParams for a bad one)."""
    if not isinstance(data, dict) or data.get("method") != lsp.TEXT_DOCUMENT_CODE_ACTION:
        return None
    params = data.get("params")
    context = params.get("context") if isinstance(params, dict) else None
    diagnostics = context.get("diagnostics") if isinstance(context, dict) else None
    if not isinstance(diagnostics, list) or len(diagnostics) <= RAW_DIAGNOSTICS_OVER:
        return None
    if not all(_well_formed(d) for d in diagnostics):
        return None
    return RawDiagnostics(diagnostics)


_UINT = 2**31  # LSP's uinteger


def _position_ok(p: Any) -> bool:
    if type(p) is not dict:
        return False
    line, character = p.get("line"), p.get("character")
    return type(line) is int and type(character) is int and 0 <= line < _UINT and 0 <= character < _UINT


def _well_formed(d: Any) -> bool:
    if type(d) is not dict or type(d.get("message")) is not str:
        return False
    rng = d.get("range")
    if type(rng) is not dict or not _position_ok(rng.get("start")) or not _position_ok(rng.get("end")):
        return False
    code, source, severity = d.get("code"), d.get("source"), d.get("severity")
    return (code is None or type(code) in (int, str)) and (source is None or type(source) is str) \
        and (severity is None or (type(severity) is int and 1 <= severity <= 4))


class _Decoded:
    """A message body, decoded only if a log line is written (DEBUG): never for a filtered one."""

    __slots__ = ("body",)

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __str__(self) -> str:
        return self.body.decode("utf-8", "replace")


_NO_ID = object()


def request_id(body: bytes) -> Any:
    """The top-level "id" of a JSON-RPC message `json.loads` could not read, found without recursion
    (one pass, strings skipped); _NO_ID when it has none (a notification), None when it cannot be read."""
    text = body.decode("utf-8", "replace")
    n, i, depth, expect_key = len(text), 0, 0, False
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if depth == 1 and expect_key and text[i + 1:j] == "id":
                k = j + 1
                while k < n and text[k] in " \t\r\n:":
                    k += 1
                try:
                    value = json.JSONDecoder().raw_decode(text, k)[0]
                except (ValueError, RecursionError):
                    return None
                return value if type(value) in (int, str) else None
            i, expect_key = j + 1, False
            continue
        if c in "{[":
            depth += 1
            expect_key = c == "{" and depth == 1
        elif c in "}]":
            depth -= 1
        elif c == "," and depth == 1:
            expect_key = True
        i += 1
    return _NO_ID


def _why(exc: JsonRpcException) -> str:
    """The validation errors behind `exc`, one line each (`invalid value ... @ $.params.position.line`)."""
    cause = exc.__cause__
    try:
        lines = transform_error(cause) if cause is not None else []
    except Exception:
        lines = []
    return "; ".join(lines[:5]) or str(cause or exc)
