"""An AgentV test's input messages as the chat request its target gets (the runner sends it; the cost
estimate sizes it)."""

from __future__ import annotations

from pathlib import Path

from ...agentv.model import ContentBlock, Message
from ...providers.base import ChatMessage

FILE_LIMIT = 256 * 1024  # bytes of a file block inlined into a message
# AgentV's (providers/ai-sdk.ts) system prompt for a chat target called without one of its own.
DEFAULT_SYSTEM_PROMPT = "You are a careful assistant. Follow all provided instructions and do not fabricate results."
NO_DEFAULT_SYSTEM = frozenset({"mock", "cli"})  # targets that are not chat APIs: they get no system prompt


def target_system(system: str | None, kind: str | None) -> str | None:
    """The system prompt a target gets: the test's own, else (a chat API target: azure, anthropic, gemini,
    and the OpenAI-compatible ones alike) DEFAULT_SYSTEM_PROMPT, as AgentV's ai-sdk providers send it;
    a mock or cli target none. `kind`: the target's `provider` (None: a target named by model id)."""
    if system is not None or kind in NO_DEFAULT_SYSTEM:
        return system
    return DEFAULT_SYSTEM_PROMPT


def chat_messages(messages: list[Message], inside: Path | None = None) -> tuple[str | None, list[ChatMessage]]:
    """AgentV input messages as a chat request: system turns become the system prompt; file blocks are
    inlined (bounded); tool results are passed as user turns (chat targets have no tool protocol).

    `inside`: the project's folder a file block must still lie in when it is read (None with
    --allow-outside-files). `check` refused the blocks that pointed out; this catches a file swapped
    for a link pointing out, or hard-linked, since: it is not read, and only its name is sent."""
    system: list[str] = []
    out: list[ChatMessage] = []
    for m in messages:
        text = _content(m, inside)
        if m.role == "system":
            system.append(text)
        elif m.role == "tool":
            out.append(ChatMessage("user", f"[tool result{f' from {m.name}' if m.name else ''}]\n{text}"))
        else:
            out.append(ChatMessage(m.role, text))
    return ("\n\n".join(system) or None), out


def _content(m: Message, inside: Path | None) -> str:
    if isinstance(m.content, list) and m.content and all(isinstance(b, ContentBlock) for b in m.content):
        parts = []
        for b in m.content:
            if b.type == "text":
                parts.append(str(b.value))
            elif b.type == "file" and b.resolved_path is not None:
                from ...agentv.files import read_text

                body = read_text(b.resolved_path, FILE_LIMIT, inside=inside)
                parts.append(f"<file path=\"{b.value}\">\n{body}\n</file>" if body is not None else f"[file {b.value}]")
            elif b.type == "json":
                import json

                parts.append(json.dumps(b.value, ensure_ascii=False))
            else:
                parts.append(f"[{b.type} {b.value}]")
        return "\n".join(parts)
    return m.text()
