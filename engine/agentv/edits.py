"""YAML text for AgentV quick fixes: argv lists, scalars, whole entries. Minimal edits only."""

from __future__ import annotations

import json
import re
import shlex

from ..findings import Span
from ..source import Node, Scalar, resolve_plain
from ..validation.yaml_text import space_before

_FLOW_SAFE = re.compile(r"[A-Za-z0-9_./@~+-][A-Za-z0-9_./@~+=-]*\Z")
_BLOCK_SAFE = re.compile(r"[A-Za-z_./][\w ./()+-]*\Z")


def scalar(text: str, *, flow: bool = False) -> str:
    """`text` as a YAML scalar that reads back as the same string: plain when safe, else JSON-quoted."""
    safe = _FLOW_SAFE if flow else _BLOCK_SAFE
    if safe.match(text) and resolve_plain(text) == text and not text.endswith(" "):
        return text
    return json.dumps(text, ensure_ascii=False)


def flow_list(items: list[str]) -> str:
    """`[bun, run, x.ts]`: a flow sequence of strings."""
    return "[" + ", ".join(scalar(i, flow=True) for i in items) + "]"


def split_command(command: str) -> list[str]:
    """A shell command line as argv, the way a POSIX shell splits it (a best effort for a fix)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def slug(name: str) -> str:
    """A name in AgentV's `^[a-z0-9-]+$` form: `Multi-Model Benchmark` → `multi-model-benchmark`."""
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return s[:64].rstrip("-")


def pair_span(key: Scalar, value: Node | None) -> Span:
    """From the key's start to the value's end (`script: bun run x.ts`)."""
    end = _value_end(key, value)
    return Span(key.span.start_line, key.span.start_col, end.end_line, end.end_col)


def _value_end(key: Scalar, value: Node | None) -> Span:
    """Where an entry's value ends; the key's end for an alias (its node sits at the anchor, before)."""
    end = value.span if value is not None else key.span
    return end if (end.end_line, end.end_col) >= (key.span.end_line, key.span.end_col) else key.span


def entry_lines(key: Scalar, value: Node | None, lines: list[str]) -> Span | None:
    """The whole lines of a block-mapping entry (to delete it cleanly), or None when it shares a line."""
    end = _value_end(key, value)
    first = lines[key.span.start_line] if key.span.start_line < len(lines) else ""
    last = lines[end.end_line] if end.end_line < len(lines) else ""
    if not space_before(first, key.span.start_col) or (last[end.end_col:].strip()
                                                        and not last[end.end_col:].strip().startswith("#")):
        return None
    if end.end_line + 1 >= len(lines):  # the last line, with no newline after it
        return None
    return Span(key.span.start_line, 0, end.end_line + 1, 0)


def indent_of(node: Node, lines: list[str]) -> int:
    """The column a block node's lines start at."""
    return node.span.start_col if node.span.start_line < len(lines) else 0
