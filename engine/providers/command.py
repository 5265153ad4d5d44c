"""AgentV's `cli` target: run a command per call and take its answer from a file or its stdout.

The command template is split into argv once (shell-like quoting, via shlex) and placeholders are
substituted inside each argument, then the program is executed directly, never through a shell: a prompt
holding `; rm -rf ~` or `$(…)` is one inert argument.

Placeholders: {PROMPT} (the prompt text), {PROMPT_FILE} (a file holding it), {OUTPUT_FILE} (a path the
command writes its answer to; without it the answer is stdout), {EVAL_ID} and {ATTEMPT} (from the
request's `extra` keys `eval_id` / `attempt`). Like AgentV, an answer that is a JSON object with `text`,
`output` or `output_messages` is unwrapped, and the tool calls of its messages are the answer's trace
(parse_answer; JSONL batch output is matched to the test by `id`). Also like AgentV, the record's
`token_usage` ({input, output}), `cost_usd` and `duration_ms` are what the target reports
(parse_output): without `token_usage` the usage is not reported (a `token-usage` check then fails with
"no data"); without `duration_ms` the duration is the command's wall-clock time.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import shlex
import stat
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from evalspec.file_source import read_regular_bytes
from evalspec.jsonio import loads
from evalspec.providers.base import (
    COMMAND,
    CONFIG,
    NOT_REPORTED,
    TIMEOUT,
    ChatRequest,
    ChatResult,
    ProviderError,
    RetryCallback,
    ToolCall,
    Usage,
)
from evalspec.providers.tool_calls import calls_from_json, calls_from_messages
from evalspec.script_process import run_script

PLACEHOLDERS = frozenset({"PROMPT", "PROMPT_FILE", "OUTPUT_FILE", "EVAL_ID", "ATTEMPT"})
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
DEFAULT_COMMAND_TIMEOUT = 120.0  # agents are slower than chat APIs
# The most of an answer read from stdout or {OUTPUT_FILE}: far past any transcript, and what an agent
# (whose model decides what it writes) can make endless: `yes` on stdout, a FIFO or a link to /dev/zero as
# its output file, which held the run for good or grew it until memory ran out (atk9r).
MAX_ANSWER_BYTES = 64 * 1024 * 1024


def render_prompt(req: ChatRequest) -> str:
    """The text a command gets: the user message alone, or a role-labelled transcript for several."""
    if not req.system and len(req.messages) == 1:
        return req.messages[0].content
    parts = [f"system: {req.system}"] if req.system else []
    parts.extend(f"{m.role}: {m.content}" for m in req.messages)
    return "\n\n".join(parts)


class Reported(NamedTuple):
    """What a command's output reports besides its answer (AgentV's CliOutputSchema fields)."""

    usage: Usage = NOT_REPORTED
    cost_usd: float | None = None
    duration_ms: float | None = None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _reported(obj: dict[str, Any]) -> Reported:
    """AgentV: `token_usage` counts when its `input` and `output` are numbers; a negative `cost_usd` or
    `duration_ms` is ignored."""
    u = obj.get("token_usage")
    usage = NOT_REPORTED
    if isinstance(u, dict):
        i, o = _number(u.get("input")), _number(u.get("output"))
        if i is not None and o is not None:
            usage = Usage(int(i), int(o))
    cost, duration = _number(obj.get("cost_usd")), _number(obj.get("duration_ms"))
    return Reported(usage, cost if cost is not None and cost >= 0 else None,
                    duration if duration is not None and duration >= 0 else None)


def parse_answer(raw: str, eval_id: str = "") -> tuple[str, tuple[ToolCall, ...]]:
    """The answer text and tool calls of a command's output (parse_output without the metrics)."""
    text, calls, _ = parse_output(raw, eval_id)
    return text, calls


def parse_output(raw: str, eval_id: str = "") -> tuple[str, tuple[ToolCall, ...], Reported]:
    """The answer text, tool calls and reported metrics of a command's output, as AgentV reads a `cli` target.

    A JSON object is unwrapped: `text`, else the last assistant message's content from `output` (or
    `output_messages`); tool calls come from those messages (`tool_calls`). JSONL (one object a line) is
    a batch of such records keyed by `id` (the one for this test is taken: AgentV's batch output), or a
    list of messages / tool-call events. Anything else is the answer text as it is, with no tool calls.
    """
    text = raw.rstrip("\r\n")
    stripped = text.strip()
    if not stripped.startswith("{"):
        return text, (), Reported()
    try:
        obj = loads(stripped)  # a cli target's output: nested too deeply is a ValueError too (jsonio)
    except ValueError:
        records = _jsonl(stripped)
        if records is None:
            return text, (), Reported()
        return _from_lines(records, eval_id, text)
    return _from_record(obj, text) if isinstance(obj, dict) else (text, (), Reported())


def _jsonl(text: str) -> list[dict[str, Any]] | None:
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = loads(line)
        except ValueError:
            return None
        if not isinstance(item, dict):
            return None
        out.append(item)
    return out or None


