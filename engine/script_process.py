"""Running a user's program (a code judge, a workspace hook, git, a `cli` target) as a subprocess,
bounded in every way: the one place evalspec starts processes for a run.

Its own process group (POSIX), so a timeout or a cancelled run kills the program and everything it
started; stdin written while stdout and stderr are read (no pipe deadlock); stdout capped (unless the
caller takes all of it: a `cli` target's answer); only the tail of stderr kept. Only an explicit run
reaches this module: checking or opening a file never does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

STDERR_TAIL = 2000  # characters of stderr kept in a failure's reason (AgentV keeps 2,000 too)
_READ = 64 * 1024


@dataclass(frozen=True)
class ScriptRun:
    code: int | None  # the exit code (negative: killed by that signal); None: never started or timed out
    stdout: bytes = b""
    stderr_tail: str = ""
    elapsed: float = 0.0  # seconds
    timed_out: bool = False
    overflow: bool = False  # stdout went past the limit and the script was killed
    start_error: str | None = None  # why it could not start
    start_errno: int | None = None  # and its errno (ENOENT: no such program, EACCES: not executable)

    @property
    def ok(self) -> bool:
        return self.code == 0 and not self.timed_out and not self.overflow

    def failure(self, what: str, timeout: float) -> str | None:
        """A one-line reason for a failed run ("<what> exited with code 2; stderr: …"), or None."""
        if self.start_error is not None:
            reason = f"{what} could not start: {self.start_error}"
        elif self.timed_out:
            reason = f"{what} timed out after {timeout:g} s and was killed"
        elif self.overflow:
            reason = f"{what} printed too much on stdout and was killed"
        elif self.code != 0:
            reason = (f"{what} was killed by signal {-(self.code or 0)}" if (self.code or 0) < 0
                      else f"{what} exited with code {self.code}")
        else:
            return None
        return f"{reason}; stderr: {self.stderr_tail}" if self.stderr_tail else reason


async def run_script(argv: Sequence[str], stdin: bytes | None, *, cwd: Path | None, timeout: float,
                     env: Mapping[str, str] | None = None, stdout_limit: int | None = 4 * 1024 * 1024) -> ScriptRun:
    """Run `argv` in `cwd` (None: ours) with `stdin` (None: none at all); never raises for the
    program's behaviour. `stdout_limit=None` keeps all of stdout. Cancelling the caller kills the
    program's process group and re-raises."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    posix = os.name == "posix"
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=None if cwd is None else str(cwd), env=dict(os.environ if env is None else env),
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=posix)
    except OSError as exc:
        return ScriptRun(None, start_error=f"cannot start {argv[0]}: {exc.strerror or exc}", start_errno=exc.errno)
    stdout = bytearray()
    stderr = bytearray()
    overflow = False

    async def feed() -> None:
        if stdin is None or proc.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
            proc.stdin.close()

    async def drain_stdout() -> None:
        nonlocal overflow
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(_READ):
            if stdout_limit is not None and len(stdout) + len(chunk) > stdout_limit:
                overflow = True
                kill(proc)
                return
            stdout.extend(chunk)

    async def drain_stderr() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(_READ):
            stderr.extend(chunk)
            if len(stderr) > 16 * STDERR_TAIL:
                del stderr[: len(stderr) - 4 * STDERR_TAIL]  # keep a tail, bounded

    async def whole() -> int:
        await asyncio.gather(feed(), drain_stdout(), drain_stderr())
        return await proc.wait()

    try:
        # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancellation (a stopped run) that
        # comes as the script ends, and the run went on past its stop (batch/wire.py had the same).
        async with asyncio.timeout(timeout):
            code = await whole()
    except TimeoutError:
        kill(proc)
        await _reap(proc)
        return ScriptRun(None, bytes(stdout), tail(stderr), loop.time() - started, timed_out=True)
    except BaseException:
        kill(proc)  # cancelled (the run was stopped): nothing may run on behind the caller
        await asyncio.shield(_reap(proc))
        raise
    kill(proc)  # anything the script started and left behind in its group (a finished script has none)
    return ScriptRun(code, bytes(stdout), tail(stderr), loop.time() - started, overflow=overflow)


def tail(stderr: bytearray | bytes) -> str:
    text = bytes(stderr).decode("utf-8", errors="replace").strip()
    if len(text) <= STDERR_TAIL:
        return text
    return f"…(last {STDERR_TAIL} chars) {text[-STDERR_TAIL:]}"


def kill(proc: asyncio.subprocess.Process) -> None:
    """Kill the script and everything in its process group. On POSIX even when the script itself has
    exited: the group outlives its leader while a child it started in the background runs, and the
    group's id cannot be reused while any member lives."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)  # the script and anything it started
        elif proc.returncode is None:
            proc.kill()


async def _reap(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(Exception):
        async with asyncio.timeout(5):
            await proc.wait()
