"""Test input and expected output: message lists, content blocks and tool calls, checked and expanded.

`input` string (even empty) → `[{role: user, content}]`; `expected_output` string (even empty) → one assistant message, a mapping
without `role` → an assistant message whose content is that object, a list whose first item has a
`role` → messages (any other list is structured content of one assistant message), as AgentV reads them.
"""

from __future__ import annotations

from ..findings import replace
from ..registry.agentv import CONTENT_TYPES, MESSAGE_ROLES
from ..source import Mapping, Node, Scalar, Sequence, node_type_name
from ..validation.suggest import closest
from .context import Context
from .files import looks_like_prompt_file
from .model import ContentBlock, Message, ToolCall

_ROLE_MARKERS = ("@[System]:", "@[User]:", "@[Assistant]:", "@[Tool]:")


def check_input(ctx: Context, node: Node | None, *, suite_level: bool = False) -> list[Message]:
    """A test's (or the suite's) input as messages; [] when it is missing or unusable."""
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return []
    text = ctx.str_of(node)
    if text is not None:
        _role_markers(ctx, node, text)
        if not text:  # AgentV sends it: one user message with no text
            emptied = "${{" in str(getattr(node, "value", ""))
            ctx.out.warning("empty-input", node.span,
                            f"The {'suite' if suite_level else 'test'}'s input is empty"
                            f"{' once its variables are replaced' if emptied else ''}: AgentV sends the target a "
                            "user message with no text (and so does evalspec's run).")
        return [Message.build(role="user", content=text, tool_calls=[], span=node.span)]
    if isinstance(node, Sequence):
        return check_messages(ctx, node, "message")
    if suite_level:  # AgentV's loader ignores it (expandInputShorthand: undefined) and runs the tests
        ctx.out.warning("invalid-input", node.span,
                        "Invalid suite-level 'input' field (must be a string or array of messages); found "
                        f"{node_type_name(node)}. AgentV ignores it, and so does evalspec's run.")
        return []
    ctx.out.error("invalid-input", node.span,
                  f"Invalid 'input' field (must be a string or array of messages); found {node_type_name(node)}.")
    return []


def check_expected(ctx: Context, node: Node | None) -> list[Message]:
    """A test's expected output as messages."""
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return []
    text = ctx.str_of(node)
    if text is not None:  # '' too: AgentV keeps an assistant message with no text
        return [Message.build(role="assistant", content=text, tool_calls=[], span=node.span)]
    if isinstance(node, Mapping):
        if node.has("role"):
            return check_messages(ctx, Sequence(node.span, [node], False), "expected_message")
        return [Message.build(role="assistant", content=ctx.values.plain(node), tool_calls=[],
                                        span=node.span)]
    if isinstance(node, Sequence):
        first = node.items[0] if node.items else None
        if isinstance(first, Mapping) and first.has("role"):
            return check_messages(ctx, node, "expected_message")
        # any other list, `[]` too, is the structured content of one assistant message
        return [Message.build(role="assistant", content=ctx.values.plain(node), tool_calls=[],
                                        span=node.span)]
    ctx.out.error("invalid-expected-output", node.span,
                  "Invalid 'expected_output' field (must be a string, object, or array); found "
                  f"{node_type_name(node)}.")
    return []


def check_messages(ctx: Context, seq: Sequence, spec: str) -> list[Message]:
    messages: list[Message] = []
    for item in seq.items:
        if not isinstance(item, Mapping):
            ctx.out.error("invalid-message", item.span,
                          f"Message must be an object with 'role' and 'content'; found {node_type_name(item)}.")
            continue
        entries = ctx.object(item, spec, handled=("role", "content", "tool_calls"), missing={"role": None})
        if entries is None:
            continue
        role = _check_role(ctx, item, entries.get("role"), entries.key("role"))
        if role is _DROPPED:
            continue  # AgentV's loader leaves a message with an unknown role out (isTestMessage)
        tool_calls_node = entries.get("tool_calls")
        tool_calls = _check_tool_calls(ctx, tool_calls_node, role, entries.key("tool_calls"))
        content_node = entries.get("content")
        content: object = None
        if content_node is None:
            if tool_calls_node is None:
                ctx.out.error("invalid-content", role_key.span if (role_key := entries.key("role")) is not None else item.span,
                              "Missing 'content' field (must be a string, array, or object); only a message "
                              "with tool_calls may leave it out.")
        else:
            content = _check_content(ctx, content_node)
        messages.append(Message.build(
            role=role or "user", content=content, tool_calls=tool_calls,
            name=ctx.str_of(entries.get("name")), tool_call_id=ctx.str_of(entries.get("tool_call_id")),
            span=item.span))
    return messages


def _check_role(ctx: Context, item: Mapping, node: Node | None, key: Scalar | None) -> str | None:
    roles = ", ".join(MESSAGE_ROLES)
    if node is None:
        span = item.pairs[0][0].span if item.pairs else item.span
        ctx.out.error("invalid-role", span, f"Message needs a 'role' ({roles}).")
        return None
    role = ctx.str_of(node)
    if role in MESSAGE_ROLES:
        return role
    shown = role if role is not None else getattr(node, "raw", node_type_name(node))
    best = closest(role, MESSAGE_ROLES, cutoff=0.6) if role else None
    message = f"Invalid role '{shown}'. Must be one of: {roles}"
    dropped = " AgentV leaves this message out of the test, and so does evalspec's run."
    if best:
        ctx.out.warning("invalid-role", node.span, f"{message}; did you mean '{best}'?{dropped}",
                        fix=replace(f"Change to '{best}'", node.span, best))
    else:
        ctx.out.warning("invalid-role", node.span, message + "." + dropped)
    return _DROPPED


