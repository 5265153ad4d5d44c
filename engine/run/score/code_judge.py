"""AgentV `code-judge`: a user's script, run as a subprocess, that scores an answer.

The contract is AgentV's (v2.19): the script gets one snake_case JSON payload on
stdin and prints `{score, hits?, misses?, reasoning?, details?}` on stdout; the score is clamped to
[0, 1]. A crash, a timeout, a non-zero exit or output that is not a JSON object scores 0, with the
reason and the tail of the script's stderr. A script that cannot be started at all (the program or
the script file does not exist) is *not scored*: nothing was checked.

Security: this module is only reached from an explicit run (`evalspec run`, the editor's run
command). Checking or opening a file never imports it. Scripts run in their own process group, so
a timeout or a cancelled run kills the script and everything it started.

`run_code_judge` is the one entry point; composite's `code-judge` aggregator calls it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...jsonio import dumps_bytes, loads
from ...providers.redact import clip
from ...script_process import run_script

if TYPE_CHECKING:
    from ...agentv.model import AgentvTest, Assertion
    from ..write.agentv_measured import Measured

DEFAULT_TIMEOUT_S = 60.0  # a script gets this long unless the assertion sets timeout_ms / timeout_seconds
DEFAULT_CONCURRENCY = max(1, min(4, os.cpu_count() or 1))
STDOUT_LIMIT = 4 * 1024 * 1024  # more than this is not a judge's answer


@dataclass(frozen=True)
class CodeJudgeOutcome:
    """What one script run produced. `score` None: not scored (`error` says why); a failed script
    has score 0 and `error` set; a good answer has `error` None."""

    score: float | None
    hits: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    reasoning: str | None = None
    details: dict[str, Any] | None = None
    error: str | None = None
    stderr_tail: str = ""
    duration_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)  # other keys of the answer (e.g. `verdict`)

    @property
    def scored(self) -> bool:
        return self.score is not None


def shell_argv(command: str, platform: str = sys.platform) -> list[str]:
    """A string command as AgentV runs it: through the platform's shell."""
    if platform.startswith("win"):
        return [os.environ.get("COMSPEC") or "cmd.exe", "/d", "/s", "/c", command]
    return ["/bin/sh", "-c", command]


def timeout_of(config: Mapping[str, Any], default: float = DEFAULT_TIMEOUT_S) -> float:
    """The assertion's own timeout (`timeout_ms`, or `timeout_seconds`/`timeout`), else `default`."""
    for key, scale in (("timeout_ms", 0.001), ("timeout_seconds", 1.0), ("timeout", 1.0)):
        value = config.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            return float(value) * scale
    return default


