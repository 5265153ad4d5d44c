"""pygls's JSON-RPC protocol with the answers it leaves out.

- A request whose params fail validation (a negative position, a line of 2^31, `references` without
  its `context`) is answered with InvalidParams. pygls raises while it decodes the message, before it
  knows it is a request, so the client got no reply at all and waited forever.
- A second `initialize` is refused (InvalidRequest). pygls would build a new, empty workspace, and every
  later change to a document opened before it failed.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from cattrs import transform_error
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

# What `structure_message` returns for a message it already answered: `handle_message` drops it.
_ANSWERED = object()


class EvalspecProtocol(LanguageServerProtocol):
    _initialized = False

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


def _why(exc: JsonRpcException) -> str:
    """The validation errors behind `exc`, one line each (`invalid value ... @ $.params.position.line`)."""
    cause = exc.__cause__
    try:
        lines = transform_error(cause) if cause is not None else []
    except Exception:
        lines = []
    return "; ".join(lines[:5]) or str(cause or exc)
