"""A run's provider POSTs made in a second process: the parent's side (`HttpProcess`) and the child's loop.

A run is one Python process on one core; aiohttp's work for a call (the request, the socket's events, the
response's parse) is about as much CPU as the minimal client's whole call. `DirectClient.post_direct`
(http.py) hands the exchange to this child instead, so that it runs on a second core beside the cell's
other work: the parent sends the URL, body, headers and size cap, the child makes the POST on its own
aiohttp session (aiohttp_session.post_aiohttp: the same bytes on the wire) and sends back the status,
reason, headers and body. Everything else stays in the parent: retries, rate-limit lanes, the one deadline
(a cancelled call cancels the child's request, which drops its connection as aiohttp does), the cache,
the database. A failure of the exchange comes back as what it was (a connection error described as aiohttp
described it, an answer over the cap), so post_json makes the same ProviderError of it.

Frames both ways: 4 bytes of length, then a marshal of a tuple of plain values (the pipe joins two
processes of this program; nothing else writes to it). Frames written in one pass of the loop go in one
write. The child exits when the pipe closes (the run ended), is killed with its parent (Linux's
PR_SET_PDEATHSIG) and ignores SIGINT (a Ctrl-C is the parent's to handle). If the child ends early, the calls it held fail as connection
errors (retried) and the run's later calls are made in the parent, as without it.

`EVALSPEC_HTTP_PROCESS=0` turns it off; `1` turns it on for every run (the tests do: their runs then go
through it); unset, `evalspec run` turns it on (`enable()`). A client with its own TLS context (not
picklable) or a proxy (httpx's path) makes its calls in the parent.
"""

from __future__ import annotations

import asyncio
import marshal
import os
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

_LENGTH = struct.Struct("<I")
_ENV = "EVALSPEC_HTTP_PROCESS"

# message kinds: parent → child
_SESSION, _POST, _CANCEL, _CLOSE = 0, 1, 2, 3
# child → parent
_ANSWER, _TOO_LARGE, _FAILED, _BROKEN, _READY = 0, 1, 2, 3, 4

START_WITHIN = 30.0  # seconds a child may take to start (its interpreter and aiohttp) before it is given up

_enabled = False
_current: HttpProcess | None = None


def enable() -> None:
    """Make the calls of this process's runs in a child process (unless EVALSPEC_HTTP_PROCESS=0), and start
    it now, so that it is ready (aiohttp imported) by the time the file is checked and the first call goes."""
    global _enabled, _current
    _enabled = True
    if _current is None and _wanted():
        _current = _start()


def _wanted() -> bool:
    setting = os.environ.get(_ENV, "")
    return setting == "1" or (setting != "0" and _enabled)


