"""The sixth attack round's findings in the guard (server/guard.py), each from its reproducer
(`python bench/attack.py guard`).

- A request id of 1.1 MB: the server's answer names it in a header line past the guard's line limit;
  the guard took that for a dead server, waited for an exit that never came, and answered every
  later request "busy" for the rest of the session.
- A server whose output stops being frames (a header line past 1 MB, a header block without a length,
  its output closed while it runs): the same endless "busy", or every later answer lost (the guard
  passed empty frames on and marked the requests answered). Now the server is stopped and started again.
- A hung server and `exit`: the guard waited for it for ever.
- A request reusing `initialize`'s id, queued when the server died: it got the replayed initialize's
  answer, then its own (two answers for one id).

The seventh round's (held from the sixth):

- `shutdown` to a hung server (SIGSTOPped, or stuck in one C call) was never answered: the editor
  waited for its own timeout. The guard answers it itself after a bound; `exit` then stops the server.
- A server stuck in the middle of an answer (its header written, part of its body, then nothing) looked
  busy for ever and was never restarted; likewise one stuck inside a header block.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .raw_stdio import HANG_GUARD_S, Raw
from .session import FAULTY_SERVER
from .test_guard import GOOD, hover

# A stand-in server for the guard: answers like the real one under a guard (Evalspec-Response-Id
# headers, each answer's `start` the number of the process: 0, then 1 after a restart) and, asked
# `evil/now`, breaks its output as its mode says and lives on.
BACKEND = r'''
import json, os, sys, time
mode, starts_file = sys.argv[1], sys.argv[2]
with open(starts_file, "a") as f:
    f.write(f"{os.getpid()}\n")
starts = len(open(starts_file).read().split()) - 1
inp, out = sys.stdin.buffer, sys.stdout.buffer

def send(obj, rid):
    body = json.dumps(obj).encode()
    out.write(b"Content-Length: %d\r\nEvalspec-Response-Id: %s\r\n\r\n" % (len(body), json.dumps(rid).encode()) + body)
    out.flush()

while True:
    length = 0
    while (line := inp.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if not line:
        sys.exit(0)
    msg = json.loads(inp.read(length))
    if msg.get("method") == "exit":
        sys.exit(0)
    if "id" not in msg:
        continue
    if msg["method"] == "evil/now":
        if mode == "header-line-over-1mb":
            out.write(b"X" * 1_500_000)
        elif mode == "frame-without-length":
            out.write(b"Content-Type: x\r\n\r\nxxxx")  # every header after it glued to the x's
        elif mode == "output-closed":
            out.flush()
            os.close(1)
        elif mode == "hung":
            time.sleep(3600)
        elif mode == "frame-stalled":  # an answer's header, 10 of its 100 bytes, then nothing
            out.write(b"Content-Length: 100\r\nEvalspec-Response-Id: %s\r\n\r\n" % json.dumps(msg["id"]).encode()
                      + b'{"jsonrpc"')
            out.flush()
            time.sleep(3600)
        elif mode == "header-stalled":  # a header line, and the rest of the header block never comes
            out.write(b"Content-Length: 100\r\n")
            out.flush()
            time.sleep(3600)
        elif mode == "frame-slow":  # an answer that takes 14 s to write, a byte at a time: not stuck
            body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"slow": True}}).encode()
            out.write(b"Content-Length: %d\r\nEvalspec-Response-Id: %s\r\n\r\n" % (len(body), json.dumps(msg["id"]).encode()))
            out.flush()
            for i in range(len(body)):
                out.write(body[i:i + 1])
                out.flush()
                time.sleep(14 / len(body))
            continue
        out.flush()
        time.sleep(3600 if mode in ("output-closed", "hung") else 0)
        continue
    result = {"capabilities": {}} if msg["method"] == "initialize" else {"start": starts}
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result}, msg["id"])
'''


@contextlib.contextmanager
def guarded(tmp_path: Path, mode: str) -> Iterator[tuple[Raw, Path]]:
    """A client of the guard over the stand-in server in `mode`, and the file its starts are noted in;
    afterwards every server it started is gone."""
    script = tmp_path / "backend.py"
    script.write_text(BACKEND)
    starts = tmp_path / "starts"
    starts.write_text("")
    command = [sys.executable, "-c", "import asyncio, sys\nfrom evalspec_lsp import guard\n"
               "sys.exit(asyncio.run(guard.serve([sys.executable, *sys.argv[1:]])))", str(script), mode, str(starts)]
    client = Raw(tmp_path, command)
    try:
        yield client, starts
    finally:
        client.close()
        for pid in pids(starts):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def served_ping(client: Raw, pause: float) -> dict[str, object]:
    """Pings until one is served (the guard answers "busy" meanwhile): that answer's result."""
    end = time.monotonic() + HANG_GUARD_S
    n = 0
    while True:
        n += 1
        client.send({"id": n, "method": "x/ping", "params": {}})
        reply = client.reply(n)
        if "result" in reply:
            return reply["result"]
        assert time.monotonic() < end, reply
        time.sleep(pause)


