"""The server's message loop (server/stdio.py): pygls's framing, orjson decoding, and each message
stamped with the time its first line arrived (the request budget counts from there)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from typing import Any

from evalspec_lsp.stdio import arrived, is_pipe, pipe_reader, read_messages

GUARD_S = 20.0


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Recorder:
    def __init__(self) -> None:
        self.messages: list[tuple[Any, float | None, float]] = []  # (message, arrived, handled at)

    def handle_message(self, message: Any) -> None:
        self.messages.append((message, arrived.get(), time.perf_counter()))


class Fed:
    """An AsyncReader over chunks given by the test, with a pause before the body of a message."""

    def __init__(self, data: bytes, pause_before_body: float = 0.0) -> None:
        self.data, self.pause = data, pause_before_body

    async def readline(self) -> bytes:
        i = self.data.find(b"\n")
        line, self.data = (self.data, b"") if i < 0 else (self.data[:i + 1], self.data[i + 1:])
        return line

    async def readexactly(self, n: int) -> bytes:
        await asyncio.sleep(self.pause)
        if len(self.data) < n:
            self.data = b""
            return b""
        body, self.data = self.data[:n], self.data[n:]
        return body


def test_messages_are_framed_decoded_and_stamped_when_they_began_to_arrive() -> None:
    data = frame({"jsonrpc": "2.0", "id": 1, "method": "a", "params": {"x": "\u00e9"}}) \
        + b"garbage that is no header\r\n" + frame({"jsonrpc": "2.0", "method": "b"})
    recorder, errors = Recorder(), []
    began = time.perf_counter()
    asyncio.run(read_messages(threading.Event(), Fed(data, pause_before_body=0.05), recorder,
                              lambda exc, kind: errors.append(exc)))
    assert [m for m, _, _ in recorder.messages] == [
        {"jsonrpc": "2.0", "id": 1, "method": "a", "params": {"x": "\u00e9"}}, {"jsonrpc": "2.0", "method": "b"}]
    for _, came, handled in recorder.messages:
        assert came is not None and began <= came < handled  # before its body was read
    assert arrived.get() is None and not errors


def test_a_body_that_is_no_json_is_reported_and_the_next_message_is_read() -> None:
    body = b"{not json"
    data = b"Content-Length: %d\r\n\r\n" % len(body) + body + frame({"jsonrpc": "2.0", "method": "b"})
    recorder, errors = Recorder(), []
    asyncio.run(read_messages(threading.Event(), Fed(data), recorder, lambda exc, kind: errors.append(exc)))
    assert [m for m, _, _ in recorder.messages] == [{"jsonrpc": "2.0", "method": "b"}]
    assert len(errors) == 1 and isinstance(errors[0], ValueError)


def test_input_that_ends_inside_a_message_ends_the_loop() -> None:
    data = frame({"jsonrpc": "2.0", "method": "b"})[:-3]
    recorder = Recorder()
    asyncio.run(asyncio.wait_for(read_messages(threading.Event(), Fed(data), recorder, lambda e, k: None), GUARD_S))
    assert recorder.messages == []


def test_a_pipe_is_read_on_the_loop_with_over_long_lines_skipped() -> None:
    read_fd, write_fd = os.pipe()
    big = {"jsonrpc": "2.0", "method": "big", "params": {"text": "x" * 3_000_000}}  # more than a pipe holds
    data = b"X" * (3 << 20) + b"\r\n" + frame(big) + frame({"jsonrpc": "2.0", "method": "b"})

    def write() -> None:
        with os.fdopen(write_fd, "wb") as out:
            out.write(data)

    recorder = Recorder()

    async def main() -> None:
        with os.fdopen(read_fd, "rb") as pipe:
            assert is_pipe(pipe)
            reader = await pipe_reader(pipe)
            writer = threading.Thread(target=write)
            writer.start()
            await read_messages(threading.Event(), reader, recorder, lambda e, k: None)
            writer.join(GUARD_S)

    asyncio.run(asyncio.wait_for(main(), GUARD_S))
    assert [m.get("method") for m, _, _ in recorder.messages] == ["big", "b"]
    assert recorder.messages[0][0] == big


def test_a_body_nested_too_deeply_goes_to_unreadable_and_the_next_message_is_read() -> None:
    deep = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    data = b"Content-Length: %d\r\n\r\n" % len(deep) + deep + frame({"jsonrpc": "2.0", "method": "b"})
    recorder, unreadable, errors = Recorder(), [], []
    asyncio.run(read_messages(threading.Event(), Fed(data), recorder, lambda e, k: errors.append(e),
                              unreadable=unreadable.append))
    assert unreadable == [deep] and not errors
    assert [m for m, _, _ in recorder.messages] == [{"jsonrpc": "2.0", "method": "b"}]
