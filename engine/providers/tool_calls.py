"""Tool calls read out of what a target answered: the trace AgentV's tool-trajectory scores.

Every shape is read defensively (an answer is untrusted text): a call without a tool name is dropped,
arguments that are not JSON are kept as the string they were, nothing here raises on odd input.

- OpenAI chat completions: `choices[0].message.tool_calls[] = {id, type: function, function: {name,
  arguments: "<JSON text>"}}` (and the older single `function_call`).
- Anthropic messages: `content[] = {type: tool_use, id, name, input}`.
- Google Gemini: `parts[] = {functionCall: {name, args}}`.
- AgentV messages (a `cli` target's output, results rows, expected messages): `{role, content,
  tool_calls: [{tool, input, output, duration_ms | durationMs, id}]}`; `name` / `args` / `arguments`
  are accepted for `tool` / `input`.

A call that gave no arguments at all has `input` NO_INPUT (JavaScript's undefined: AgentV writes no
`input` key and its trajectory compares no arguments); `None` is a JSON `null` the target wrote, which
AgentV keeps as it is (its `superset`/`subset` argument checks throw on it, tool_trajectory.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..jsonio import loads


class _NoInput:
    """The type of NO_INPUT: one value, kept one through pickling (the run's worker processes)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_INPUT"

    def __reduce__(self) -> str:
        return "NO_INPUT"

    def __bool__(self) -> bool:
        return False


NO_INPUT: Any = _NoInput()

@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the target made (AgentV's trace): OpenAI `tool_calls`, Anthropic `tool_use` blocks,
    or a `cli` target's output messages. `input` is the arguments as the target gave them (a mapping
    when they were JSON; None for a JSON null; NO_INPUT when it gave none); `duration_ms` only when the
    target reported it."""

    tool: str
    input: Any = NO_INPUT
    output: Any = None
    duration_ms: float | None = None
    id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool}
        if self.input is not NO_INPUT:
            out["input"] = self.input
        if self.output is not None:
            out["output"] = self.output
        if self.duration_ms is not None:
            out["duration_ms"] = self.duration_ms
        if self.id is not None:
            out["id"] = self.id
        return out


def _arguments(raw: Any) -> Any:
    """OpenAI sends arguments as JSON text; a mapping is what a trajectory compares. NO_INPUT stays."""
    if isinstance(raw, str):
        try:
            # A model's arguments: nested past the standard parser is a ValueError too (jsonio.loads),
            # not a RecursionError that stopped the run.
            return loads(raw) if raw.strip() else {}
        except ValueError:
            return raw
    return raw


def _duration(call: dict[str, Any]) -> float | None:
    for key in ("duration_ms", "durationMs"):
        value = call.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return None


def openai_tool_calls(message: Any) -> tuple[ToolCall, ...]:
    if not isinstance(message, dict):
        return ()
    out: list[ToolCall] = []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]:
            ident = call.get("id")
            out.append(ToolCall(fn["name"], _arguments(fn.get("arguments", NO_INPUT)),
                                id=ident if isinstance(ident, str) else None))
    legacy = message.get("function_call")
    if not out and isinstance(legacy, dict) and isinstance(legacy.get("name"), str) and legacy["name"]:
        out.append(ToolCall(legacy["name"], _arguments(legacy.get("arguments", NO_INPUT))))
    return tuple(out)


def anthropic_tool_calls(content: Any) -> tuple[ToolCall, ...]:
    out: list[ToolCall] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("name"), str) \
                and block["name"]:
            ident = block.get("id")
            out.append(ToolCall(block["name"], block.get("input", NO_INPUT),
                                id=ident if isinstance(ident, str) else None))
    return tuple(out)


def google_tool_calls(parts: Any) -> tuple[ToolCall, ...]:
    out: list[ToolCall] = []
    for part in parts if isinstance(parts, list) else []:
        fn = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]:
            out.append(ToolCall(fn["name"], fn.get("args", NO_INPUT)))
    return tuple(out)


def call_from_json(call: Any) -> ToolCall | None:
    """One AgentV tool call `{tool, input, output, duration_ms, id}` (or `name` / `args` / `arguments`)."""
    if not isinstance(call, dict):
        return None
    name = call.get("tool", call.get("name"))
    fn = call.get("function")
    if not isinstance(name, str) and isinstance(fn, dict):  # an OpenAI-shaped call in a message list
        return next(iter(openai_tool_calls({"tool_calls": [call]})), None)
    if not isinstance(name, str) or not name:
        return None
    # AgentV keeps a call's `input` as the target wrote it (a JSON string stays a string, null stays null);
    # OpenAI-style `arguments` text is parsed; none of the three: NO_INPUT.
    args = call["input"] if "input" in call else _arguments(call.get("args", call.get("arguments", NO_INPUT)))
    ident = call.get("id")
    return ToolCall(name, args, call.get("output"), _duration(call),
                    ident if isinstance(ident, str) else None)


def calls_from_json(calls: Any) -> tuple[ToolCall, ...]:
    if not isinstance(calls, list):
        return ()
    return tuple(c for c in map(call_from_json, calls) if c is not None)


def calls_from_messages(messages: Iterable[Any]) -> tuple[ToolCall, ...]:
    """Every tool call of a message list, in order (AgentV reads `output[].tool_calls[]`)."""
    out: list[ToolCall] = []
    for m in messages:
        if isinstance(m, dict):
            out.extend(calls_from_json(m.get("tool_calls")))
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):  # Anthropic-shaped content
                out.extend(anthropic_tool_calls(m["content"]))
    return tuple(out)


def output_messages(text: str, calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    """The answer as AgentV output messages (`output` of a results row): one assistant message."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [c.to_json() for c in calls]
    return [message]