def _from_lines(records: list[dict[str, Any]], eval_id: str, raw: str
                ) -> tuple[str, tuple[ToolCall, ...], Reported]:
    if any("id" in r and ("text" in r or "output" in r or "output_messages" in r) for r in records):
        # A batch: one record per test, keyed by id.
        if eval_id:
            found = next((r for r in records if str(r.get("id")) == eval_id), None)
            if found is None:
                raise _BatchMissing(eval_id)
            return _from_record(found, raw)
        if len(records) == 1:
            return _from_record(records[0], raw)
    # Messages and tool-call events, one a line: the trace of one answer.
    messages = [r if "role" in r else {"role": "assistant", "tool_calls": [r]} for r in records
                if "role" in r or _is_call_event(r)]
    texts = [str(m["content"]) for m in messages if m.get("role") == "assistant" and isinstance(m.get("content"), str)]
    return (texts[-1] if texts else raw), calls_from_messages(messages), Reported()


def _is_call_event(r: dict[str, Any]) -> bool:
    return str(r.get("type") or "") in ("tool_call", "tool_use", "tool") or ("tool" in r and "input" in r)


def _from_record(obj: dict[str, Any], raw: str) -> tuple[str, tuple[ToolCall, ...], Reported]:
    msgs = obj.get("output") if isinstance(obj.get("output"), list) else obj.get("output_messages")
    msgs = msgs if isinstance(msgs, list) else []
    calls = calls_from_messages(msgs) + calls_from_json(obj.get("tool_calls"))
    if "text" in obj:
        return (obj["text"] if isinstance(obj["text"], str) else json.dumps(obj["text"])), calls, _reported(obj)
    for m in reversed(msgs):
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), str):
            return m["content"], calls, _reported(obj)
    return raw, calls, Reported()


class _BatchMissing(Exception):
    def __init__(self, eval_id: str) -> None:
        super().__init__(f"Batch output missing id '{eval_id}'")


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
                raw = self._output_file(values["OUTPUT_FILE"])
            else:
                raw = stdout.decode("utf-8", "replace")
        try:
            text, calls, reported = parse_output(raw, values["EVAL_ID"])
        except _BatchMissing as exc:
            raise ProviderError(COMMAND, f"{self.name}: {exc}", provider=self.name) from None
        measured = (time.perf_counter() - t0) * 1000.0
        return ChatResult(
            text=text,
            usage=reported.usage,
            # AgentV: the duration the output reports, else the command's wall-clock time.
            latency_ms=reported.duration_ms if reported.duration_ms is not None else measured,
            cost_usd=reported.cost_usd,
            raw_model=self.name,
            tool_calls=calls,
        )

    def _output_file(self, path: str) -> str:
        """The answer the command wrote to {OUTPUT_FILE}: a regular file of at most MAX_ANSWER_BYTES, opened
        without blocking (a FIFO would wait for a writer for ever) and read no further than that."""
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
            data = read_regular_bytes(path, MAX_ANSWER_BYTES) if regular else None
        except FileNotFoundError:
            raise ProviderError(COMMAND, f"{self.name}: the command did not write {{OUTPUT_FILE}}",
                                provider=self.name) from None
        except OSError as exc:
            raise ProviderError(COMMAND, f"{self.name}: the command's {{OUTPUT_FILE}} cannot be read "
                                f"({exc.strerror or exc})", provider=self.name) from None
        if data is None:
            what = "is larger than 64 MB" if regular else "is not a regular file (a FIFO, a device or a folder)"
            raise ProviderError(COMMAND, f"{self.name}: the command's {{OUTPUT_FILE}} {what}", provider=self.name)
        return data.decode("utf-8", "replace")

    async def _run(self, argv: list[str], timeout: float, cwd: str | None = None) -> tuple[bytes, bytes, int]:
        # The answer is stdout up to MAX_ANSWER_BYTES (an agent's transcript can be long); stderr's tail is kept.
        done = await run_script(argv, None, cwd=Path(cwd) if cwd else None, timeout=timeout, env=self.env,
                                stdout_limit=MAX_ANSWER_BYTES)
        if done.overflow:
            raise ProviderError(COMMAND, f"{self.name}: the command printed more than 64 MB on stdout and was killed",
                                provider=self.name)
        if done.start_error is not None:
            what = {errno.ENOENT: "command not found", errno.EACCES: "not executable"}.get(
                done.start_errno or 0, "cannot start")
            raise ProviderError(CONFIG, f"{self.name}: {what}: {argv[0]}", provider=self.name)
        if done.timed_out:
            raise ProviderError(
                TIMEOUT, f"{self.name}: the command gave no answer within {timeout:g} s", provider=self.name)
        return done.stdout, done.stderr_tail.encode("utf-8"), done.code if done.code is not None else -1

    async def aclose(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"CommandProvider(name={self.name!r}, argv0={self.argv[0]!r})"