_DROPPED = "\0dropped"  # a role AgentV does not know: the message is left out


def _check_content(ctx: Context, node: Node) -> object:
    text = ctx.str_of(node)
    if text is not None:
        _role_markers(ctx, node, text)
        return text
    if isinstance(node, Mapping):
        return ctx.values.plain(node)  # structured content, e.g. {decision: CLEAR}
    if isinstance(node, Sequence):
        blocks: list[ContentBlock] = []
        for item in node.items:
            item_text = ctx.str_of(item)
            if item_text is not None:
                _role_markers(ctx, item, item_text)
                blocks.append(ContentBlock.build(type="text", value=item_text, span=item.span))
            elif isinstance(item, Mapping):
                block = _check_block(ctx, item)
                if block is not None:
                    blocks.append(block)
            else:
                ctx.out.error("invalid-content", item.span,
                              f"Content array items must be strings or objects; found {node_type_name(item)}.")
        return blocks
    ctx.out.error("invalid-content", node.span,
                  f"Invalid 'content' field (must be a string, array, or object); found {node_type_name(node)}.")
    return None


def _check_block(ctx: Context, item: Mapping) -> ContentBlock | None:
    entries = ctx.object(item, "content_block", handled=("type", "value"), missing={"type": None, "value": None})
    if entries is None:
        return None
    type_node, value_node = entries.get("type"), entries.get("value")
    kind = ctx.str_of(type_node)
    # AgentV's loader keeps such a block and its prompt leaves it out (formatSegment: nothing for it):
    # a warning, and the block is left out of evalspec's prompt too.
    left_out = " AgentV leaves this block out of the prompt, and so does evalspec."
    if type_node is None or kind is None:
        span = type_node.span if type_node is not None else (item.pairs[0][0].span if item.pairs else item.span)
        ctx.out.warning("invalid-content-block", span,
                        f"Content object must have a 'type' field ({', '.join(CONTENT_TYPES)}).{left_out}")
        return None
    if kind not in CONTENT_TYPES:
        best = closest(kind, CONTENT_TYPES, cutoff=0.6)
        message = f"Unknown content type '{kind}'; use one of {', '.join(CONTENT_TYPES)}"
        if best:
            ctx.out.warning("invalid-content-type", type_node.span, f"{message}. Did you mean '{best}'?{left_out}",
                            fix=replace(f"Change to '{best}'", type_node.span, best))
        else:
            ctx.out.warning("invalid-content-type", type_node.span, message + "." + left_out)
        return None
    value = ctx.values.plain(value_node) if value_node is not None else None
    if kind in ("text", "file", "image") and not isinstance(value, str):
        span = value_node.span if value_node is not None else type_node.span
        ctx.out.warning("invalid-content-block", span,
                        f"Content with type '{kind}' must have a 'value' field (a string).{left_out}")
        return None
    if kind == "json" and value_node is None:
        ctx.out.error("invalid-content-block", type_node.span, "Content with type 'json' must have a 'value' field.")
        return None
    resolved = None
    if kind == "text":
        _role_markers(ctx, value_node, value)  # type: ignore[arg-type]
    elif kind == "file" or (kind == "image" and _image_is_path(value)):  # type: ignore[arg-type]
        resolved = ctx.fs.resolve(value, ctx.roots) if ctx.folder is not None else None  # type: ignore[arg-type]
        if ctx.folder is not None and resolved is None:
            ctx.out.warning("missing-file", value_node.span,  # type: ignore[union-attr]
                            f"File '{value}' not found next to the eval file or in a parent folder; AgentV "
                            "skips this content block.")
        elif resolved is not None and ctx.outside_project(value_node, value, resolved):  # type: ignore[arg-type]
            resolved = None  # never read, never sent
        elif resolved is not None and ctx.not_a_file(value_node, value, resolved,  # type: ignore[arg-type]
                                                     "sends only the block's name in its place"):
            resolved = None
    return ContentBlock.build(type=kind, value=value, span=item.span, resolved_path=resolved)


def _image_is_path(value: str) -> bool:
    return not value.startswith(("data:", "http://", "https://")) and (
        looks_like_prompt_file(value) or value.lower().endswith((".png", ".jpg", ".jpeg", ".gif", ".webp")))


def _check_tool_calls(ctx: Context, node: Node | None, role: str | None, key: Scalar | None) -> list[ToolCall]:
    if node is None:
        return []
    if not isinstance(node, Sequence):
        ctx.out.error("wrong-type", node.span, f"'tool_calls' must be a list of {{tool, input?, output?}}; "
                      f"found {node_type_name(node)}.")
        return []
    if role is not None and role != "assistant" and key is not None:
        ctx.out.warning("tool-calls-role", key.span,
                        f"Only assistant messages make tool calls; this message's role is '{role}'.")
    calls: list[ToolCall] = []
    for item in node.items:
        entries = ctx.object(item, "tool_call")
        if entries is None:
            continue
        tool = ctx.str_of(entries.get("tool"))
        if tool is None:
            continue
        calls.append(ToolCall.build(
            tool=tool, input=ctx.values.plain(entries.get("input")), output=ctx.values.plain(entries.get("output")),
            id=ctx.str_of(entries.get("id")), span=item.span))
    return calls


def _role_markers(ctx: Context, node: Node | None, text: str) -> None:
    if node is None or "@[" not in text:
        return
    lowered = text.lower()
    for marker in _ROLE_MARKERS:
        if marker.lower() in lowered:
            ctx.out.warning("role-marker", node.span,
                            f"Content contains potential role marker '{marker}'. This may confuse agentic "
                            "providers or cause prompt injection.")