class RemoteConnectionError(ConnectionError):
    """The child's exchange failed as aiohttp fails one (or the child ended): a connection error, retryable.
    `description` is what http_errors.describe_failure says of the exception the child saw."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class HttpProcess:
    """The parent's end: one child, the pipe to it, the calls waiting for their answers."""

    def __init__(self, child: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.child = child
        self._sock: socket.socket | None = sock
        self._loop: asyncio.AbstractEventLoop | None = None
        self._transport: asyncio.Transport | None = None
        self._attached: asyncio.Future[None] | None = None
        self.ended = False
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._next = 0
        self._sessions: dict[tuple[int, bool, int], int] = {}  # each client's session in the child
        self._session_count = 0
        self._out: list[bytes] = []
        self._buffer = bytearray()
        self.said_ready = False  # the child has said it is ready
        self._ready: asyncio.Future[None] | None = None

    # --- the pipe ----------------------------------------------------------------------------------
    async def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._attached is None:
            self._attached = loop.create_future()
            try:
                assert self._sock is not None
                await loop.create_connection(lambda: _ParentProtocol(self), sock=self._sock)
            except Exception as exc:
                self._end()
                failed = RemoteConnectionError(f"the HTTP process could not be reached ({type(exc).__name__})")
                self._attached.set_exception(failed)
                self._attached.exception()  # retrieved: each waiting call is told
                raise failed from None
            self._attached.set_result(None)
        await self._attached

    def usable(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether this loop's calls can go through the child (one loop per child: the pipe is its)."""
        if self.ended:
            return False
        if self._loop is None:
            self._loop = loop
        return self._loop is loop

    def _send(self, message: tuple[Any, ...]) -> None:
        data = marshal.dumps(message)
        if not self._out:
            assert self._loop is not None
            self._loop.call_soon(self._flush)
        self._out.append(_LENGTH.pack(len(data)))
        self._out.append(data)

    def _flush(self) -> None:
        out, self._out = self._out, []
        if self._transport is not None and not self.ended:
            self._transport.write(b"".join(out))

    # --- a call ------------------------------------------------------------------------------------
    async def post(self, session: tuple[int, bool, int], url: str, encoded: bool, body: bytes,
                   headers: Mapping[str, str], cap: int) -> tuple[int, str, Any, bytes]:
        if self._transport is None:
            assert self._loop is not None
            await self._attach(self._loop)
        if self.ended:
            raise RemoteConnectionError("the HTTP process has ended")
        number = self._sessions.get(session)
        if number is None:
            number = self._sessions[session] = self._session_count
            self._session_count += 1
            self._send((_SESSION, number, session[1], session[2]))
        self._next += 1
        call = self._next
        assert self._loop is not None
        answer: asyncio.Future[Any] = self._loop.create_future()
        self._waiting[call] = answer
        self._send((_POST, call, number, url, encoded, body, headers if type(headers) is dict else dict(headers), cap))
        try:
            found = await answer
        except asyncio.CancelledError:
            if self._waiting.pop(call, None) is not None and not self.ended:
                self._send((_CANCEL, call))
            raise
        kind = found[0]
        if kind == _ANSWER:
            from multidict import CIMultiDict

            return found[1], found[2], CIMultiDict(found[3]), found[4]
        if kind == _TOO_LARGE:
            from .aiohttp_session import TooLarge

            raise TooLarge(found[1], found[2])
        if kind == _FAILED:
            raise RemoteConnectionError(found[1])
        raise RuntimeError(f"the HTTP process failed: {found[1]}")

    async def close_session(self, session: tuple[int, bool, int]) -> None:
        """A client closed: its session in the child too; the last one closes the pipe (the child exits, so
        that a run's child ends with the run's client, whoever ran it)."""
        number = self._sessions.pop(session, None)
        if number is not None and not self.ended and self._transport is not None:
            self._send((_CLOSE, number))
        if not self._sessions and not self.ended:
            self._flush()
            self.ended = True
            if self._transport is not None:
                self._transport.close()
            elif self._sock is not None:
                self._sock.close()

    async def ready(self) -> None:
        """Wait until the child has aiohttp loaded and reads the pipe, or has ended; one that is not ready
        within START_WITHIN seconds is given up (the calls are the parent's)."""
        if self._transport is None:
            assert self._loop is not None
            await self._attach(self._loop)
        if self._ready is None:
            assert self._loop is not None
            self._ready = self._loop.create_future()
            if self.said_ready or self.ended:
                self._ready.set_result(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), START_WITHIN)
        except TimeoutError:
            self._end()
            self.child.kill()

    def _is_ready(self) -> None:
        self.said_ready = True
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(None)

    # --- answers -----------------------------------------------------------------------------------
    def _received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        at, end = 0, len(buffer)
        waiting = self._waiting
        view = memoryview(buffer)
        try:
            while end - at >= 4:
                (size,) = _LENGTH.unpack_from(buffer, at)
                if end - at - 4 < size:
                    break
                message = marshal.loads(view[at + 4:at + 4 + size])
                at += 4 + size
                if message[0] == _READY:
                    self._is_ready()
                    continue
                answer = waiting.pop(message[1], None)
                if answer is not None and not answer.done():
                    answer.set_result((message[0], *message[2:]))
        finally:
            view.release()
        del buffer[:at]

    def _end(self) -> None:
        """The pipe closed: every waiting call fails as a connection error; later calls are the parent's."""
        self.ended = True
        self._is_ready()  # (nothing more will come)
        waiting, self._waiting = self._waiting, {}
        for answer in waiting.values():
            if not answer.done():
                answer.set_exception(RemoteConnectionError("the HTTP process ended"))
        if self._transport is not None:
            self._transport.close()

    def close(self, *, wait: bool = True) -> None:
        """Close the pipe (the child exits) and reap the child (waiting at most 0.5 s, then killing it; or,
        not `wait`ing, if it has ended: else subprocess reaps it later)."""
        self.ended = True
        if self._transport is not None and self._loop is not None and not self._loop.is_closed():
            self._transport.close()
        if self._sock is not None:  # (its loop gone, the transport cannot close it)
            self._sock.close()
            self._sock = None
        if not wait:
            self.child.poll()
            return
        try:
            self.child.wait(0.5)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()


class _ParentProtocol(asyncio.Protocol):
    def __init__(self, owner: HttpProcess) -> None:
        self.owner = owner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.owner._transport = transport

    def data_received(self, data: bytes) -> None:
        self.owner._received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner._end()


def for_loop(loop: asyncio.AbstractEventLoop) -> HttpProcess | None:
    """The child this loop's calls go through, started now if none is (None: the calls are the parent's)."""
    global _current
    if not _wanted():
        return None
    found = _current
    if found is not None and found.usable(loop):
        return found
    if found is not None:
        if not found.ended and found._loop is not None and not found._loop.is_closed():
            return None  # another loop's, still running: this loop's calls are its own
        found.close(wait=False)  # an earlier run's: a new child for this one
    _current = _start()
    return _current if _current.usable(loop) else None


async def ready() -> None:
    """Wait until the running loop's child (if its calls have one) is ready: a caller that times its calls
    from the first (a test) does not count the child's start."""
    found = for_loop(asyncio.get_running_loop())
    if found is not None:
        await found.ready()


def _start() -> HttpProcess:
    parent, child = socket.socketpair()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "evalspec.providers.http_process", str(child.fileno()), str(os.getpid())],
            pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True)
    finally:
        child.close()
    parent.setblocking(False)
    return HttpProcess(process, parent)


