"""A frame whose header lies does not end the session (the attack run's fourth round, `protocol4`).

A Content-Length that was negative, not a number, two of them, a few bytes short, or headers ending in
LF alone: the server matched pygls's `^Content-Length: (\\d+)\\r\\n$` whole, so the bad frame's body was
read as a header line together with the next message's header, and so on for every later message:
nothing was answered again. Now the bad frame is lost, and the next one is answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_lifecycle_raw import _server


def _frame(msg: dict[str, object]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _hover_frame(msg_id: str, uri: str) -> bytes:
    return _frame({"id": msg_id, "method": "textDocument/hover",
                   "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}})


@pytest.mark.parametrize("bad", [
    b"Content-Length: -5\r\n\r\n",
    b"Content-Length: abc\r\n\r\n",
    b"Content-Length: 3\r\nContent-Length: 300\r\n\r\n",
    "short",
    "lf-only",
])
def test_the_frame_after_a_bad_one_is_answered(tmp_path: Path, bad: object) -> None:
    server = _server(tmp_path)
    try:
        server.initialize(tmp_path)
        uri = (tmp_path / "a.weval.yml").as_uri()
        body = json.dumps({"jsonrpc": "2.0", "id": "lost", "method": "textDocument/hover", "params": {}}).encode()
        if bad == "short":
            data = b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body
        elif bad == "lf-only":  # not a bad frame at all: headers ending in LF are read as well
            data = b"Content-Length: %d\n\n" % len(body) + body
        else:
            data = bad + body  # type: ignore[operator]
        assert server.proc.stdin is not None
        server.proc.stdin.write(data + _hover_frame("next", uri) + _hover_frame("after", uri))
        server.proc.stdin.flush()
        # The frame right after the bad one may be lost with it (its header shares the bad body's
        # line); the one after that is answered.
        if bad == "lf-only":
            assert "id" in server.reply("lost")
        assert "id" in server.reply("after")
    finally:
        server.proc.kill()
        server.proc.wait()
