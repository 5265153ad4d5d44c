"""The block structure of single YAML lines, read from the text alone.

An editor asks for completions in documents that do not parse: `shou` half typed, `- $con` with
nothing after. The located tree has no node there, so the IDE layer reads the structure the way a
person does: the `- ` markers and the `key:` of each line, and their columns. `shape()` does that for
one line; it never looks at other lines, so reading the few lines around the cursor stays cheap even
in a 50,000-line file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A mapping key at the start of a line's content: quoted, or plain up to the first ': ' / ':' at end.
# A plain key runs to the first ':' followed by a blank or the end, with no '#' before it; the runs are
# possessive (`*+`) so a line that is not a key fails in one pass: a lazy `[^#]*?` before `[ \t]*:`
# tried every split of a long run of spaces (quadratic: 60,000 trailing spaces took seconds).
_PLAIN_TAIL = r"""(?:[^#:]|:(?![ \t]|$))*+"""
_KEY = re.compile(
    r"""(?P<key>"(?:[^"\\]|\\.)*+"|'(?:[^']|'')*+'"""
    rf"""|[^\s#'"\[\]{{}},&*!|>%@`?:-]{_PLAIN_TAIL}|[-?:][^\s#]{_PLAIN_TAIL})"""
    r"""[ \t]*+:(?=[ \t]|$)""")
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*\s*(?:#.*)?\Z")
_DOC_MARKER = re.compile(r"(?:---|\.\.\.)(?:\s|\Z)")

# How a key's value is written on its own line.
OPENER = "block"  # nothing: the value is on the following lines (a mapping, a list, or null)
BLOCK_SCALAR = "block-scalar"  # `|` / `>`: the following, deeper lines are text
FLOW_OPEN = "flow-open"  # `[` / `{` not closed on this line
QUOTE_OPEN = "quote-open"  # a quoted scalar that goes on to the next lines
INLINE = "inline"  # a complete value on this line


@dataclass(slots=True)
class LineShape:
    """One line: its `- ` markers, then a `key:` with its value, or a plain scalar."""

    indent: int
    dashes: tuple[int, ...]  # columns of the `- ` markers, outermost first
    content_col: int  # where the content after the markers starts (len(line) when there is none)
    key: str | None = None  # the key, unquoted
    key_col: int = -1
    key_end: int = -1  # end of the key text (quotes included), before the ':'
    colon_col: int = -1
    value_col: int = -1  # the first character of the inline value (len(line) when there is none)
    value: str = ""  # the inline value, comment removed, trailing spaces removed
    value_kind: str = INLINE
    blank: bool = False  # empty, spaces only, or a comment
    doc_marker: bool = False  # `---` / `...` at column 0

    @property
    def opens_block(self) -> bool:
        """Does the key's value continue on the following (deeper) lines?"""
        return self.key is not None and self.value_kind != INLINE

    @property
    def first_col(self) -> int:
        return self.dashes[0] if self.dashes else self.content_col


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def is_blank(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("#")


# Long lines' shapes, the last few: a flow list on one 4 MB line took 0.7 s to read (bracket by bracket)
# and a completion or hover read it 8 times. Callers never change a LineShape.
LONG_LINE = 4096
_LONG_SHAPES: dict[str, LineShape] = {}
_LONG_SHAPES_KEPT = 8


def shape(line: str) -> LineShape:
    if len(line) < LONG_LINE:
        return _shape(line)
    found = _LONG_SHAPES.get(line)
    if found is None:
        found = _shape(line)
        if len(_LONG_SHAPES) >= _LONG_SHAPES_KEPT:
            _LONG_SHAPES.pop(next(iter(_LONG_SHAPES)), None)  # the oldest
        _LONG_SHAPES[line] = found
    return found


def _shape(line: str) -> LineShape:
    line = line.rstrip("\r")
    stripped = line.lstrip(" ")
    indent = len(line) - len(stripped)
    if not stripped.strip() or stripped.startswith("#"):  # tabs and other blanks only: a blank line too
        return LineShape(indent, (), len(line), blank=True)
    if indent == 0 and _DOC_MARKER.match(line):
        return LineShape(0, (), len(line), doc_marker=True)
    pos = indent
    dashes: list[int] = []
    n = len(line)
    while pos < n and line[pos] == "-" and (pos + 1 == n or line[pos + 1] in " \t"):
        dashes.append(pos)
        pos += 1
        while pos < n and line[pos] in " \t":
            pos += 1
    out = LineShape(indent, tuple(dashes), pos)
    if pos >= n or line[pos] == "#":
        out.content_col = n if pos >= n else pos
        return out
    m = _KEY.match(line, pos)
    if m is None:
        return out
    raw = m.group("key")
    out.key = _unquote(raw.rstrip())
    out.key_col = pos
    out.key_end = pos + len(raw.rstrip())
    out.colon_col = m.end() - 1
    vpos = m.end()
    while vpos < n and line[vpos] in " \t":
        vpos += 1
    out.value_col = vpos
    out.value, out.value_kind = _value(line[vpos:])
    return out


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    return raw


def _value(text: str) -> tuple[str, str]:
    """The inline value (comment removed) and how it continues."""
    if not text or text.startswith("#"):
        return "", OPENER
    if _BLOCK_SCALAR.match(text):
        return text.split("#", 1)[0].strip(), BLOCK_SCALAR
    first = text[0]
    if first in "\"'":
        end = closing_quote(text, 0)
        if end < 0:
            return text.rstrip(), QUOTE_OPEN
        return text[: end + 1], INLINE
    if first in "[{":
        closed = _closed_at_last_bracket(text)
        if closed >= 0:
            return text[: closed + 1], INLINE
        depth, i = 0, 0
        while True:
            if depth > _DEEP:
                # Fewer characters than the depth cannot close it: counted in C a stretch at a time, not
                # bracket by bracket (190-deep nesting on a 4 MB line: 4 million brackets, 0.8 s).
                stretch = text[i:i + depth - 1]
                if '"' not in stretch and "'" not in stretch:
                    depth += stretch.count("[") + stretch.count("{") - stretch.count("]") - stretch.count("}")
                    i += len(stretch)
                    if i >= len(text):
                        return text.rstrip(), FLOW_OPEN
                    continue
            found = _FLOW_STOP.search(text, i)  # the next quote or bracket (a 4 MB line costs ms, not seconds)
            if found is None:
                return text.rstrip(), FLOW_OPEN
            i = found.start()
            c = text[i]
            if c in "\"'":
                end = closing_quote(text, i)
                if end < 0:
                    return text.rstrip(), FLOW_OPEN
                i = end
            elif c in "[{":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return text[: i + 1], INLINE
            i += 1
    cut = _comment_start(text)
    return (text if cut < 0 else text[:cut]).rstrip(), INLINE


def _closed_at_last_bracket(text: str) -> int:
    """Where the flow value that opens `text` closes, when that is its last bracket (the usual long line:
    one list, maybe a comment after it), found in C: the brackets alone (`re.sub`), whose inside reduces
    to nothing by taking out `[]` and `{}` pairs. -1 when that is not so or not quickly seen (quotes, a
    value that closes earlier, nesting deeper than a few levels): then each bracket is read in turn (1.2
    million brackets of `[[x, y], …]` took 0.26 s, on the first request after every edit of the line)."""
    if len(text) < LONG_LINE or '"' in text or "'" in text:
        return -1
    brackets = text.encode().translate(None, _NOT_BRACKETS)  # UTF-8: no other character has these bytes
    if len(brackets) < 2 or brackets[-1:] != _CLOSER[brackets[:1]]:
        return -1
    inside = brackets[1:-1]
    for _ in range(4):
        shorter = inside.replace(b"[]", b"").replace(b"{}", b"")
        if not shorter:
            return max(text.rfind("]"), text.rfind("}"))
        if len(shorter) == len(inside):
            return -1
        inside = shorter
    return -1


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_CLOSER = {b"[": b"]", b"{": b"}"}
_FLOW_STOP = re.compile(r"[\"'\[\]{}]")  # what a flow collection's nesting turns on
_DEEP = 8  # nesting from which a flow value is read a stretch at a time


def closing_quote(text: str, start: int) -> int:
    """Index of the quote closing the one at `start`, or -1 when it is not closed on this text."""
    q = text[start]
    i, n = start + 1, len(text)
    # str.find jumps in C (memchr): a character loop cost 0.4 s on a 4 MB line, on every hover and
    # completion there, and a regex class search 0.15 s, all of it holding the interpreter lock. Each
    # next position is looked for again only once passed, so a million escapes stay linear.
    quote = text.find(q, i)
    if q == "'":
        while quote >= 0 and quote + 1 < n and text[quote + 1] == "'":  # '' is an escaped quote
            quote = text.find(q, quote + 2)
        return quote
    escape = text.find("\\", i)
    while quote >= 0:
        if escape < 0 or quote < escape:
            return quote
        i = escape + 2  # the escaped character is skipped, a quote too
        if i >= n:
            return -1
        if quote < i:
            quote = text.find(q, i)
        escape = text.find("\\", i)
    return -1


def _comment_start(text: str) -> int:
    """Where ` #` (a comment after a value) starts, or -1: `#` is rare and a space is not, so `#` is
    what is searched for (str.find(" #") looked at every space of a 4 MB line of words)."""
    j = text.find("#", 1)
    while j > 0 and text[j - 1] != " ":
        j = text.find("#", j + 1)
    return j - 1 if j > 0 else -1


def scalar_text(raw: str) -> str:
    """A one-line scalar's value as written: quotes removed, plain text as is."""
    raw = raw.strip()
    if raw and raw[0] in "\"'":
        end = closing_quote(raw, 0)
        return _unquote(raw[: end + 1]) if end > 0 else raw[1:]
    return raw
