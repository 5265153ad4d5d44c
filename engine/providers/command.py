"""AgentV's `cli` target: run a command per call and take its answer from a file or its stdout.

The command template is split into argv once (shell-like quoting, via shlex) and placeholders are
substituted inside each argument, then the program is executed directly, never through a shell: a prompt
holding `; rm -rf ~` or `$(…)` is one inert argument.

Placeholders: {PROMPT} (the prompt text), {PROMPT_FILE} (a file holding it), {OUTPUT_FILE} (a path the
command writes its answer to; without it the answer is stdout), {EVAL_ID} and {ATTEMPT} (from the
request's `extra` keys `eval_id` / `attempt`). Like AgentV, an answer that is a JSON object with `text`
or `output_messages` is unwrapped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalspec.providers.base import (
    COMMAND,
    CONFIG,
    TIMEOUT,
    ChatRequest,
    ChatResult,
    ProviderError,
    RetryCallback,
    Usage,
)

PLACEHOLDERS = frozenset({"PROMPT", "PROMPT_FILE", "OUTPUT_FILE", "EVAL_ID", "ATTEMPT"})
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
DEFAULT_COMMAND_TIMEOUT = 120.0  # agents are slower than chat APIs


def render_prompt(req: ChatRequest) -> str:
    """The text a command gets: the user message alone, or a role-labelled transcript for several."""
    if not req.system and len(req.messages) == 1:
        return req.messages[0].content
    parts = [f"system: {req.system}"] if req.system else []
    parts.extend(f"{m.role}: {m.content}" for m in req.messages)
    return "\n\n".join(parts)


def parse_output(raw: str) -> str:
    text = raw.rstrip("\r\n")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except ValueError:
            return text
        if isinstance(obj, dict):
            msgs = obj.get("output_messages")
            if isinstance(msgs, list):
                for m in reversed(msgs):
                    if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), str):
                        return m["content"]
            if "text" in obj:
                return obj["text"] if isinstance(obj["text"], str) else json.dumps(obj["text"])
    return text


class CommandProvider:
    def __init__(
        self,
        command_template: str | Sequence[str],
        *,
        name: str = "cli",
        cwd: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_COMMAND_TIMEOUT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        if isinstance(command_template, str):
            try:
                argv = shlex.split(command_template)
            except ValueError as exc:
                raise ProviderError(CONFIG, f"{name}: cannot parse command template: {exc}") from None
        else:
            argv = [str(a) for a in command_template]
        if not argv:
            raise ProviderError(CONFIG, f"{name}: the command template is empty")
        used = {p for a in argv for p in _PLACEHOLDER.findall(a)}
        unknown = sorted(used - PLACEHOLDERS)
        if unknown:
            raise ProviderError(
                CONFIG,
                f"{name}: unsupported placeholder(s) {', '.join('{' + u + '}' for u in unknown)} in the command "
                f"template; supported: {', '.join('{' + p + '}' for p in sorted(PLACEHOLDERS))}",
            )
        self.argv = argv
        self.uses = frozenset(used)
        self.cwd = str(cwd) if cwd is not None else None
        self.timeout = float(timeout)
        self.env = dict(env) if env is not None else None

    def identity(self) -> dict[str, Any]:
        return {"provider": "cli", "argv": self.argv, "cwd": self.cwd}

    async def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> ChatResult:
        t0 = time.perf_counter()
        prompt = render_prompt(req)
        with tempfile.TemporaryDirectory(prefix="evalspec-cli-") as tmp:
            values = {
                "PROMPT": prompt,
                "EVAL_ID": str(req.extra.get("eval_id", "")),
                "ATTEMPT": str(req.extra.get("attempt", 0)),
                "PROMPT_FILE": str(Path(tmp) / "prompt.txt"),
                "OUTPUT_FILE": str(Path(tmp) / "output.txt"),
            }
            if "PROMPT_FILE" in self.uses:
                Path(values["PROMPT_FILE"]).write_text(prompt, encoding="utf-8")
            # One pass per argument: text substituted in is never expanded again.
            argv = [_PLACEHOLDER.sub(lambda m: values[m.group(1)], a) for a in self.argv]
            # A test's workspace (the runner passes it as `cwd`) is where the agent works.
            cwd = str(req.extra.get("cwd") or "") or self.cwd
            stdout, stderr, code = await self._run(argv, req.timeout or self.timeout, cwd)
            if code != 0:
                detail = (stderr or stdout).decode("utf-8", "replace").strip()[-800:]
                raise ProviderError(
                    COMMAND,
                    f"{self.name}: `{self.argv[0]}` exited with code {code}" + (f": {detail}" if detail else ""),
                    provider=self.name,
                )
            if "OUTPUT_FILE" in self.uses:
                try:
                    raw = Path(values["OUTPUT_FILE"]).read_text(encoding="utf-8", errors="replace")
                except FileNotFoundError:
                    raise ProviderError(
                        COMMAND, f"{self.name}: the command did not write {{OUTPUT_FILE}}", provider=self.name
                    ) from None
            else:
                raw = stdout.decode("utf-8", "replace")
        text = parse_output(raw)
        return ChatResult(
            text=text,
            usage=Usage(0, 0),
            latency_ms=(time.perf_counter() - t0) * 1000.0,
            raw_model=self.name,
        )

    async def _run(self, argv: list[str], timeout: float, cwd: str | None = None) -> tuple[bytes, bytes, int]:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=self.env,
                # Own process group, so a timeout kills the command's children too.
                start_new_session=True,
            )
        except FileNotFoundError:
            raise ProviderError(CONFIG, f"{self.name}: command not found: {argv[0]}", provider=self.name) from None
        except PermissionError:
            raise ProviderError(CONFIG, f"{self.name}: not executable: {argv[0]}", provider=self.name) from None
        try:
            async with asyncio.timeout(timeout):
                stdout, stderr = await proc.communicate()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise ProviderError(
                TIMEOUT, f"{self.name}: the command gave no answer within {timeout:g} s", provider=self.name
            ) from None
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise
        return stdout, stderr, proc.returncode if proc.returncode is not None else -1

    async def aclose(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"CommandProvider(name={self.name!r}, argv0={self.argv[0]!r})"