def pids(starts: Path) -> list[int]:
    return [int(x) for x in starts.read_text().split()]


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_request_id_over_64kb_is_refused_and_the_server_serves_on(tmp_path: Path) -> None:
    client = Raw(tmp_path)
    try:
        client.initialize(tmp_path)
        uri = client.open(tmp_path / "a.weval.yml", GOOD)
        big = "i" * 1_100_000
        client.send(hover(big, uri))
        error = client.reply(big)["error"]
        assert error["code"] == -32600 and "at most 65,536 bytes" in error["message"], error["message"][:200]
        ok = "i" * 60_000  # under the limit: the server answers it, through its header line
        client.send(hover(ok, uri))
        assert "result" in client.reply(ok)
        client.send(hover("after", uri))
        assert client.reply("after")["result"]["contents"]
    finally:
        client.close()


@pytest.mark.parametrize("mode", ["header-line-over-1mb", "frame-without-length", "output-closed",
                                  "frame-stalled", "header-stalled"])
def test_a_server_whose_output_is_not_frames_is_stopped_and_started_again(tmp_path: Path, mode: str) -> None:
    with guarded(tmp_path, mode) as (client, starts):
        client.initialize(tmp_path)
        client.send({"id": "evil", "method": "evil/now", "params": {}})
        assert "error" in client.reply("evil")  # the guard's: busy, or the process stopped
        assert served_ping(client, 0.2) == {"start": 1}  # "busy" while it goes; then a new server's answer
        first = pids(starts)[0]
        assert not alive(first)
        told = client.next(lambda m: m.get("method") == "window/showMessage", "window/showMessage")
        assert "restarted" in told["params"]["message"]


def test_a_hung_server_does_not_keep_the_guard_after_exit(tmp_path: Path) -> None:
    with guarded(tmp_path, "hung") as (client, starts):
        client.initialize(tmp_path)
        client.send({"id": "evil", "method": "evil/now", "params": {}})
        assert "busy" in client.reply("evil")["error"]["message"]
        client.send({"method": "exit"})  # without `shutdown` (see test_shutdown_to_a_hung_server_is_answered…)
        assert client.proc.wait(HANG_GUARD_S) == 1  # input still open: the guard ends on `exit` alone
        time.sleep(0.2)
        assert not alive(pids(starts)[0])


def test_a_request_reusing_initializes_id_is_not_given_the_replayed_initialize_answer(tmp_path: Path) -> None:
    client = Raw(tmp_path, FAULTY_SERVER)
    try:
        client.initialize(tmp_path, {"requestBudgetMs": 20_000})  # its id: "init"
        hanging = client.open(tmp_path / "hang.weval.yml", GOOD + "# HANG\n")
        uri = client.open(tmp_path / "a.weval.yml", GOOD)
        # 16 requests wait for an analysis that hangs: the server's places are taken, the next one queues
        for i in range(16):
            client.send({"id": f"w{i}", "method": "textDocument/documentSymbol",
                         "params": {"textDocument": {"uri": hanging}}})
        time.sleep(0.5)
        client.send(hover("init", uri, 3, 4))  # queued in the guard when the server dies
        time.sleep(0.3)
        os.kill(client.server_pid(), signal.SIGKILL)
        reply = client.reply("init")
        assert "capabilities" not in str(reply.get("result")), reply
        assert "result" in reply, reply  # its own answer (a hover), once
        rest = client.drain(1.0)
        assert not [m for m in rest if m.get("id") == "init"], rest
    finally:
        client.close()


def test_a_slow_answer_that_keeps_coming_is_not_taken_for_a_stuck_one(tmp_path: Path) -> None:
    with guarded(tmp_path, "frame-slow") as (client, starts):
        client.initialize(tmp_path)
        client.send({"id": "slow", "method": "evil/now", "params": {}})
        assert "busy" in client.reply("slow")["error"]["message"]
        # Requests wait behind the slow answer all along (each "busy"), then are served by the same server.
        assert served_ping(client, 0.5) == {"start": 0}
        assert len(pids(starts)) == 1


def test_shutdown_to_a_hung_server_is_answered_and_exit_ends_both(tmp_path: Path) -> None:
    with guarded(tmp_path, "hung") as (client, starts):
        client.initialize(tmp_path)
        client.send({"id": "evil", "method": "evil/now", "params": {}})
        assert "busy" in client.reply("evil")["error"]["message"]
        client.send({"id": "bye", "method": "shutdown"})
        assert client.reply("bye") == {"jsonrpc": "2.0", "id": "bye", "result": None}
        client.send({"method": "exit"})
        assert client.proc.wait(HANG_GUARD_S) == 0  # shutdown, then exit: as LSP asks
        time.sleep(0.2)
        assert not alive(pids(starts)[0])


def test_shutdown_to_a_stopped_server_is_answered(tmp_path: Path) -> None:
    client = Raw(tmp_path)  # the real server, SIGSTOPped (a debugger, a suspended job)
    server = 0
    try:
        client.initialize(tmp_path)
        uri = client.open(tmp_path / "a.weval.yml", GOOD)
        client.send(hover("h", uri))
        assert "result" in client.reply("h")
        server = client.server_pid()
        os.kill(server, signal.SIGSTOP)
        client.send({"id": "bye", "method": "shutdown"})
        assert client.reply("bye") == {"jsonrpc": "2.0", "id": "bye", "result": None}
        client.send({"method": "exit"})
        assert client.proc.wait(HANG_GUARD_S) == 0
        time.sleep(0.2)
        assert not alive(server)
    finally:
        if server and alive(server):
            os.kill(server, signal.SIGKILL)
        client.close()
