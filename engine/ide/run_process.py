"""An editor's run in a process of its own (`python -m evalspec.ide.run_process`), started by the
language server so that its own process never loads the runner nor waits on the network; and the
server's end of it (`RunProcess`: starts it, feeds a RunBoard its events, stops it).

stdin: the run's plan and options, pickled by the engine worker that planned it (`run_input`); then
nothing, and its end (the server gone) cancels the run. stdout: the run's events as JSON lines, as
`evalspec run --json` writes them (run/events.py, docs/cli.md), then, when the run did not finish,
one line saying why:

    {"type": "stopped", "files": [...]}      cancelled (SIGTERM, SIGINT or stdin closed): the results
                                             files of what finished, and the run database says
                                             "cancelled", with the calls in flight
    {"type": "refused", "message": ...}      another process holds the run's lock; nothing was run
    {"type": "unwritable", "message": ...}   the results folder cannot be written
    {"type": "failed", "message": ...}       a bug, with its traceback

API keys come from this process's environment (the server's). Killed, it loses no finished call:
the run database is the record. Only `main` loads the runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pickle
import signal
import sys
import traceback
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..run.events import Event, RunFinished
from .runs import RunBoard

STOPPED, REFUSED, UNWRITABLE, FAILED = "stopped", "refused", "unwritable", "failed"
FINISHED, ENDED = "finished", "ended"  # and, seen from the server: the run finished; the process ended without a word
COMMAND = [sys.executable, "-m", "evalspec.ide.run_process"]
KILL_AFTER_S = 10.0  # a run told to stop that has not ended within this is killed (its database keeps what finished)
LINE_LIMIT = 1 << 30  # the longest event line read (an answer may be megabytes)
STDERR_KEPT = 20  # lines of what the process said last, in the message when it ends without a word


@dataclass
class RunEnd:
    """How a run ended, seen from the server: `kind` is FINISHED (`summary`: run_finished's, as JSON),
    STOPPED, REFUSED, UNWRITABLE, FAILED or ENDED (killed, or crashed: `message` has its last words)."""

    kind: str
    message: str = ""
    files: list[str] = field(default_factory=list)
    summary: dict[str, Any] | None = None


class RunProcess:
    """The server's end of a run's process: `start` it with the worker's `run_input`, iterate `follow()`
    (each event, already applied to `board`; at the end `self.end`, and the board says how it ended),
    `stop()` it (SIGTERM, then SIGKILL after KILL_AFTER_S). `said(line)` gets its stderr, line by line."""

    def __init__(self, process: asyncio.subprocess.Process, board: RunBoard, said: Callable[[str], None]) -> None:
        self.process = process
        self.board = board
        self.said = said
        self.stopping = False
        self.end = RunEnd(ENDED)

    @classmethod
    async def start(cls, run_input: bytes, board: RunBoard, said: Callable[[str], None],
                    command: list[str] | None = None) -> RunProcess:
        process = await asyncio.create_subprocess_exec(
            *(command or COMMAND), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=LINE_LIMIT)
        assert process.stdin is not None
        process.stdin.write(run_input)  # kept open: its end (the server gone) stops the run
        return cls(process, board, said)

    @property
    def pid(self) -> int:
        return self.process.pid

    async def follow(self) -> AsyncIterator[Event]:
        assert self.process.stdout is not None and self.process.stderr is not None
        last: deque[str] = deque(maxlen=STDERR_KEPT)
        logged = asyncio.ensure_future(self._stderr(last))
        word: dict[str, Any] = {}
        try:
            async for line in self.process.stdout:
                data = json.loads(line)
                event = self.board.apply_json(data)
                if event is None:
                    word = data
                    continue
                if isinstance(event, RunFinished):
                    self.end = RunEnd(FINISHED, summary=data["summary"], files=list(event.summary.files))
                yield event
            code = await self.process.wait()
            await logged
        except BaseException:
            self.stop()
            raise
        if word:
            self.end = RunEnd(str(word.get("type")), str(word.get("message") or ""), list(word.get("files") or []))
        elif self.end.kind != FINISHED:
            self.end = RunEnd(ENDED, "".join([f"its process ended (exit code {code}) before the run did",
                                              *(f"\n{line}" for line in last)]))
        if self.end.kind == REFUSED:  # a run of the same label (a terminal's) holds the lock: nothing lost
            self.board.refuse()
        elif self.board.running:
            self.board.stop(cancelled=self.stopping or self.end.kind == STOPPED, interrupted=True)

    async def _stderr(self, last: deque[str]) -> None:
        from ..providers.redact import redact

        assert self.process.stderr is not None
        async for line in self.process.stderr:
            last.append(redact(line.decode(errors="replace").rstrip()))
            self.said(last[-1])

    def stop(self) -> None:
        self.stopping = True
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            asyncio.get_running_loop().call_later(KILL_AFTER_S, self._kill)

    def _kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()


def run_input(plan: Any, options: Any) -> bytes:
    """What this process reads on stdin: the pickle after its length (8 bytes)."""
    body = pickle.dumps((plan, options), protocol=pickle.HIGHEST_PROTOCOL)
    return len(body).to_bytes(8, "big") + body


def _read(n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        part = os.read(0, min(n - len(data), 1 << 20))
        if not part:
            raise EOFError("the run's plan ended early")
        data += part
    return bytes(data)


class _Out:
    """stdout, one JSON object a line; once the reader is gone, nothing more is written and the run
    is cancelled."""

    def __init__(self, cancel: Any) -> None:
        self.cancel = cancel
        self.gone = False

    def __call__(self, data: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            sys.stdout.write(json.dumps(data) + "\n")  # ASCII: a lone surrogate in an answer is escaped
            sys.stdout.flush()
        except (BrokenPipeError, OSError, ValueError):
            self.gone = True
            self.cancel()


async def _run(plan: Any, options: Any) -> int:
    from ..run.journal.database import RunLocked
    from ..run.journal.run_store import mark_stopped
    from ..run.runner import run
    from .run_history import result_files_of

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    cancelling = False

    def cancel() -> None:  # once: a second signal must not cut the writing of what finished
        nonlocal cancelling
        if not cancelling:
            cancelling = True
            task.cancel()

    def stdin_closed() -> None:
        with contextlib.suppress(OSError):
            if os.read(0, 4096):
                return
        loop.remove_reader(0)
        cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, cancel)
    loop.add_reader(0, stdin_closed)
    say = _Out(cancel)
    board = RunBoard()  # for the calls in flight when cancelled
    events = run(plan, options)
    try:
        async for event in events:
            board.apply(event)
            say(event.to_json())
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await events.aclose()  # type: ignore[attr-defined]
        board.stop(cancelled=True)
        files: list[str] = []
        if board.journal:  # so that the file's next session says "cancelled", not "interrupted"
            with contextlib.suppress(OSError):
                mark_stopped(Path(board.journal), "cancelled", board.cancelled_cells())
            with contextlib.suppress(Exception):
                files = result_files_of(Path(board.journal))
        say({"type": STOPPED, "files": files})
        return 130
    except RunLocked as exc:  # a run of the same label (a terminal's) holds the lock
        say({"type": REFUSED, "message": str(exc)})
        return 2
    except OSError as exc:  # the results folder cannot be written (a file, /dev/null, read-only, full)
        where = f" {exc.filename}" if exc.filename else ""
        say({"type": UNWRITABLE, "message": f"cannot write the results{where}: {exc.strerror or exc}"})
        return 2
    except Exception:
        say({"type": FAILED, "message": traceback.format_exc()})
        return 1
    finally:
        with contextlib.suppress(Exception):
            await events.aclose()  # type: ignore[attr-defined]
    return 0


def main() -> int:
    plan, options = pickle.loads(_read(int.from_bytes(_read(8), "big")))
    options.env = dict(os.environ)
    from ..providers import http_process

    http_process.enable()  # the calls' HTTP in a second process (providers/http_process.py)
    try:
        return asyncio.run(_run(plan, options))
    finally:
        http_process.stop()


if __name__ == "__main__":
    sys.exit(main())
