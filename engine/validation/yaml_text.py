"""Writing YAML text for quick fixes: quoting values and removing whole entries, minimally."""

from __future__ import annotations

import json
import re
from typing import Any

from ..findings import Span
from ..source import Node, Scalar, resolve_plain

_PLAIN_SAFE = re.compile(r"[A-Za-z_][\w .,/()+-]*\Z")
# Words YAML 1.1 tools (still common) read as booleans: never leave them plain.
_YAML11_BOOLS = frozenset(["y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"])


_SPACES = re.compile(r"\s*")
_SPACES_OR_DASH = re.compile(r"\s*(?:-\s*)?")


def space_before(line: str, col: int) -> bool:
    """`not line[:col].strip()`: only whitespace before column `col`, found without copying the line's
    start (a fix checked on each of 100,000 items of one 4 MB flow line copied its start each time)."""
    return _SPACES.match(line, 0, col).end() >= min(col, len(line))  # type: ignore[union-attr]


def dash_before(line: str, col: int) -> bool:
    """`line[:col].strip() in ("", "-")`, as `space_before` (the start of a block list item)."""
    return _SPACES_OR_DASH.match(line, 0, col).end() >= min(col, len(line))  # type: ignore[union-attr]


def flow(value: Any) -> str:
    """A value as flow YAML (JSON is valid flow YAML; strings stay readable)."""
    if isinstance(value, str):
        return quote(value)
    return json.dumps(value, ensure_ascii=False)


def quote(text: str, style: str | None = None) -> str:
    """A string as a YAML scalar, keeping the author's quoting style when it can."""
    if style == "'" and "\n" not in text:
        return "'" + text.replace("'", "''") + "'"
    if style is None and _PLAIN_SAFE.match(text) and resolve_plain(text) == text and ": " not in text \
            and " #" not in text and not text.endswith(" ") and text not in _YAML11_BOOLS:
        return text
    return json.dumps(text, ensure_ascii=False)


def entry_span(key: Scalar, value: Node | None, lines: list[str]) -> Span:
    """The lines of a block mapping entry, from its key to the end of its value, newline included.

    Deleting this span removes the entry without leaving a blank line. For an entry that shares
    its line with others (flow style), it is just the entry's own text.
    """
    end = value.span if value is not None else key.span
    if (end.end_line, end.end_col) < (key.span.end_line, key.span.end_col):
        end = key.span  # an alias: its node (and span) is the anchor's, somewhere before the key
    line = lines[key.span.start_line] if key.span.start_line < len(lines) else ""
    if space_before(line, key.span.start_col) and end.end_line < len(lines):
        rest = lines[end.end_line][end.end_col:] if end.end_line < len(lines) else ""
        if rest.strip() == "" or rest.strip().startswith("#"):
            if end.end_line + 1 < len(lines):
                return Span(key.span.start_line, 0, end.end_line + 1, 0)
            # The last line (no newline after it): take the newline before it instead.
            if key.span.start_line > 0:
                before = key.span.start_line - 1
                return Span(before, len(lines[before]), end.end_line, len(lines[end.end_line]))
            return Span(key.span.start_line, 0, end.end_line, len(lines[end.end_line]))
    return Span(key.span.start_line, key.span.start_col, end.end_line, end.end_col)
