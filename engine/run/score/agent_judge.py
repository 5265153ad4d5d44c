"""AgentV `agent-judge`: a judge that looks around the workspace the agent under test left behind.

The judge model gets two read-only tools, `list_files(path)` and `read_file(path, offset?)`, confined
to the test's workspace: no absolute path, no `..` out of it, no symlink that leads out of it (paths
are resolved and must stay inside), nothing written. Each model call is a step; `max_steps` (1–50,
default 10) bounds them, and the last step is asked for the verdict without tools. At most
`TOOL_CALLS_PER_STEP` tool calls a step and `READ_BUDGET` bytes read in all (the step budget); past
them a tool answers with the limit instead of the content.

Tools are offered natively (OpenAI `tools`, Anthropic `tools`, Gemini `functionDeclarations`) and the
conversation is replayed as text turns, so any chat provider works; a judge that writes its call as
JSON text (`{"tool": "read_file", "path": …}`) is understood too. The verdict is AgentV's judge JSON:
`{score, hits, misses, reasoning}` freeform, or `{checks: [...]}` against `rubrics` (score/agentv_judge.py).
A judge that gives no readable verdict within its steps leaves the assertion *not scored*.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...providers.base import ChatMessage, ChatResult
from ...providers.tool_calls import NO_INPUT
from .agentv_judge import JudgeReplyError, parse_json_reply

DEFAULT_MAX_STEPS = 10
TOOL_CALLS_PER_STEP = 8
READ_LIMIT = 64 * 1024  # bytes one read_file returns
READ_BUDGET = 1024 * 1024  # bytes all reads of one judgement return
LIST_LIMIT = 500  # entries one list_files returns

TOOL_SPECS = (
    ("list_files", "List the files and folders at a path of the workspace (relative; '.' is its root).",
     {"type": "object", "properties": {"path": {"type": "string", "description": "a folder, relative"}},
      "required": []}),
    ("read_file", "Read a text file of the workspace (relative path). Long files come in pieces: pass the "
     "offset the previous piece ended at.",
     {"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}},
      "required": ["path"]}),
)

SYSTEM = """You are an exacting evaluator auditing the workspace an AI agent worked in. Use the tools \
list_files and read_file to inspect it (read-only); look before you judge. When you have seen enough, \
reply with one JSON object and nothing else: {verdict_shape}"""

FREEFORM_SHAPE = ('{"score": <0.0-1.0>, "hits": [<what is right>], "misses": [<what is wrong or missing>], '
                  '"reasoning": "<one or two sentences>"}')
CHECKLIST_SHAPE = ('{"checks": [{"id": "<rubric id>", "satisfied": true | false, "reasoning": "<one sentence>"}], '
                   '"overall_reasoning": "<one or two sentences>"}')


class OutsideWorkspace(ValueError):
    pass


class WorkspaceReader:
    """Read-only access to one folder; every path is checked to stay inside it."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.read_bytes = 0

    def resolve(self, rel: Any) -> Path:
        text = str(rel if rel not in (None, "") else ".").strip()
        if os.path.isabs(text) or text.startswith("~"):
            raise OutsideWorkspace(f"{text}: only paths relative to the workspace are allowed")
        path = (self.root / text).resolve()  # follows symlinks: a link out of the workspace lands outside
        if path != self.root and self.root not in path.parents:
            raise OutsideWorkspace(f"{text}: outside the workspace")
        return path

    def list_files(self, rel: Any = ".") -> str:
        path = self.resolve(rel)
        if not path.is_dir():
            return f"error: {rel} is not a folder"
        entries = []
        for child in sorted(path.iterdir(), key=lambda p: p.name)[:LIST_LIMIT + 1]:
            try:
                inside = self.resolve(child.relative_to(self.root))
            except OutsideWorkspace:
                entries.append(f"{child.name} (link out of the workspace, not readable)")
                continue
            entries.append(f"{child.name}/" if inside.is_dir() else f"{child.name} ({inside.stat().st_size} bytes)")
        if len(entries) > LIST_LIMIT:
            entries = [*entries[:LIST_LIMIT], f"… more entries not shown (limit {LIST_LIMIT})"]
        return "\n".join(entries) if entries else "(empty folder)"

    def read_file(self, rel: Any, offset: Any = 0) -> str:
        path = self.resolve(rel)
        if not path.is_file():
            return f"error: {rel} is not a file"
        start = offset if isinstance(offset, int) and not isinstance(offset, bool) and offset > 0 else 0
        left = READ_BUDGET - self.read_bytes
        if left <= 0:
            return f"error: the read budget of this judgement ({READ_BUDGET} bytes) is used up"
        with path.open("rb") as f:
            f.seek(start)
            data = f.read(min(READ_LIMIT, left) + 1)
        more = len(data) > min(READ_LIMIT, left)
        data = data[: min(READ_LIMIT, left)]
        self.read_bytes += len(data)
        if b"\x00" in data[:4096]:
            return f"error: {rel} is a binary file"
        text = data.decode("utf-8", errors="replace")
        return text + (f"\n… (more: call read_file with offset {start + len(data)})" if more else "")

    def call(self, name: str, args: Any) -> str:
        args = args if isinstance(args, Mapping) else {}
        try:
            if name == "list_files":
                return self.list_files(args.get("path", "."))
            if name == "read_file":
                return self.read_file(args.get("path"), args.get("offset", 0))
        except OutsideWorkspace as exc:
            return f"error: {exc}"
        except OSError as exc:
            return f"error: {exc.strerror or exc}"
        return f"error: no tool named {name!r} (tools: list_files, read_file)"


