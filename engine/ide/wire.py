"""The pipe between the language server's LSP process and an engine worker (worker.py): each message
pickled, after its length (8 bytes); and the records sent through it besides texts and answers. Both
ends are the language server's own processes; nothing a client sent is unpickled raw."""

from __future__ import annotations

import asyncio
import os
import pickle
import select
import struct
from dataclasses import dataclass
from typing import Any


@dataclass
class Context:
    """What answers depend on besides the document: the client, its position encoding, the settings."""

    client: Any = None  # the server's ClientSupport
    encoding: str = "utf-16"
    run_diagnostics: bool = True  # failed points as diagnostics (settings: run.diagnostics)
    docs_url: str | None = None  # where diagnostics' codes link (settings: docsUrl)


@dataclass
class Runs:
    """A document's runs as the LSP process last sent them (a RunBoard, and whether one is going on)."""

    board: Any = None
    running: bool = False
    planning: bool = False


_LENGTH = struct.Struct("!Q")


def frame(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


async def read_async(reader: asyncio.StreamReader) -> Any:
    """The next message; asyncio.IncompleteReadError when the pipe is closed."""
    header = await reader.readexactly(_LENGTH.size)
    return pickle.loads(await reader.readexactly(_LENGTH.unpack(header)[0]))


class Incoming:
    """The worker's end, read without a thread: `next()` blocks for one message; `ready(timeout)` says
    whether one is there to read (waiting up to `timeout` seconds for one to start)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def _complete(self) -> bool:
        if len(self.buffer) < _LENGTH.size:
            return False
        return len(self.buffer) >= _LENGTH.size + _LENGTH.unpack_from(self.buffer)[0]

    def _fill(self) -> None:
        data = os.read(self.fd, 1 << 20)
        if not data:
            raise EOFError
        self.buffer += data

    def ready(self, timeout: float = 0) -> bool:
        while not self._complete():
            if not select.select([self.fd], [], [], timeout)[0]:
                return False
            self._fill()
        return True

    def next(self) -> Any:
        while not self._complete():
            self._fill()
        n = _LENGTH.size + _LENGTH.unpack_from(self.buffer)[0]
        message = pickle.loads(memoryview(self.buffer)[_LENGTH.size:n])
        del self.buffer[:n]
        return message