def missing_program(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> str | None:
    """Why the command cannot start (the program is not on PATH, or a script argument that names a
    local file does not exist), or None. Checked before spawning so the reason is precise."""
    import shutil

    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        if not (cwd / program).exists():
            return f"the program {program} does not exist (relative to {cwd})"
    elif shutil.which(program, path=env.get("PATH")) is None:
        return f"the program '{program}' is not installed (not found on PATH)"
    from ...agentv.files import looks_like_script

    for token in argv[1:]:
        if any(c.isspace() for c in token):
            continue  # a shell command line (`sh -c "…"`), not a path
        if looks_like_script(token) and not (cwd / token).exists():
            return f"the script {token} does not exist (relative to {cwd})"
    return None


async def run_code_judge(argv: Sequence[str], payload: Mapping[str, Any] | bytes, *, cwd: Path,
                         timeout: float = DEFAULT_TIMEOUT_S, env: Mapping[str, str] | None = None,
                         limit: asyncio.Semaphore | None = None) -> CodeJudgeOutcome:
    """Run one code judge: `payload` (a mapping, sent as JSON) on stdin, the answer from stdout.

    `limit` bounds how many scripts run at once (the run's semaphore). Never raises for a script's
    misbehaviour; a cancelled caller kills the script's process group and re-raises.
    """
    env = dict(os.environ if env is None else env)
    if not argv:
        return CodeJudgeOutcome(None, error="not scored: the code judge has an empty command")
    if not cwd.is_dir():
        return CodeJudgeOutcome(None, error=f"not scored: the code judge's folder {cwd} does not exist")
    why = missing_program(argv, cwd, env)
    if why is not None:
        return CodeJudgeOutcome(None, error=f"not scored: {why}")
    data = payload if isinstance(payload, bytes) else dumps_bytes(payload)
    async with limit if limit is not None else contextlib.nullcontext():
        return await _run(list(argv), data, cwd, timeout, env)


async def _run(argv: list[str], data: bytes, cwd: Path, timeout: float, env: dict[str, str]) -> CodeJudgeOutcome:
    done = await run_script(argv, data, cwd=cwd, timeout=timeout, env=env, stdout_limit=STDOUT_LIMIT)
    if done.start_error is not None:
        return CodeJudgeOutcome(None, error=f"not scored: {done.start_error}")
    if done.timed_out:
        return _failed(f"the code judge timed out after {_secs(timeout)} and was killed", done.stderr_tail,
                       done.elapsed)
    if done.overflow:
        return _failed(f"the code judge printed more than {STDOUT_LIMIT // (1024 * 1024)} MB on stdout",
                       done.stderr_tail, done.elapsed)
    code = done.code or 0
    if code != 0:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return _failed(f"the code judge {how}", done.stderr_tail, done.elapsed)
    return parse_answer(done.stdout, done.stderr_tail, done.elapsed)


def parse_answer(stdout: bytes, stderr_tail: str = "", elapsed: float = 0.0) -> CodeJudgeOutcome:
    """The script's answer: one JSON object with a numeric `score` (clamped to [0, 1])."""

    text = stdout.decode("utf-8", errors="replace").strip()
    ms = round(elapsed * 1000, 1)
    try:
        value = loads(text)  # a script's output: nested too deeply is a ValueError too (jsonio)
    except ValueError:
        value = _last_json_line(text)
    if not isinstance(value, dict):
        shown = clip(text, 200) + ("…" if len(text) > 200 else "")
        reason = ("the code judge printed nothing on stdout" if not text
                  else f"the code judge's output is not a JSON object: {shown!r}")
        return _failed(reason, stderr_tail, elapsed)
    raw = value.get("score")
    if raw is None and isinstance(value.get("pass"), bool):
        raw = 1.0 if value["pass"] else 0.0  # a custom assertion's `{pass, reasoning}`
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        return _failed(f"the code judge's answer has no numeric 'score' (got {raw!r})", stderr_tail, elapsed)
    score = min(1.0, max(0.0, float(raw)))
    details = value.get("details")
    reasoning = value.get("reasoning")
    extra = {k: v for k, v in value.items() if k not in ("score", "pass", "hits", "misses", "reasoning", "details")}
    return CodeJudgeOutcome(score, _strings(value.get("hits")), _strings(value.get("misses")),
                            reasoning if isinstance(reasoning, str) else None,
                            details if isinstance(details, dict) else None, None, stderr_tail, ms, extra)


def _last_json_line(text: str) -> Any:
    """Scripts that log before answering: the last line that is a JSON object is the answer."""

    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return loads(line)
            except ValueError:
                return None
    return None


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(str(v) for v in value if isinstance(v, str) and v.strip())


def _failed(reason: str, tail: str, elapsed: float) -> CodeJudgeOutcome:
    message = f"{reason}; stderr: {tail}" if tail else reason
    return CodeJudgeOutcome(0.0, (), (f"Code evaluator failed: {message}",), message, None, message, tail,
                            round(elapsed * 1000, 1))


def _secs(seconds: float) -> str:
    return f"{seconds:g} s"


def judge_command(config: Mapping[str, Any], platform: str = sys.platform) -> list[str]:
    """The argv of a code-judge assertion: its argv list, or its string through the platform's shell."""
    shell = config.get("shell")
    if isinstance(shell, str) and shell.strip():
        return shell_argv(shell, platform)
    return [str(x) for x in config.get("command") or []]


async def judge_answer(assertion: Assertion, test: AgentvTest, measured: Measured, *, base: Path, env: Mapping[str, str] | None,
                       limit: asyncio.Semaphore | None) -> CodeJudgeOutcome:
    """One `code-judge` assertion (the checker's normalized Assertion) on one measured answer: its
    command in its `cwd` (default: the folder of the file it is written in), the §5 payload on stdin."""
    from .judge_payload import code_judge_payload

    config = assertion.config
    if assertion.custom:
        folder = assertion.source_path.parent if assertion.source_path is not None else base
        argv = custom_assertion_argv(assertion.type, folder)
        if argv is None:
            return CodeJudgeOutcome(None, error=f"not scored: {custom_assertion_missing(assertion)}")
        payload = code_judge_payload(test, measured.answer, config=config, **measured.payload_fields())
        return await run_code_judge(argv, payload, cwd=folder, timeout=timeout_of(config), env=env, limit=limit)
    inner = config.get("config")
    passed: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
    if config.get("cwd"):
        cwd = Path(config["cwd"])
    else:
        cwd = assertion.source_path.parent if assertion.source_path is not None else base
    payload = code_judge_payload(test, measured.answer, config=passed, **measured.payload_fields())
    timeout = timeout_of(passed, timeout_of(config))
    return await run_code_judge(judge_command(config), payload, cwd=cwd, timeout=timeout, env=env, limit=limit)


def custom_assertion_argv(type_name: str, folder: Path) -> list[str] | None:
    """A custom assertion (`.agentv/assertions/<type>.ts|.js|.mts|.mjs`, found from the eval file's
    folder up to the repository root) as the command AgentV runs it with: bun for TypeScript, node
    for JavaScript. None when there is no such file."""
    from ...agentv.files import FileSystem

    found = FileSystem().find_custom_assertion(type_name, folder)
    if found is None:
        return None
    return ["bun", "run", str(found)] if found.suffix in (".ts", ".mts") else ["node", str(found)]


def custom_assertion_missing(assertion: Assertion) -> str | None:
    """Why a custom assertion cannot run (no script for its type), or None when its script exists."""
    folder = assertion.source_path.parent if assertion.source_path is not None else Path.cwd()
    if custom_assertion_argv(assertion.type, folder) is not None:
        return None
    return (f"custom assertion type '{assertion.type}': no .agentv/assertions/{assertion.type}.ts or .js script "
            "was found next to the eval file or in a parent folder")


class PromptScriptError(Exception):
    """A judge prompt script that could not produce a prompt (the message says why)."""


async def prompt_from_script(prompt: Mapping[str, Any], assertion: Assertion, test: AgentvTest,
                             measured: Measured, *, base: Path,
                             env: Mapping[str, str] | None, limit: asyncio.Semaphore | None) -> str:
    """An llm-judge `prompt: {command: argv, config}`: the script gets the code-judge payload on stdin
    and prints the judge's prompt (AgentV's prompt templates). Raises PromptScriptError."""
    from ...script_process import run_script
    from .judge_payload import code_judge_payload

    argv = judge_command(prompt)
    folder = assertion.source_path.parent if assertion.source_path is not None else base
    if not argv:
        raise PromptScriptError("the judge prompt script has an empty command")
    why = missing_program(argv, folder, dict(os.environ if env is None else env))
    if why is not None:
        raise PromptScriptError(f"the judge prompt script cannot run: {why}")
    raw_config = prompt.get("config")
    config: Mapping[str, Any] = raw_config if isinstance(raw_config, Mapping) else {}
    payload = dumps_bytes(code_judge_payload(test, measured.answer, config=config, **measured.payload_fields()))
    timeout = timeout_of(config, timeout_of(prompt))
    async with limit if limit is not None else contextlib.nullcontext():
        done = await run_script(argv, payload, cwd=folder, timeout=timeout, env=env, stdout_limit=STDOUT_LIMIT)
    failure = done.failure("the judge prompt script", timeout)
    if failure is not None:
        raise PromptScriptError(failure)
    text = done.stdout.decode("utf-8", errors="replace").strip()
    if not text:
        raise PromptScriptError("the judge prompt script printed no prompt")
    return text


def code_judge_missing(assertion: Assertion, base: Path | None = None) -> str | None:
    """Why a code-judge assertion cannot start (its program or script is missing), or None; for
    `--dry-run` and the run alike."""
    config = assertion.config
    argv = judge_command(config)
    if not argv:
        return "the code judge has an empty command"
    if config.get("cwd"):
        cwd = Path(config["cwd"])
    elif assertion.source_path is not None:
        cwd = assertion.source_path.parent
    elif base is not None:
        cwd = base
    else:
        return None
    if not cwd.is_dir():
        return f"the code judge's folder {cwd} does not exist"
    return missing_program(argv, cwd, os.environ)
