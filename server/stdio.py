"""Messages read from stdin on the event loop itself, each stamped with the time it arrived.

pygls reads stdin through a thread pool: each header line and each body is a call handed to a worker
thread and its result handed back to the loop, three round trips a message, each waiting for the
interpreter lock twice. While workers analyse a large file on a loaded machine every such wait can
last tens of milliseconds. When stdin is a pipe or a socket (as editors start language servers), it
is read here with asyncio's own pipe transport instead: the loop's selector sees the data arrive, and
no other thread is involved (the loop watch, `loop_watch.py`, then sees it too). Anything else (a
file, a terminal) keeps pygls's reader.

`read_messages` is pygls's message loop (`pygls.io_.run_async`: the same errors) with three changes:
frames are read by `framing.read_frames` (one whose length lies is lost, not the session), a body is
decoded by orjson (`jsonio.loads`; the standard decoder took ~40 ms on the loop for a code action
carrying 12,000 diagnostics), and the time its first line arrived is set
in `arrived` for the handler's task, so that the request budget counts the time spent reading and
decoding it too: on a loaded machine that alone was a few hundred milliseconds of the 1 s promise.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import fcntl
import json
import logging
import os
import stat
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO, Protocol

from pygls.exceptions import JsonRpcException

from evalspec import jsonio

from .framing import ByteSource, read_frames
from .message_order import MessageOrder

log = logging.getLogger(__name__)

# When the message being handled started to arrive (perf_counter); tasks created while it is handled
# (a request's handler) inherit it.
arrived: contextvars.ContextVar[float | None] = contextvars.ContextVar("evalspec_lsp_arrived", default=None)

_ENDS = ("shutdown", "exit")  # pygls cancels the requests still being handled at the first, exits at the second

class MessageHandler(Protocol):
    def handle_message(self, message: Any) -> None: ...


async def read_messages(stop: threading.Event, reader: ByteSource, protocol: MessageHandler,
                        on_error: Callable[[Exception, Any], Any],
                        before_end: Callable[[], Awaitable[None]] | None = None,
                        unreadable: Callable[[bytes], None] | None = None) -> None:
    """Read framed JSON-RPC messages until the input ends or `stop` is set; hand each to `protocol`
    (`shutdown` and `exit` after `before_end()`); a body nested too deeply to decode goes to
    `unreadable` (which answers the request inside it, if it is one).

    Messages are read ahead of their handling (up to `READ_AHEAD_BYTES`) and handled in the order
    `message_order.MessageOrder` gives: a request about one document before the notifications about
    other documents read before it."""
    order = MessageOrder()
    read = asyncio.Event()  # a message was read, or the input ended
    room = asyncio.Event()  # the read-ahead is below its bound
    room.set()
    ended = False

    async def read_ahead() -> None:
        nonlocal ended
        try:
            count = 0
            async for frame in read_frames(reader):
                order.add(*_decoded(frame.body, unreadable is not None), started=frame.started, size=len(frame.body))
                read.set()
                count += 1
                if order.size > READ_AHEAD_BYTES or order.count > READ_AHEAD_MESSAGES:
                    room.clear()
                    await room.wait()
                elif count % 64 == 0:  # a flood already buffered: the loop's other work gets its turns
                    await asyncio.sleep(0)
        finally:
            ended = True
            read.set()

    reading = asyncio.ensure_future(read_ahead())
    try:
        while not stop.is_set():
            item = order.next()
            if item is None:
                if ended:
                    break
                read.clear()
                await read.wait()
                continue
            if not room.is_set() and order.size <= READ_AHEAD_BYTES // 2 and order.count <= READ_AHEAD_MESSAGES // 2:
                room.set()
            arrived.set(item.started)
            try:
                if isinstance(item.payload, bytes) and unreadable is not None:
                    unreadable(item.payload)
                    continue
                if isinstance(item.payload, Exception):
                    raise item.payload
                message = item.message
                if item.passed:
                    log.info("%s went ahead of %d notifications about other documents",
                             message.get("method") or "a response", item.passed)
                if before_end is not None and isinstance(message, dict) and message.get("method") in _ENDS:
                    await before_end()
                protocol.handle_message(message)
            except Exception as exc:
                log.exception("Unable to handle message")
                on_error(exc, JsonRpcException)
            finally:
                arrived.set(None)
            # Let the tasks this message started (a request's handler) and other callbacks run before
            # the next message is handled.
            await asyncio.sleep(0)
    finally:
        reading.cancel()
    failed = reading.exception() if reading.done() and not reading.cancelled() else None
    if failed is not None:
        raise failed


def _decoded(body: bytes, answers_unreadable: bool) -> tuple[Any, Any]:
    """(the message, None), or (None, what went wrong): the exception, or the body nested too deeply
    to decode when there is someone to answer it."""
    try:
        message = jsonio.loads(body)
        if isinstance(message, dict) and type(message.get("id")) is float:
            # orjson reads an integer past 64 bits as a double; the answer must carry the
            # id as sent (an id of 2**70 was answered as 1.1805916207174113e+21)
            with contextlib.suppress(RecursionError):
                message = json.loads(body, parse_int=jsonio.bounded_int)
        return message, None
    except jsonio.NestedTooDeeply as exc:
        return None, body if answers_unreadable else exc
    except Exception as exc:  # not JSON: reported when its turn comes
        return None, exc


# What is read ahead of handling, at most (a client past it waits in its pipe): a flood of small
# notifications, or a few 4 MB documents and their edits.
READ_AHEAD_BYTES = 32 << 20
READ_AHEAD_MESSAGES = 50_000
PIPE_SIZE = 1 << 20  # bytes a read of stdin may return (see pipe_reader)
LINE_LIMIT = 1 << 20  # a header line longer than this is skipped as garbage (framing.read_frames)


def is_pipe(stream: BinaryIO) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def pipe_reader(pipe: BinaryIO) -> asyncio.StreamReader:
    """`pipe` read by asyncio's pipe transport on the running loop (what `read_messages` reads)."""
    loop = asyncio.get_running_loop()
    # A pipe holds 64 KB: a 3 MB message (a code action with 12,000 diagnostics) came in 45 reads,
    # each a turn of the loop that had to win the interpreter lock back from the workers. With
    # room for 1 MB (Linux lets any process grow its pipes that far) and reads as large, it is 3.
    with contextlib.suppress(OSError, AttributeError, ValueError):
        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
    stream = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream, loop=loop), pipe)
    if isinstance(getattr(transport, "max_size", None), int):  # asyncio's unix pipe transport: 256 KB
        transport.max_size = PIPE_SIZE  # type: ignore[attr-defined]
    return stream
