"""pygls's JSON-RPC protocol with the answers it leaves out.

- A request whose params fail validation (a negative position, a line of 2^31, `references` without
  its `context`) is answered with InvalidParams. pygls raises while it decodes the message, before it
  knows it is a request, so the client got no reply at all and waited forever.
- A second `initialize` is refused (InvalidRequest). pygls would build a new, empty workspace, and every
  later change to a document opened before it failed.

It also sends results and notifications that are already JSON (`JsonReady`) as they are. pygls turns
lsprotocol objects into JSON through cattrs on the event loop; for the outline of a 4 MB blueprint
(64,000 symbols) building those objects and converting them cost ~2.5 s, during which no other
request was answered. Such answers are built as plain data and encoded on a worker thread instead
(`EvalspecServer.off_loop`), and the loop only writes the bytes.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from cattrs import transform_error
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from evalspec import jsonio

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
        escaped, as pygls's encoder does."""
        return cls(jsonio.dumps_bytes(value))


class EvalspecProtocol(LanguageServerProtocol):
    _initialized = False

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, JsonReady):
            self._result_types.pop(msg_id, None)
            self._write_json(b'{"jsonrpc":"2.0","id":' + jsonio.dumps_bytes(msg_id) + b',"result":' + result.body
                             + b"}")
            return
        super()._send_response(msg_id, result, error)

    def notify_json(self, method: str, params: JsonReady) -> None:
        """A notification whose params are already JSON."""
        self._write_json(b'{"jsonrpc":"2.0","method":' + jsonio.dumps_bytes(method) + b',"params":' + params.body
                         + b"}")

    def _write_json(self, body: bytes) -> None:
        """What pygls's `_send_data` does after encoding: the header, then the body."""
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        _sent_log.info("Sending data: %s", _Decoded(body))
        if self._include_headers:
            body = (f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}"
                    "\r\n\r\n").encode("ascii") + body
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

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "method" in data and "id" in data:  # a request: it must get an answer
                msg_id = data["id"]
                if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
                    msg_id = None  # JSON-RPC: null when the id cannot be read
                error = exc.to_response_error()
                error.message = f"evalspec: invalid params for {data['method']!s:.100}: {_why(exc)}"
                self._send_response(msg_id, None, error)
            return _ANSWERED

    def handle_message(self, message: Any) -> None:
        if message is _ANSWERED:
            return
        super().handle_message(message)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        if self._initialized:
            raise JsonRpcInvalidRequest("evalspec: the server is already initialized; 'initialize' may be "
                                        "sent only once")
        self._initialized = True
        return (yield from super().lsp_initialize(params))


class _Decoded:
    """A message body, decoded only if a log line is written (DEBUG): never for a filtered one."""

    __slots__ = ("body",)

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __str__(self) -> str:
        return self.body.decode("utf-8", "replace")


def _why(exc: JsonRpcException) -> str:
    """The validation errors behind `exc`, one line each (`invalid value ... @ $.params.position.line`)."""
    cause = exc.__cause__
    try:
        lines = transform_error(cause) if cause is not None else []
    except Exception:
        lines = []
    return "; ".join(lines[:5]) or str(cause or exc)