def tools_for(provider_kind: str) -> dict[str, Any]:
    """The tools in the request body of `provider_kind` (merged through ChatRequest.extra)."""
    if provider_kind == "anthropic":
        return {"tools": [{"name": n, "description": d, "input_schema": s} for n, d, s in TOOL_SPECS]}
    if provider_kind in ("google", "gemini"):
        return {"tools": [{"functionDeclarations": [{"name": n, "description": d, "parameters": s}
                                                    for n, d, s in TOOL_SPECS]}]}
    return {"tools": [{"type": "function", "function": {"name": n, "description": d, "parameters": s}}
                      for n, d, s in TOOL_SPECS]}


@dataclass
class AgentJudgeOutcome:
    verdict: dict[str, Any] | None  # the judge's JSON verdict; None: none was given
    steps: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {tool, input} in order
    error: str | None = None


Ask = Callable[[tuple[ChatMessage, ...], bool], Awaitable[ChatResult]]  # (messages, offer tools) -> reply


def _text_calls(text: str) -> list[tuple[str, Any]]:
    """Tool calls written as JSON text: {"tool": name, "path": …} or {"tool": name, "input": {...}}."""
    try:
        data = parse_json_reply(text)
    except JudgeReplyError:
        return []
    name = data.get("tool") or data.get("name")
    if isinstance(name, str) and name in ("list_files", "read_file") and "score" not in data and "checks" not in data:
        args = data.get("input") or data.get("arguments") or {k: v for k, v in data.items() if k not in ("tool", "name")}
        return [(name, args)]
    return []


def _verdict(text: str, rubric: bool) -> dict[str, Any] | None:
    try:
        data = parse_json_reply(text)
    except JudgeReplyError:
        return None
    if rubric and isinstance(data.get("checks"), list):
        return data
    if not rubric and "score" in data:
        return data
    return None


async def run_agent_judge(ask: Ask, task: str, reader: WorkspaceReader, *, rubric: bool,
                          max_steps: int = DEFAULT_MAX_STEPS) -> AgentJudgeOutcome:
    """The judge loop. `task` is the user prompt (question, criteria, answer, rubric); `ask` makes one
    model call (the runner's, under its limits; it raises ProviderError)."""
    steps = max(1, min(50, int(max_steps)))
    messages: list[ChatMessage] = [ChatMessage("user", task)]
    out = AgentJudgeOutcome(None)
    for step in range(1, steps + 1):
        last = step == steps
        if last and step > 1:
            messages.append(ChatMessage("user", "This is your last step: no more tools. Give your verdict now, "
                                                "as the JSON object described."))
        result = await ask(tuple(messages), not last)
        out.steps = step
        calls = [(c.tool, None if c.input is NO_INPUT else c.input)
                 for c in getattr(result, "tool_calls", ()) or ()]
        if not calls and not last:
            calls = _text_calls(result.text)
        if not calls or last:
            found = _verdict(result.text, rubric)
            if found is not None:
                out.verdict = found
                return out
            if last:
                break
            messages.append(ChatMessage("assistant", result.text))
            messages.append(ChatMessage("user", "Reply with the JSON verdict object only (or call a tool)."))
            continue
        transcript = [result.text] if result.text.strip() else []
        results = []
        for k, (name, args) in enumerate(calls):
            out.tool_calls.append({"tool": name, "input": args})
            shown = json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args
            transcript.append(f"[called {name}({shown})]")
            answer = (reader.call(name, args) if k < TOOL_CALLS_PER_STEP
                      else f"error: at most {TOOL_CALLS_PER_STEP} tool calls a step")
            results.append(f"[{name}({shown}) returned]\n{answer}")
        messages.append(ChatMessage("assistant", "\n".join(transcript)))
        messages.append(ChatMessage("user", "\n\n".join(results)))
    out.error = f"the agent judge gave no readable verdict within {out.steps} step(s) (max_steps {steps})"
    return out


def judge_task(question: str, criteria: str, answer: str, reference: str,
               rubrics: Sequence[Mapping[str, Any]] | None, prompt: str | None, file_changes: str | None) -> str:
    parts = []
    if prompt:
        parts.append(prompt)
    parts += [f"[[ ## question ## ]]\n{question}", f"[[ ## criteria ## ]]\n{criteria}",
              f"[[ ## reference_answer ## ]]\n{reference}", f"[[ ## answer ## ]]\n{answer}"]
    if file_changes:
        parts.append(f"[[ ## file_changes ## ]]\n{file_changes}")
    if rubrics:
        lines = [f"- id: {r.get('id')}\n  outcome: {r.get('outcome')}" for r in rubrics]
        parts.append("[[ ## rubric ## ]]\n" + "\n".join(lines))
    return "\n\n".join(parts)


def system_prompt(rubric: bool) -> str:
    return SYSTEM.format(verdict_shape=CHECKLIST_SHAPE if rubric else FREEFORM_SHAPE)
