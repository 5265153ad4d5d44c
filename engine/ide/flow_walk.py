"""Where the cursor is inside a flow collection written on one line (`[…]`, `{…}`).

The line is read bracket by bracket, comma by comma, up to the cursor: which collections are open there,
the item index or key in each, and where the word being typed starts. When the located tree has the
line's collection (the document parses), the walk bisects each open collection's items to the one before
the cursor and reads only the text between items, so a 4 MB one-line list costs as little as a short
one. The result equals a character-by-character walk's (`tests/ide/test_flow_walk.py` compares them).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from ..source import Mapping, Node, Sequence
from .lines import closing_quote

# One open collection: [bracket, item index ("[") or key (None before its ':'), after_colon, token_start]
Open = list[Any]


@dataclass(slots=True)
class FlowState:
    """The walk's state at the cursor."""

    stack: list[Open] = field(default_factory=list)  # the open collections, outermost first
    token_start: int = 0  # where the word under the cursor starts
    quote: str | None = None  # the quote of a string the cursor is inside


def flow_state(text: str, start: int, col: int, node: Node | None = None) -> FlowState:
    """The state at `col` of the flow collection that opens at `text[start]`. `node`: the located
    collection that starts there, when the tree has one (then most of the line is jumped over). Without
    it (the document does not parse while it is typed), a long line's walk goes on from the state it
    noted last time before `col` (`_marked_walk`)."""
    state = FlowState([], start)
    i = start
    if node is not None:
        resumed = _resume(text, start, col, node)
        if resumed is not None:
            state, i = resumed
    if col - i > MARK_EVERY:
        return _marked_walk(text, start, col)
    _walk(text, state, i, col)
    return state


def _walk(text: str, state: FlowState, i: int, stop: int, marks: list[_Mark] | None = None) -> int:
    """Read `text[i:stop]` into `state`; returns where it stopped (past `stop` after a quoted string that
    ends beyond it; at an unclosed quote, with `state.quote` set). With `marks`, the state is noted there
    every `MARK_EVERY` characters past the last one noted."""
    stack = state.stack
    token_start = state.token_start
    next_mark = (marks[-1][0] if marks else i) + MARK_EVERY if marks is not None else stop
    while i < stop:
        if i >= next_mark and marks is not None:
            marks.append((i, [list(e) for e in stack], token_start))
            next_mark = i + MARK_EVERY
        c = text[i]
        if c in "\"'":
            end = closing_quote(text, i)
            if end < 0 or end >= stop:
                state.quote = c
                token_start = i + 1
                break
            i = end + 1
            continue
        if c == "[":
            stack.append(["[", 0, False, i + 1])
            token_start = i + 1
        elif c == "{":
            stack.append(["{", None, False, i + 1])
            token_start = i + 1
        elif c in "]}":
            if stack:
                stack.pop()
            token_start = i + 1
        elif c == "," and stack:
            top = stack[-1]
            if top[0] == "[":
                top[1] += 1
            else:
                top[1], top[2] = None, False
            top[3] = i + 1
            token_start = i + 1
        elif c == ":" and stack and stack[-1][0] == "{" and (i + 1 >= len(text) or text[i + 1] in " \t,]}"):
            top = stack[-1]
            top[1] = text[top[3]:i].strip().strip("\"'")
            top[2] = True
            token_start = i + 1
        i += 1
    state.token_start = token_start
    return i


# --- a long line without its tree: the walk's states noted along it -----------------------------------

MARK_EVERY = 16_384  # characters between two noted states
_MARKED_KEPT = 4  # long lines whose noted states are kept, the last walked

_Mark = tuple[int, list[Open], int]  # (position, the open collections there, token_start)


@dataclass(slots=True)
class _Marked:
    text: str
    start: int
    marks: list[_Mark]


_marked: list[_Marked] = []  # newest last


def _marked_walk(text: str, start: int, col: int) -> FlowState:
    """The walk to `col`, from the state noted last before it on this line (or on the same line before an
    edit, up to where the edit starts), noting more on the way: while a 4 MB flow line is typed into and
    does not parse, the first request reads it to the cursor and the next ones from the nearest note."""
    known = _marks_for(text, start)
    k = bisect_right(known, col, key=_mark_at) - 1
    marks = known[:k + 1]
    if marks:
        at, stack, token_start = marks[-1]
        state, i = FlowState([list(e) for e in stack], token_start), at
    else:
        state, i = FlowState([], start), start
    _walk(text, state, i, col, marks)
    if len(marks) > len(known):
        _keep(_Marked(text, start, marks))
    return state


def _mark_at(mark: _Mark) -> int:
    return mark[0]


def _marks_for(text: str, start: int) -> list[_Mark]:
    """The states noted on `text` (or on an earlier version of it: those before the first change)."""
    best: list[_Mark] = []
    for entry in reversed(_marked):
        if entry.start != start:
            continue
        if entry.text is text or entry.text == text:
            return entry.marks
        same = _common_prefix(entry.text, text)
        # A state at `at` depends on the text up to `at` and the character after it (a ':' followed by
        # a blank, a '' escape): kept only where both are unchanged.
        kept = entry.marks[:bisect_right(entry.marks, same - 1, key=_mark_at)]
        if len(kept) > len(best):
            best = kept
    return best


