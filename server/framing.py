"""LSP's base protocol: messages framed by a `Content-Length` header, read and written (stdlib only).

One reader for the three streams that carry frames: the client's input to the guard (`guard.py`), the
server's output to the guard, and the server's own input (`stdio.py`). It imports nothing but the
standard library, so the guard, which must start in a few tens of milliseconds, can use it.

The length is taken from the END of a header line, any case, LF or CRLF. pygls matched
`^Content-Length: (\\d+)\\r\\n$` against the whole line: after one frame whose length lied or was no number,
every later body was read as a header line together with the next message's header, and no message was
ever handled again. Here what came before the header on its line is the rest of a bad frame, so one bad
frame is lost, not the session (`tests/lsp/test_framing_raw.py`).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

CONTENT_LENGTH = re.compile(rb"Content-Length: *(\d+)\r?\n\Z", re.IGNORECASE)
OVER_LONG = b"(an over-long header line)\r\n"  # what a line past the reader's limit reads as


class ByteSource(Protocol):
    """asyncio.StreamReader's two reads (pygls's readers have them too; theirs return b"" at the end)."""

    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


@dataclass(frozen=True, slots=True)
class Frame:
    body: bytes
    started: float  # the clock when its first header line arrived: a request's time counts from there
    tag: bytes | None = None  # the value of the header named by `read_frames(tag=)`, if it had one


def frame(body: bytes, extra: bytes = b"") -> bytes:
    """`body` framed; `extra` is more header lines, each ending in CRLF."""
    return b"Content-Length: %d\r\n%s\r\n" % (len(body), extra) + body


async def read_frames(reader: ByteSource, *, clock: Callable[[], float] = time.perf_counter,
                      tag: bytes | None = None) -> AsyncIterator[Frame]:
    """The frames of `reader` until its end (an end inside a frame ends it too). A header line over the
    reader's limit (ValueError) is skipped; `tag`, a lower-case header name, is read into `Frame.tag`."""
    prefix = tag + b":" if tag is not None else None
    content_length = 0
    started: float | None = None
    tagged: bytes | None = None
    while True:
        try:
            header = await reader.readline()
        except ValueError:  # longer than the reader's limit (asyncio dropped it)
            header = OVER_LONG
        if not header:
            return
        if started is None:
            started = clock()
        if not content_length:
            match = CONTENT_LENGTH.search(header)
            if match:
                content_length = int(match.group(1))
        if prefix is not None and header[:len(prefix)].lower() == prefix:
            tagged = header[len(prefix):].strip()
        if content_length and not header.strip():
            try:
                body = await reader.readexactly(content_length)
            except asyncio.IncompleteReadError:
                return
            if len(body) < content_length:  # pygls's reader says the end so
                return
            yield Frame(body, started, tagged)
            content_length, started, tagged = 0, None, None
