"""pygls's protocol and stdin, with the smallest overrides where pygls itself is wrong (each method's
docstring names its test); answers a worker built as JSON (`JsonReady`) are written as they are, and a
handler may answer an error (`lsp.ResponseError`, "still checking") as an ordinary answer, not an
exception pygls logs with its traceback.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, BinaryIO

from cattrs import transform_error
from lsprotocol import types as lsp
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JsonReady:
    """A request's result or a notification's params, already encoded as JSON (UTF-8 bytes)."""

    body: bytes


class EvalspecProtocol(LanguageServerProtocol):
    _initialized = False
    unreadable: Stdin | None = None  # the stdin whose last body pygls could not decode (answer_unreadable)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._finished_handlers: list[tuple[Any, Any]] = []

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, ResponseError):
            result, error = None, result
        if error is None and isinstance(result, JsonReady):
            self._result_types.pop(msg_id, None)
            self.send_json(b'{"jsonrpc":"2.0","id":' + json.dumps(msg_id).encode() + b',"result":' + result.body + b"}")
            return
        super()._send_response(msg_id, result, error)

    def send_json(self, body: bytes) -> None:
        """A message already encoded as JSON: what pygls's `_send_data` does after encoding."""
        if self.writer is None:
            return
        if log.isEnabledFor(logging.DEBUG):
            log.debug("Sending data: %s", body.decode("utf-8", "replace"))
        header = (f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; "
                  f"charset={self.CHARSET}\r\n\r\n").encode("ascii")
        self.writer.write(header + body)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: tuple[Any, ...] | None = None,
                         kwargs: dict[str, Any] | None = None) -> None:
        """pygls 2.1 files the future of every coroutine or generator handler in `_request_futures`, a
        notification's too, and only a request's answer takes it out: ~1 KB per message for good
        (tests/lsp/test_ninth_round_reproducers.py). Taken out at the next message (pygls's `shutdown`
        walks the table)."""
        finished = self._finished_handlers
        while finished:
            done_id, future = finished.pop()
            if self._request_futures.get(done_id) is future:
                del self._request_futures[done_id]

        def done(future: Any) -> None:
            try:
                callback(future)
            finally:
                finished.append((msg_id, future))

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    # pygls decodes with `object_hook=structure_message`: None makes that a plain decode, and
    # `handle_message` structures the message as a whole, so invalid params can be answered.
    @property
    def structure_message(self) -> None:  # type: ignore[override]
        return None

    def handle_message(self, message: Any) -> None:
        """pygls answers a request before `initialize` as if initialized and never answers one after
        `shutdown` (tests/lsp/test_lifecycle_raw.py)."""
        if isinstance(message, dict):
            message = self.structure(message)
            if message is None:
                return
        method = getattr(message, "method", None)
        if method is not None and hasattr(message, "id") and method not in (lsp.INITIALIZE, lsp.EXIT):
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
        """pygls raises on invalid params while it decodes, before it knows the message is a request: the
        client got no reply (tests/lsp/test_hostile_protocol.py). Answered InvalidParams here; None when
        answered."""
        if "jsonrpc" not in data:
            return data  # not a message: pygls warns and drops it
        try:
            return LanguageServerProtocol.structure_message(self, data)
        except JsonRpcException as exc:
            if "method" in data and "id" in data:
                msg_id = data["id"]
                if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
                    msg_id = None  # JSON-RPC: null when the id cannot be read
                error = exc.to_response_error()
                error.message = f"evalspec: invalid params for {data['method']!s:.100}: {_why(exc)}"
                self._send_response(msg_id, None, error)
            return None

    def answer_unreadable(self) -> None:
        """pygls logs a body nested too deeply for `json.loads` and answers nothing: the client waits for
        good (tests/lsp/test_lifecycle_raw.py). A request in it is answered InvalidRequest."""
        body = self.unreadable.last_body if self.unreadable is not None else b""
        found = re.match(rb'\s*\{\s*"jsonrpc"\s*:\s*"2.0"\s*,\s*"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,30})', body)
        if found is None:
            found = re.search(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,30})\s*[,}]\s*$', body[-300:])
        if found is not None:
            self._send_response(json.loads(found.group(1)), None, ResponseError(
                code=lsp.ErrorCodes.InvalidRequest,
                message="evalspec: the message is nested too deeply to read (over ~1,000 levels)"))

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        """The server's handler only: pygls would also apply the change to its own copy of the text,
        which nothing reads (documents.py), in a Python loop over every line (0.2-0.3 s a keystroke
        in a 4 MB file)."""
        user_handler = self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)
        if user_handler is not None:
            yield user_handler, (params,), None

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        """pygls would build a new, empty workspace on a second `initialize` (tests/lsp/test_hostile_protocol.py)."""
        if self._initialized:
            raise JsonRpcInvalidRequest("evalspec: the server is already initialized; 'initialize' may be "
                                        "sent only once")
        self._initialized = True
        return (yield from super().lsp_initialize(params))


_LENGTH = re.compile(rb"Content-Length: *(\d+)\r?\n$")


class Stdin:
    """stdin for pygls's reader, each header line cut to the `Content-Length: N\\r\\n` it ends with: pygls
    matches a whole header line, so after a frame whose length lies its body and the next header
    share a line and no later message is read (tests/lsp/test_framing_raw.py)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.last_body = b""

    def readline(self) -> bytes:
        line = self.stream.readline()
        found = _LENGTH.search(line)
        if found is not None:
            return b"Content-Length: " + found.group(1) + b"\r\n"
        return b"\r\n" if line == b"\n" else line

    def read(self, n: int) -> bytes:
        self.last_body = self.stream.read(n)
        return self.last_body


def _why(exc: JsonRpcException) -> str:
    """The validation errors behind `exc`, one line each (`invalid value ... @ $.params.position.line`)."""
    cause = exc.__cause__
    try:
        lines = transform_error(cause) if cause is not None else []
    except Exception:
        lines = []
    return "; ".join(lines[:5]) or str(cause or exc)