def _keep(entry: _Marked) -> None:
    for i, old in enumerate(_marked):
        if old.start == entry.start and (old.text is entry.text or old.text == entry.text):
            if len(old.marks) >= len(entry.marks):
                return
            del _marked[i]
            break
    _marked.append(entry)
    del _marked[:-_MARKED_KEPT]


def _common_prefix(a: str, b: str) -> int:
    """How many first characters `a` and `b` share, compared in C a slice at a time."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n:
        hi = min(n, lo + 65_536)
        if a[lo:hi] != b[lo:hi]:
            while hi - lo > 1:  # the first difference is in [lo, hi)
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
    return n


# --- a long line with its tree -------------------------------------------------------------------------

def _resume(text: str, start: int, col: int, node: Node) -> tuple[FlowState, int] | None:
    """The walk's state at a point at or before `col`, reached through the tree: from each open
    collection's bracket to the end of the item before the cursor's, then on. None when the tree does
    not fit the text as the walk reads it (an alias, a tag, a quote inside a plain word): the walk then
    reads the line from `start`, as before."""
    line = node.span.start_line
    state = FlowState([], start)
    if not _jumpable(text, node, line, start, len(text)):
        return None
    if col >= node.span.end_col:  # past the collection: nothing is open at its end
        state.token_start = node.span.end_col
        return state, node.span.end_col
    i = start
    while True:
        s, e = node.span.start_col, node.span.end_col
        if _walk(text, state, i, s) != s or state.quote is not None:
            return None  # the walk reads a quote the parser did not: leave it to the walk
        if not s < col < e:
            return state, s
        _walk(text, state, s, s + 1)  # the bracket
        top = state.stack[-1]
        i = s + 1
        if isinstance(node, Sequence):
            items = node.items
            n = bisect_left(items, col, key=_start_col)  # items starting before the cursor
            child = items[n - 1] if n else None
            before = items[n - 2] if n >= 2 else None
            index = n - 2
        else:
            pairs = node.pairs  # type: ignore[attr-defined]
            n = bisect_left(pairs, col, key=_key_start_col)
            child = pairs[n - 1][1] if n else None
            before = pairs[n - 2][1] if n >= 2 else None
            index = None
        if child is None:
            return state, i
        if before is not None:
            b = before.span
            nxt = child if isinstance(node, Sequence) else node.pairs[n - 1][0]  # type: ignore[attr-defined]
            if not (_on_line(before, line, s, e) and _on_line(nxt, line, s, e) and b.end_col <= nxt.span.start_col
                    and "," in text[b.end_col:nxt.span.start_col]):
                return state, i  # aliases or keys without values: read this collection from its start
            if index is not None:
                top[1] = index
            state.token_start = i = b.end_col
        if not (_jumpable(text, child, line, child.span.start_col, e) and child.span.start_col < col < child.span.end_col):
            return state, i
        node = child


def _jumpable(text: str, node: Node, line: int, start: int, end: int) -> bool:
    """A flow collection written where the tree says: on this line, from its bracket at `start` to its
    closing one, by `end`; not an alias (which is its anchor's node, written elsewhere)."""
    sp = node.span
    if not (isinstance(node, (Mapping, Sequence)) and node.flow and node.anchor is None
            and sp.start_line == line == sp.end_line and sp.start_col == start < sp.end_col <= end):
        return False
    pair = "[]" if isinstance(node, Sequence) else "{}"
    return text[start] == pair[0] and text[sp.end_col - 1] == pair[1]


def _on_line(node: Node, line: int, s: int, e: int) -> bool:
    sp = node.span
    return node.anchor is None and sp.start_line == line == sp.end_line and s < sp.start_col <= sp.end_col < e


def _start_col(node: Node) -> int:
    return node.span.start_col


def _key_start_col(pair: tuple[Node, Node]) -> int:
    return pair[0].span.start_col


def flow_node_at(root: Node | None, line: int, col: int) -> Node | None:
    """The located flow collection that starts at (line, col), found by bisection from the root."""
    node = root
    at = (line, col)
    while node is not None:
        sp = node.span
        if (sp.start_line, sp.start_col) == at:
            return node if isinstance(node, (Mapping, Sequence)) and node.flow else None
        if not (sp.start_line, sp.start_col) < at <= (sp.end_line, sp.end_col):
            return None
        if isinstance(node, Mapping):
            pairs = node.pairs
            k = bisect_right(pairs, at, key=_pair_start) - 1  # the last key starting at or before
            if k < 0:
                return None
            key, value = pairs[k]
            node = key if _node_start(key) == at else value
        elif isinstance(node, Sequence):
            k = bisect_right(node.items, at, key=_node_start) - 1
            if k < 0:
                return None
            node = node.items[k]
        else:
            return None
    return None


def _node_start(node: Node) -> tuple[int, int]:
    return node.span.start_line, node.span.start_col


def _pair_start(pair: tuple[Node, Node]) -> tuple[int, int]:
    return pair[0].span.start_line, pair[0].span.start_col
