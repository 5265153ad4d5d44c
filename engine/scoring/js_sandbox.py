"""A JavaScript sandbox for `$js` points and `tool_args_match` expressions: QuickJS, in a child process.

QuickJS (`quickjs-ng`) has only the ECMAScript built-ins (no file, network, process or module access),
a fresh runtime per call, and a time and a memory limit. The child process (`js_worker.py`, started on
first use and kept) describes results and thrown values inside JavaScript under the limit; past the
deadline it is killed and restarted, and the point is a timeout (not scored), never a hang of the run.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_TIME_LIMIT_S = 0.1  # the reference's vm timeout (100 ms)
DEFAULT_MEMORY_LIMIT = 64 * 1024 * 1024
# The worker's limit is QuickJS's own (CPU time of the worker); the parent's deadline is wall time and
# generous, for a loaded machine: it only has to catch what escapes the limit, never race it.
KILL_GRACE_S = 2.0


class JsSandboxError(Exception):
    """The script threw, did not parse, ran out of time or memory. `kind` says which."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "syntax" | "runtime" | "timeout" | "memory" | "stack" | "crash"
        self.message = message
        self.on_retry = False  # raised by the function-body retry of evaluate_script_or_body


@dataclass(frozen=True)
class JsValue:
    """What a script returned, described JavaScript-side (Python never sees a live JS object).

    `type` is `typeof`, except "null" and "array" are told apart. `value` holds booleans, numbers
    (as float, including nan/inf) and strings. For an object with a `score` member, `score` describes
    that member and `explain` is its `explain` when that is a string.
    """

    type: str
    value: bool | float | str | None = None
    has_score: bool = False
    score: JsValue | None = None
    explain: str | None = None


def _decode(d: Mapping[str, Any]) -> JsValue:
    t = d["t"]
    if t == "number":
        return JsValue("number", float(d["v"]))  # float() accepts "NaN", "Infinity", "-Infinity"
    if t in ("boolean", "string"):
        return JsValue(t, d["v"])
    if t in ("object", "array"):
        has_score = bool(d.get("hasScore"))
        return JsValue(t, None, has_score, _decode(d["score"]) if has_score else None, d.get("explain"))
    return JsValue(t)


class _Worker:
    """The child process and the pipe to it; one call at a time (a lock serialises threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()  # a forked copy of this process must not share the pipe
        self._buffer = b""

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evalspec.scoring.js_worker", str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            # Its own process group: a Ctrl-C in the terminal is the parent's to handle; the parent
            # then stops the worker (and the kernel does, on Linux, if the parent is killed).
            start_new_session=True,
        )
        self._buffer = b""
        return proc

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()

    def call(self, request: Mapping[str, Any], deadline_s: float) -> dict[str, Any]:
        # ASCII escapes: a model's answer (a binding) may hold a lone surrogate, which UTF-8 cannot encode.
        line = json.dumps(request, ensure_ascii=True).encode("ascii") + b"\n"
        with self._lock:
            if self._owner != os.getpid():
                self._proc, self._owner = None, os.getpid()
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self.stop()
                    self._proc = self._start()
                try:
                    return self._exchange(self._proc, line, deadline_s)
                except _WorkerDied:
                    # A worker that died between calls (or with its thread, see PR_SET_PDEATHSIG)
                    # gets one fresh start; dying twice on the same script is the script's doing.
                    self.stop()
                    if attempt == 2:
                        raise JsSandboxError("crash", "the JavaScript sandbox stopped unexpectedly") from None
                except BaseException:
                    # Timed out, or interrupted (Ctrl-C, SIGTERM): the worker's state is unknown.
                    self.stop()
                    raise
        raise AssertionError("unreachable")

    def _exchange(self, proc: subprocess.Popen[bytes], line: bytes, deadline_s: float) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(line)
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _WorkerDied from None
        fd = proc.stdout.fileno()
        end = time.monotonic() + deadline_s
        while b"\n" not in self._buffer:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise JsSandboxError(
                    "timeout", f"Script execution timed out (the sandbox was stopped after {deadline_s:g} s).")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _WorkerDied
                self._buffer += chunk
        answer, _, self._buffer = self._buffer.partition(b"\n")
        return dict(json.loads(answer))


class _WorkerDied(Exception):
    pass


_WORKER = _Worker()
atexit.register(_WORKER.stop)


def _call(source: str, bindings: Mapping[str, Any] | None, time_limit_s: float, memory_limit: int,
          body_retry: bool) -> tuple[JsValue, bool]:
    # JSON text made here, so a value that is not JSON raises TypeError/ValueError in the caller.
    texts = {name: json.dumps(value, ensure_ascii=True, allow_nan=False) for name, value in (bindings or {}).items()}
    request = {"source": source, "bindings": texts, "time_limit": time_limit_s, "memory_limit": memory_limit,
               "body_retry": body_retry}
    answer = _WORKER.call(request, time_limit_s * 2 + KILL_GRACE_S)
    retried = bool(answer.get("retried"))
    if "ok" in answer:
        try:
            return _decode(answer["ok"]), retried
        except (KeyError, TypeError, ValueError):
            raise JsSandboxError("internal", "the JavaScript sandbox gave an unreadable answer") from None
    error = JsSandboxError(str(answer.get("error", "internal")), str(answer.get("message", "")))
    error.on_retry = retried
    raise error


def evaluate(source: str, bindings: Mapping[str, Any] | None = None, *,
             time_limit_s: float = DEFAULT_TIME_LIMIT_S, memory_limit: int = DEFAULT_MEMORY_LIMIT) -> JsValue:
    """Run `source` as a script with JSON-able `bindings` as globals; return its completion value."""
    return _call(source, bindings, time_limit_s, memory_limit, body_retry=False)[0]


def evaluate_script_or_body(source: str, bindings: Mapping[str, Any] | None = None, *,
                            time_limit_s: float = DEFAULT_TIME_LIMIT_S,
                            memory_limit: int = DEFAULT_MEMORY_LIMIT) -> tuple[JsValue, bool]:
    """The reference's `$js` rule: run as a script; if it has a top-level `return`, run it as a
    function body instead. Returns (value, whether it was retried as a body).

    A parse error is raised before anything runs, so the retry never repeats side effects.
    """
    return _call(source, bindings, time_limit_s, memory_limit, body_retry=True)
