"""LSP base-protocol frames on a raw pipe, for the benchmarks that drive a server by hand
(lsp_big.py, open_many.py): each message read, with the time it was whole."""

from __future__ import annotations

import json
import queue
import time
from typing import IO, Any


def read_frames(out: IO[bytes], inbox: queue.Queue[tuple[float, dict[str, Any]]]) -> None:
    """Every message on `out` into `inbox` as (perf_counter when read, message), until end of file.
    Byte by byte up to the blank line: a buffered read would hide when a message arrived."""
    while True:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            c = out.read(1)
            if not c:
                return
            header += c
        length = next(int(line.split(b":")[1]) for line in header.split(b"\r\n")
                      if line.lower().startswith(b"content-length"))
        body = out.read(length)
        inbox.put((time.perf_counter(), json.loads(body)))


def frame(msg: dict[str, Any]) -> bytes:
    data = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data