def stop() -> None:
    """Close this process's child, if any (at the end of `evalspec run`)."""
    global _current
    if _current is not None:
        _current.close()
        _current = None


# --- the child ----------------------------------------------------------------------------------------

class _Child(asyncio.Protocol):
    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.sessions: dict[int, Any] = {}
        self.calls: dict[int, asyncio.Task[None]] = {}
        self.out: list[bytes] = []
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.send((_READY, 0))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        at, end = 0, len(buffer)
        while end - at >= 4:
            (size,) = _LENGTH.unpack_from(buffer, at)
            if end - at - 4 < size:
                break
            message = marshal.loads(bytes(buffer[at + 4:at + 4 + size]))
            at += 4 + size
            self.handle(message)
        del buffer[:at]

    def handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == _POST:
            call = message[1]
            task = self.loop.create_task(self.post(*message[1:]))
            self.calls[call] = task
        elif kind == _CANCEL:
            waiting = self.calls.pop(message[1], None)
            if waiting is not None:
                waiting.cancel()
        elif kind == _SESSION:
            from .aiohttp_session import session_factory

            self.sessions[message[1]] = session_factory(message[2], message[3], 30.0)
        elif kind == _CLOSE:
            session = self.sessions.pop(message[1], None)
            if session is not None and not callable(session):
                self.loop.create_task(session.close())

    def session(self, number: int) -> Any:
        found = self.sessions[number]
        if callable(found):  # its factory: made in the loop on first use
            found = self.sessions[number] = found()
        return found

    async def post(self, call: int, number: int, url: str, encoded: bool, body: bytes, headers: dict[str, str],
                   cap: int) -> None:
        from .aiohttp_session import TooLarge, post_aiohttp

        try:
            target: Any = url
            if encoded:  # a yarl.URL's text: the same URL again (a str goes to aiohttp as the parent's did)
                from yarl import URL

                target = URL(url, encoded=True)
            status, reason, resp_headers, content = await post_aiohttp(self.session(number), target, body, headers,
                                                                       cap)
            reply: tuple[Any, ...] = (_ANSWER, call, status, reason,
                                      [(str(k), str(v)) for k, v in resp_headers.items()], content)
        except asyncio.CancelledError:
            return
        except TooLarge as exc:
            reply = (_TOO_LARGE, call, exc.status, str(exc))
        except Exception as exc:
            from .http_errors import describe_failure, transport_failure

            reply = (_FAILED, call, describe_failure(exc)) if transport_failure(exc) is not None else \
                (_BROKEN, call, f"{type(exc).__name__}: {exc}")
        finally:
            self.calls.pop(call, None)
        self.send(reply)

    def send(self, message: tuple[Any, ...]) -> None:
        try:
            data = marshal.dumps(message)
        except ValueError as exc:  # not plain values: a bug, told to the call rather than leaving it waiting
            data = marshal.dumps((_BROKEN, message[1], f"an answer that cannot be sent back ({exc})"))
        if not self.out:
            self.loop.call_soon(self.flush)
        self.out.append(_LENGTH.pack(len(data)))
        self.out.append(data)

    def flush(self) -> None:
        out, self.out = self.out, []
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(out))

    async def close(self) -> None:
        for task in list(self.calls.values()):
            task.cancel()
        for session in self.sessions.values():
            if not callable(session):
                await session.close()


async def _serve(fd: int) -> None:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    sock = socket.socket(fileno=fd)
    sock.setblocking(False)
    _, child = await loop.create_connection(lambda: _Child(done), sock=sock)
    try:
        await done
    finally:
        await child.close()


def _die_with(parent: int) -> None:
    """On Linux, be killed the moment the parent dies (a SIGKILLed run's calls stop with it, as they would
    in its own process, rather than when this process reads the pipe's end)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before that was asked
        os._exit(0)


def main(argv: list[str]) -> int:
    _die_with(int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's: it ends the run, then the pipe
    import gc

    gc.disable()  # as the CLI: nothing here makes reference cycles that must be freed during a run
    from .aiohttp_session import load_aiohttp

    load_aiohttp()  # now, while the parent checks the file
    asyncio.run(_serve(int(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
