"""Where the cursor is: the key path from the root, key or value position, the object around it.

Works on the text as it is while someone types: usually it does not parse (`shou` half typed,
`- $con` with nothing after). The located tree is used where it covers the cursor, to jump over
large valid regions (finding prompt 4,000 of 5,000 by bisection); the rest is read from the lines
near the cursor, the way a person reads YAML: the nearest less-indented `key:` lines and `- `
markers above it. Nothing here re-parses or re-checks the file.

Paths are normalized for Weval so a prompt is a prompt whatever the document structure:
`["<header>", "models", 0]`, `["<prompts>", 3, "should", 1]` (the header in its own document or
the single-mapping form; prompts in a list document, a stream of documents, or under `prompts:`).
AgentV paths are the YAML paths: `["tests", 0, "assert", 2, "type"]`.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

from ..detect import FileKind
from ..findings import Span
from ..registry.fields import FieldSpec, ObjectSpec
from ..source import MAX_DEPTH, Mapping, Node, Scalar, Sequence
from . import schema as sc
from .flow_walk import flow_node_at, flow_state
from .layout import Layout, layout
from .lines import BLOCK_SCALAR, INLINE, LONG_LINE, LineShape, closing_quote, shape

KEY = "key"  # typing a key of the object at `path` (or a list item that may become one)
VALUE = "value"  # typing a scalar value at `path`
NONE = "none"  # inside text (a block scalar, a comment): nothing to offer

_WORD_END = re.compile(r"[^\s,\[\]{}:#\"']*")
# Where a plain scalar stops: a line end or a comment ("#" after a space). Searched for, not matched
# character by character: a 2 MB line took 150 ms a cursor as `(?:[^#\n]|(?<!\s)#)*`, 30 ms now.
_PLAIN_END = re.compile(r"\n|(?<=\s)#")
_FLOW_ITEM_END = re.compile(r"[,\]}]")


@dataclass(slots=True)
class Step:
    """One step of the path: a key, or a list item; where it is written."""

    kind: str  # "key" | "item" | "scalar" (the continuation of a multi-line scalar)
    label: str | int
    col: int = -1
    line: int = -1
    value_kind: str = INLINE  # keys: how the value is written on the key's line
    node: Node | None = None  # the located value, when the tree has it


@dataclass(slots=True)
class CursorContext:
    kind: FileKind
    document: int  # the YAML document (0-based) the cursor is in
    section: str | None  # Weval: "header" | "prompt"; AgentV: "suite" | "targets"
    path: list[str | int]  # normalized key path (see the module doc)
    position: str  # KEY | VALUE | NONE
    slot: sc.Slot  # KEY: the object being filled in; VALUE: the value being typed
    spec: ObjectSpec | None  # the enclosing object's fields (KEY: the object typed into; VALUE: the key's owner)
    field: FieldSpec | None  # VALUE: the field of the key; KEY: the field named by the key under the cursor
    prefix: str  # the text typed so far (without an opening quote)
    replace_span: Span  # what a completion replaces
    # (dataclasses.field: the `field` annotation above names a member of this class)
    present: dict[str, str] = dataclasses.field(default_factory=dict)  # keys already in the object -> inline value
    key: str | None = None  # VALUE: the key whose value this is
    key_span: Span | None = None  # the key written on the cursor's line, if any
    value_span: Span | None = None  # the scalar under the cursor, if any
    in_list_item: bool = False  # the thing typed is a list item (`- …`)
    needs_dash: bool = False  # a bare line inside a list: insertions need a leading "- "
    needs_space: bool = False  # right after ':' or '-' with no space: insertions need one
    has_colon: bool = False  # KEY: a ':' already follows the key being typed
    quote: str | None = None  # the quote the value was opened with
    in_flow: bool = False  # inside `[…]` / `{…}`: insertions stay on one line
    indent: int = 0  # the column the object's keys start at (for multi-line insertions)
    owner_spec: ObjectSpec | None = None  # VALUE: the object holding `key`

    @property
    def format(self) -> str:
        return "weval" if self.kind is FileKind.WEVAL else "agentv"


# --- the cursor's own line ---------------------------------------------------------------------------

# The located root of the cursor's document (None where it does not parse) and the cursor's line: a flow
# collection on a long line is read through the tree (flow_walk.py).
_Tree = tuple[Node | None, int]

@dataclass(slots=True)
class _Here:
    steps: list[Step]  # structures on the cursor line left of the cursor (items, a key in VALUE position)
    position: str
    prefix: str = ""
    start: int = 0  # replace range on the line
    end: int = 0
    t: int = 0  # column of the outermost structure of the line (where its level is)
    first_kind: str = "key"  # "item" when the line starts with `- `
    has_colon: bool = False
    quote: str | None = None
    needs_space: bool = False
    bare: bool = False  # no `- ` and no `key:`: a blank line, or a word being typed at a key's place
    flow_keys: dict[str, str] | None = None  # inside `{…}`: the keys written before the cursor
    shape: LineShape | None = None
    key_span: tuple[int, int] | None = None
    value_span: tuple[int, int] | None = None


def _here(text: str, col: int, tree: _Tree) -> _Here:
    sh = shape(text)
    before = text[:col]
    if sh.blank or sh.doc_marker or not before.strip():
        # A blank line, or the cursor in the indentation: the level is the cursor's column.
        if sh.doc_marker:
            return _Here([], NONE, t=0)
        if (not sh.blank and col < sh.first_col) or (sh.blank and "#" in before):
            return _Here([], NONE, t=col)
        return _Here([], KEY, start=col, end=col, t=col, bare=True, shape=sh)
    steps = [Step("item", 0, d) for d in sh.dashes if d < col]
    here = _Here(steps, KEY, t=sh.first_col, first_kind="item" if sh.dashes else "key", shape=sh)
    if sh.dashes and col <= sh.dashes[-1] + 1 and col <= sh.content_col:
        # On a `-` (nothing to offer) or right after it: the item itself, which needs a space first.
        here.start = here.end = col
        here.needs_space = col == len(text) or text[col] != " "
        if col <= sh.dashes[-1]:
            here.position = NONE
        return here
    if sh.key is not None:
        here.key_span = (sh.key_col, sh.key_end)
        if col <= sh.colon_col:
            here.has_colon = True
            q = text[sh.key_col] if text[sh.key_col] in "\"'" else None
            here.quote = q
            start = sh.key_col + (1 if q else 0)
            here.prefix = text[start:col]
            here.start = start
            here.end = sh.key_end - (1 if q and sh.key_end > start else 0)
            return here
        # VALUE of the key on this line.
        here.steps.append(Step("key", sh.key, sh.key_col, -1, sh.value_kind))
        here.position = VALUE
        vcol = sh.value_col
        if col < vcol or vcol >= len(text):
            # No value yet, or the cursor before it: an insertion here (with a space after a bare ':').
            here.start = here.end = col
            here.needs_space = col == sh.colon_col + 1 and (col >= len(text) or text[col] != " ")
            return here
        return _value_at(here, text, vcol, col, sh, tree)
    # Content that is not `key:` — a word being typed where a key goes, or a scalar item.
    c = sh.content_col
    if c < len(text) and text[c] in "[{":
        return _flow(here, text, c, col, tree)
    here.bare = not sh.dashes
    return _scalar_at(here, text, c, col)


def _value_at(here: _Here, text: str, vcol: int, col: int, sh: LineShape, tree: _Tree) -> _Here:
    first = text[vcol]
    if first in "|>" and sh.value_kind == BLOCK_SCALAR:
        here.position = NONE
        return here
    if first in "[{":
        return _flow(here, text, vcol, col, tree)
    return _scalar_at(here, text, vcol, col)


def _scalar_at(here: _Here, text: str, start: int, col: int) -> _Here:
    if start < len(text) and text[start] in "\"'":
        end = closing_quote(text, start)
        if 0 <= end < col:  # after the closing quote
            here.position = NONE
            return here
        here.quote = text[start]
        here.prefix = text[start + 1:col]
        here.start = start + 1
        here.end = end if end >= 0 else len(text.rstrip())
        here.value_span = (start, end + 1 if end >= 0 else len(text.rstrip()))
        return here
    m = _PLAIN_END.search(text, start) if "#" in text or "\n" in text else None
    stop = m.start() if m is not None else len(text)
    end = len(text[start:stop].rstrip()) + start
    if col > end:
        end = col
    here.prefix = text[start:col]
    here.start = start
    here.end = end
    here.value_span = (start, end)
    return here


def _flow(here: _Here, text: str, start: int, col: int, tree: _Tree) -> _Here:
    """Inside `[…]` / `{…}` on one line: the steps down to the cursor and what is typed there."""
    root, line = tree
    state = flow_state(text, start, col, flow_node_at(root, line, start) if len(text) >= LONG_LINE else None)
    stack, token_start = state.stack, state.token_start
    if state.quote is not None:
        here.quote = state.quote
    if not stack:
        here.position = NONE
        return here
    for bracket, label, after_colon, _ in stack[:-1]:
        if bracket == "[":
            here.steps.append(Step("item", label))
        elif after_colon:
            here.steps.append(Step("key", label))
    bracket, label, after_colon, _ = stack[-1]
    here.flow_keys = _flow_keys(text, start, col) if bracket == "{" else {}
    while token_start < col and text[token_start] in " \t":
        token_start += 1
    here.prefix = text[token_start:col]
    here.start = token_start
    m = _WORD_END.match(text, col)
    here.end = col + (len(m.group(0)) if m else 0)
    if here.quote:
        q_end = closing_quote(text, token_start - 1) if token_start > 0 else -1
        here.end = q_end if q_end >= 0 else here.end
    if bracket == "[":
        here.steps.append(Step("item", label))
        here.position = VALUE
    elif after_colon:
        here.steps.append(Step("key", label))
        here.position = VALUE
    else:
        here.position = KEY
        here.has_colon = text[here.end:here.end + 1] == ":"
    if here.position == VALUE:  # the scalar under the cursor, for hover and go-to (`models: [CORE]`)
        here.value_span = _flow_scalar(text, token_start, col, here.quote)
    here.bare = False
    return here


def _flow_scalar(text: str, start: int, col: int, quote: str | None) -> tuple[int, int] | None:
    """The span of the flow item or value that starts at `start` (its quotes included): up to its
    closing quote, or to the `,` `]` `}` after the cursor, trailing blanks left out."""
    if quote:
        close = closing_quote(text, start - 1)
        return (start - 1, close + 1) if close >= 0 else None
    found = _FLOW_ITEM_END.search(text, col)
    stop = found.start() if found else len(text)
    end = start + len(text[start:stop].rstrip())
    return (start, end) if end > start else None


def _flow_keys(text: str, start: int, col: int) -> dict[str, str]:
    """The keys already written in the innermost `{…}` before the cursor (roughly: `key:` words)."""
    opened = text.rfind("{", start, col)
    inner = text[opened + 1:col] if opened >= 0 else ""
    out: dict[str, str] = {}
    for part in inner.split(","):
        key, sep, value = part.partition(":")
        if sep and key.strip():
            out[key.strip().strip("\"'")] = value.strip()
    return out


# --- the lines above --------------------------------------------------------------------------------

@dataclass(slots=True)
class _Floor:
    """The deepest block node of the tree that holds the cursor: lines above it need not be read."""

    steps: list[Step]
    node: Node
    line: int
    col: int


def _tree_floor(root: Node | None, line: int, t: int) -> _Floor | None:
    if root is None or not isinstance(root, (Mapping, Sequence)) or root.flow:
        return None
    if root.span.start_line >= line or t < root.span.start_col:
        return None
    steps: list[Step] = []
    node: Node = root
    while True:
        nxt: tuple[Step, Node] | None = None
        if isinstance(node, Mapping):
            i = bisect_right(node.pairs, line, key=_pair_line) - 1
            if i >= 0:
                k, v = node.pairs[i]
                if isinstance(k, Scalar) and _holds(v, line, t):
                    nxt = (Step("key", str(k.value), k.span.start_col, k.span.start_line, "block", v), v)
        elif isinstance(node, Sequence):
            i = bisect_right(node.items, line, key=_node_line) - 1
            if i >= 0 and _holds(node.items[i], line, t):
                it = node.items[i]
                nxt = (Step("item", i, it.span.start_col, it.span.start_line, node=it), it)
        if nxt is None:
            return _Floor(steps, node, node.span.start_line, node.span.start_col)
        steps.append(nxt[0])
        node = nxt[1]


# Where a list's item or a mapping's key starts, for a bisection over the list itself: a list of every
# start, made per request, was 17 ms on a 4 MB file, and each completion or hover made two.
def _node_line(node: Node) -> int:
    return node.span.start_line


def _pair_line(pair: tuple[Node, Node]) -> int:
    return pair[0].span.start_line


def _holds(node: Node, line: int, t: int) -> bool:
    """Is `line` strictly inside a block collection `node`, at a column inside it?"""
    return (isinstance(node, (Mapping, Sequence)) and not node.flow and node.span.start_line < line
            <= node.span.end_line and t >= node.span.start_col)


def _scan_up(lines: list[str], line: int, t: int, kind: str, stop: int, floor: _Floor | None) -> tuple[list[Step], bool]:
    """The structures above `line` that hold a thing at column `t` (outermost first).

    `kind` is what that thing is ("item" or "key"). Returns the steps and whether the scan reached the
    floor (so the floor's own steps come first).
    """
    out: list[Step] = []  # innermost first while scanning
    count = 0  # earlier items at the current level
    pending: Step | None = None  # the item at the current level whose index is being counted
    floor_line = floor.line if floor is not None else -1
    seq_floor = floor is not None and isinstance(floor.node, Sequence)
    i = line - 1
    pad = " " * (t + 1)  # a line starting with this is deeper than the level
    same = pad[:-1]  # with this, and then not a space: at the level

    def settle() -> None:
        nonlocal pending
        if pending is not None:
            pending.label = count
            pending = None

    if kind == "key" and floor is not None and isinstance(floor.node, (Sequence, Mapping)) and t == floor.col:
        # A bare word at the column of the tree's list, or a key at the column of the tree's mapping:
        # nothing between it and the floor holds it (a key there would end the list; the mapping's other
        # keys, their deeper lines and indentless lists are what the scan would skip, 390,000 lines of
        # them at 0.7 s), so the answer is the floor, without reading the lines.
        return [], True
    if kind == "item":
        pending = Step("item", 0, t, line)
        out.append(pending)
        if seq_floor and t == floor.col:  # type: ignore[union-attr]
            # a broken item keeps its place in the tree
            pending.label = bisect_left(floor.node.items, line, key=_node_line)  # type: ignore[union-attr]
            return [pending], True
    while i >= stop:
        s = lines[i]
        if s.startswith(pad) or not s:
            i -= 1
            continue
        # Fast path for a line at the same level (a long list's items): no need to read it whole.
        if len(s) > t and s[t] not in " #\r" and s.startswith(same) and i != floor_line \
                and not (t == 0 and s.startswith("---")):
            dash = s[t] == "-" and (len(s) == t + 1 or s[t + 1] in " \t\r")
            if kind == "key" or dash:
                if dash and kind == "item":
                    count += 1
                i -= 1
                continue
        sh = shape(s)
        if sh.blank:
            i -= 1
            continue
        if sh.doc_marker:
            break
        ind = sh.first_col
        if ind > t:
            i -= 1
            continue
        elems: list[tuple[int, str, LineShape]] = [(d, "item", sh) for d in sh.dashes]
        if sh.key is not None:
            elems.append((sh.key_col, "key", sh))
        elif sh.content_col < len(s.rstrip()):
            elems.append((sh.content_col, "scalar", sh))
        if ind == t:
            e_col, e_kind, _ = elems[0]
            if kind == "item" and e_kind == "key" and sh.opens_block and len(elems) == 1:
                settle()  # an indentless list under this key
                out.append(Step("key", sh.key, sh.key_col, i, sh.value_kind))  # type: ignore[arg-type]
                kind = "key"
            elif kind == "item" and e_kind == "item":
                count += 1
            if i == floor_line:
                break
            i -= 1
            continue
        # ind < t: the structures left of column t hold the thing at t.
        holders = [e for e in elems if e[0] < t]
        if not holders:  # nothing on this line holds the column (no key, item or scalar): read on
            i -= 1
            continue
        at_t = next((e for e in elems if e[0] == t), None)
        if kind == "item" and at_t is not None and at_t[1] == "item":
            count += 1
        settle()
        if kind == "item" and at_t is not None and at_t[1] == "key" and sh.opens_block:
            out.append(Step("key", sh.key, sh.key_col, i, sh.value_kind))  # type: ignore[arg-type]
        for e_col, e_kind, e_sh in reversed(holders):
            if e_kind == "key":
                out.append(Step("key", e_sh.key, e_col, i, e_sh.value_kind))  # type: ignore[arg-type]
            elif e_kind == "scalar":
                out.append(Step("scalar", "", e_col, i))
            else:
                out.append(Step("item", 0, e_col, i))
        outer_col, outer_kind, _ = holders[0]
        t, kind, count = outer_col, ("item" if outer_kind == "item" else "key"), 0
        pad = " " * (t + 1)
        same = pad[:-1]
        pending = out[-1] if outer_kind == "item" else None
        if i == floor_line:
            break
        if pending is not None and seq_floor and t == floor.col:  # type: ignore[union-attr]
            pending.label = bisect_left(floor.node.items, i, key=_node_line)  # type: ignore[union-attr]
            pending = None
            out.reverse()
            return _drop_floor(out, floor), True
        i -= 1
    reached = floor is not None and i <= floor_line
    settle()
    out.reverse()
    if reached:
        return _drop_floor(out, floor), True
    return out, False


def _drop_floor(steps: list[Step], floor: _Floor | None) -> list[Step]:
    """Steps the floor's tree path already holds: those left of the floor's column."""
    if floor is None:
        return steps
    return [s for s in steps if s.col >= floor.col]


# --- the mapping around the cursor --------------------------------------------------------------------

def mapping_keys(lines: list[str], start: int, col: int, stop: int, skip_line: int = -1) -> dict[str, str]:
    """The keys (with their inline values) of the block mapping whose keys sit at `col`, from `start`."""
    out: dict[str, str] = {}
    pad = " " * (col + 1)
    for i in range(start, stop):
        s = lines[i]
        if not s or s.startswith(pad):
            continue
        sh = shape(s)
        if sh.blank:
            continue
        if sh.doc_marker:
            if i > start:
                break
            continue
        if sh.first_col < col and i != start:
            break  # the mapping ended (a new item, or a key further out)
        if sh.key is not None and sh.key_col == col and i != skip_line:
            out.setdefault(sh.key, sh.value)
        # At `col` without a key: an indentless list of the previous key, or a word being typed.
    return out


def _node_keys(node: Node | None, analysis: Any = None) -> dict[str, str]:
    """The keys of a located mapping, with their scalar values. A large mapping's are listed once per
    `analysis` (computed once, however many requests ask at the same time) and copied: 390,000 keys took
    1 s a request to list."""
    if not isinstance(node, Mapping):
        return {}
    if analysis is None or len(node.pairs) <= _KEEP_KEYS_OVER:
        return _listed_keys(node)
    # The memo holds the node too: the id in its key stays this node's.
    kept, keys = analysis.memoised(f"ide.keys.node.{id(node)}", lambda _: (node, _listed_keys(node)))
    return dict(keys) if kept is node else _listed_keys(node)


def _listed_keys(node: Mapping) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in node.pairs:
        if isinstance(k, Scalar):
            out.setdefault(str(k.value), v.raw if isinstance(v, Scalar) else "")
    return out


_KEEP_KEYS_OVER = 1000


# --- putting it together ------------------------------------------------------------------------------

def cursor_context(analysis: Any, line: int, col: int) -> CursorContext:
    """Where (line, col) is in `analysis` (0-based; col in code points)."""
    lines: list[str] = analysis.parsed.lines or [""]
    kind: FileKind = analysis.kind
    lay = layout(analysis)
    line = max(0, min(line, len(lines) - 1))
    text = lines[line].rstrip("\r")
    col = max(0, min(col, len(text)))
    doc = lay.document_of(line)
    doc_start, doc_end = lay.doc_range(doc, len(lines))
    tree_doc = lay.tree_docs.get(doc)
    here = _here(text, col, (tree_doc.root if tree_doc is not None else None, line))
    floor = _tree_floor(tree_doc.root if tree_doc is not None else None, line, here.t)
    stop = max(doc_start, floor.line) if floor is not None else doc_start
    above, reached = _scan_up(lines, line, here.t, here.first_kind, stop, floor)
    steps: list[Step] = (floor.steps if floor is not None and reached else []) + above
    if here.first_kind == "item" and here.steps and above and above[-1].line == line:
        # The scan indexed the line's outermost item; the line's own steps carry on from it.
        here.steps[0].label = above[-1].label
        steps = steps[:-1]
    for s in here.steps:
        s.line = line
    steps += here.steps
    position = here.position
    if any(s.kind == "scalar" or (s.kind == "key" and s.line < line and s.node is None and s.value_kind != "block")
           for s in steps):
        position = NONE  # inside multi-line text: a block scalar, a quoted or plain scalar going on
    all_steps = steps
    section, root_slot, norm_prefix, steps = _root(analysis, lay, doc, steps, line, lines, doc_start, doc_end)
    ctx = CursorContext(kind, doc, section, [], position, sc.UNKNOWN, None, None, here.prefix,
                        Span(line, here.start, line, here.end), has_colon=here.has_colon, quote=here.quote,
                        needs_space=here.needs_space)
    if here.key_span:
        ctx.key_span = Span(line, here.key_span[0], line, here.key_span[1])
    if here.value_span:
        ctx.value_span = Span(line, here.value_span[0], line, here.value_span[1])
    if len(all_steps) > MAX_DEPTH:
        # Deeper than the parser reads (`yaml-too-deep`: the document is not checked), so nothing to
        # complete or explain; and each step's keys cost a scan of the lines below it (2,000 levels of
        # composites: 0.6 s a cursor, found by bench/fuzz.py).
        ctx.position = NONE
        return ctx
    fmt = "weval" if kind is FileKind.WEVAL else "agentv"
    slot = root_slot
    owner: sc.Slot | None = None
    for idx, s in enumerate(steps):
        owner = slot
        slot = sc.child(fmt, slot, s.label, _keys_getter(lines, steps, idx, doc_start, doc_end, analysis))
    labels: list[str | int] = [s.label for s in steps]
    map_col, map_start = _mapping_place(all_steps, here, line, doc_start)
    if position == KEY and here.bare and slot.kind == sc.LIST:
        # A bare line under a list key: what is typed is a new item, written with a leading "- ".
        ctx.needs_dash = True
        listed = all_steps[-1].node if all_steps and isinstance(all_steps[-1].node, Sequence) else None
        root = tree_doc.root if tree_doc is not None else None
        labels.append(_items_before(listed or root, lines, map_start, line, here.t))
        owner, slot = slot, slot.item or sc.UNKNOWN
        map_col = here.t + 2
    if position == KEY and not here.has_colon and owner is not None and owner.value == sc.V_TESTS \
            and steps and steps[-1].kind == "item" and _file_ref_typed(here):
        position, slot = VALUE, sc.TESTS_ITEM  # `- file://…` in a tests list
    if position == KEY and slot.kind in (sc.SCALAR, sc.MODEL, sc.ANY) and not here.has_colon \
            and (here.first_kind == "item" or slot.kind == sc.SCALAR or ctx.needs_dash):
        position = VALUE  # `- op|` in a list of scalars, or text under a scalar key
    ctx.position = position
    ctx.slot = slot
    ctx.path = [*norm_prefix, *labels]
    ctx.in_list_item = ctx.needs_dash or (bool(all_steps) and all_steps[-1].kind == "item")
    ctx.indent = map_col
    ctx.in_flow = here.flow_keys is not None
    if position == KEY:
        if here.flow_keys is not None:
            present: dict[str, str] = dict(here.flow_keys)
        elif ctx.needs_dash:
            present = {}
        else:
            node = _mapping_node(all_steps, tree_doc, here, map_col, line)
            if node is not None:
                present = _node_keys(node, analysis)
                if here.shape is not None and here.shape.key is not None:
                    present.pop(here.shape.key, None)
            else:
                present = mapping_keys(lines, map_start, map_col, doc_end,
                                       skip_line=line if here.has_colon or here.bare else -1)
        ctx.present = present
        ctx.spec = _object_spec(slot, present)
        if here.shape is not None and here.shape.key is not None and ctx.spec is not None:
            hit = ctx.spec.lookup(here.shape.key)
            ctx.field = hit[0] if hit else None
    elif position == VALUE:
        ctx.field = slot.field
        last = steps[-1] if steps else None
        ctx.key = str(last.label) if last is not None and last.kind == "key" else None
        if owner is not None and ctx.key is not None:
            ctx.present = _owner_keys(lines, steps, line, doc_end, here, analysis)
            ctx.owner_spec = _object_spec(owner, ctx.present)
            ctx.spec = ctx.owner_spec
    return ctx


def _file_ref_typed(here: _Here) -> bool:
    typed = here.prefix
    return bool(typed) and (typed.startswith("file:") or "file://".startswith(typed) or here.quote is not None)


def _mapping_node(steps: list[Step], tree_doc: Any, here: _Here, map_col: int, line: int) -> Mapping | None:
    """The located mapping the cursor's keys go into, when the tree has it (a valid document)."""
    if here.steps:
        return None  # the cursor's line starts a new item: its mapping is not in the tree
    if steps:
        node = steps[-1].node
    else:
        node = tree_doc.root if tree_doc is not None else None
    if isinstance(node, Mapping) and not node.flow and node.span.start_col == map_col \
            and node.span.start_line <= line:
        return node
    return None


def _items_before(node: Node | None, lines: list[str], start: int, line: int, col: int) -> int:
    """How many items of the list at `col` come before `line`: from the tree when it has the list (the
    value of the key above, or the document's root list), else by reading the lines (a 500,000-item
    list under `should:` took 0.5 s a request)."""
    if isinstance(node, Sequence) and not node.flow and node.span.start_col == col and node.span.start_line >= start:
        return bisect_left(node.items, line, key=_node_line)
    return _count_items(lines, start, line, col)


def _count_items(lines: list[str], start: int, line: int, col: int) -> int:
    n = 0
    dash = " " * col + "-"
    after = col + 1
    for i in range(start, line):
        s = lines[i]
        # Only a line with a dash at `col` can be an item here; reading every line whole (`shape`)
        # made completion at the end of a 50,000-line list cost 0.7 s. A dash followed by a blank or
        # the end is an item (`shape`'s own test; `---` at column 0 is not one).
        if s.startswith(dash):
            rest = s[after:after + 1]
            if rest in ("", " ", "\t") or (rest == "\r" and not s[after:].rstrip("\r")):
                n += 1
    return n


def _keys_getter(lines: list[str], steps: list[Step], idx: int, doc_start: int, stop: int,
                 analysis: Any) -> sc.KeysOf:
    """Keys a slot may need to tell objects apart (an assertion's `type`), read only when asked: for an
    item, the keys of the item's mapping; for a key, the keys of the mapping it is in."""
    s = steps[idx]

    def keys() -> dict[str, str]:
        if s.kind == "item":
            if isinstance(s.node, Mapping):
                return _node_keys(s.node, analysis)
            if s.line < 0:
                return {}
            return mapping_keys(lines, s.line, _item_content_col(shape(lines[s.line]), s.col), stop)
        prev = steps[idx - 1] if idx > 0 else None
        if prev is not None and isinstance(prev.node, Mapping):
            return _node_keys(prev.node, analysis)
        if s.line < 0 or s.col < 0:
            return {}
        start = doc_start if prev is None or prev.line < 0 else prev.line + (1 if prev.kind == "key" else 0)
        return mapping_keys(lines, start, s.col, stop)
    return keys


def _item_content_col(sh: LineShape, dash_col: int) -> int:
    """Where the content of the item at `dash_col` starts (the next `- ` on the line, or the content)."""
    if dash_col not in sh.dashes:
        return sh.content_col
    i = sh.dashes.index(dash_col)
    return sh.dashes[i + 1] if i + 1 < len(sh.dashes) else sh.content_col


def _mapping_place(steps: list[Step], here: _Here, line: int, doc_start: int) -> tuple[int, int]:
    """Column of the keys of the cursor's mapping, and the line it starts on."""
    sh = here.shape
    if here.first_kind == "item" and sh is not None and here.steps:
        return sh.content_col, line
    col = sh.key_col if sh is not None and sh.key is not None and not here.bare else here.t
    parent = next((s for s in reversed(steps) if s.line < line and s.kind in ("key", "item")), None)
    if parent is None:
        return col, doc_start
    return col, parent.line + (1 if parent.kind == "key" else 0)


def _owner_keys(lines: list[str], steps: list[Step], line: int, stop: int, here: _Here,
                analysis: Any) -> dict[str, str]:
    """In VALUE position: the keys of the mapping that holds the key (for an assertion's `type`); those
    of a mapping over 1,000 lines are kept for the analysis (390,000 keys took 1 s a request to read)."""
    sh = here.shape
    if sh is None or sh.key is None or not steps or steps[-1].kind != "key":
        return {}
    col = sh.key_col
    start = line
    for s in reversed(steps[:-1]):
        if s.line < line:
            start = s.line + (1 if s.kind == "key" else 0)
            break
    else:
        start = 0
    if stop - start <= _KEEP_KEYS_OVER:
        return mapping_keys(lines, start, col, stop)
    keys: dict[str, str] = analysis.memoised(f"ide.keys.lines.{start}.{col}.{stop}",
                                             lambda _: mapping_keys(lines, start, col, stop))
    return dict(keys)


def _object_spec(slot: sc.Slot, present: dict[str, str]) -> ObjectSpec | None:
    if slot.kind == sc.ASSERTION:
        t = present.get("type")
        return sc.assertion_slot(_plain(t)).spec if t else slot.spec
    if slot.kind == sc.POINT:
        if any(k.startswith("$") for k in present):
            return sc.W_POINT_FN_SPEC
        return slot.spec
    if slot.kind in (sc.OBJECT, sc.MESSAGE, sc.MODEL):
        return slot.spec
    return None


def _plain(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def _root(analysis: Any, lay: Layout, doc: int, steps: list[Step], line: int, lines: list[str], doc_start: int,
          doc_end: int) -> tuple[str | None, sc.Slot, list[str | int], list[Step]]:
    """The section of the document, the slot of its root, and the normalized path prefix."""
    kind = analysis.kind
    if kind is FileKind.AGENTV:
        return "suite", sc.agentv_root(), [], steps
    if kind is FileKind.AGENTV_TARGETS:
        from ..registry.agentv import REGISTRY

        return "targets", sc.Slot(sc.OBJECT, REGISTRY["targets_file"]), [], steps
    if kind is not FileKind.WEVAL:
        return None, sc.UNKNOWN, [], steps
    if lay.header_doc == doc:
        if lay.header_has_prompts and steps and steps[0].label == "prompts":
            if len(steps) > 1:
                index = _prompt_index(lay, steps[1], line, doc)
                return "prompt", sc.weval_root("prompt"), ["<prompts>", index], steps[2:]
            return "prompt", sc.weval_prompt_list(), ["<prompts>"], steps[1:]
        return "header", sc.weval_root("header"), ["<header>"], steps
    # A prompt document: a list of prompts, or one prompt (a stream of prompt documents).
    if steps and steps[0].kind == "item":
        index = _prompt_index(lay, steps[0], line, doc)
        return "prompt", sc.weval_root("prompt"), ["<prompts>", index], steps[1:]
    if not steps and _doc_is_list(lay, doc, lines, doc_start, doc_end):
        return "prompt", sc.weval_prompt_list(), ["<prompts>"], steps
    index = _prompt_index(lay, None, line, doc)
    return "prompt", sc.weval_root("prompt"), ["<prompts>", index], steps


def _doc_is_list(lay: Layout, doc: int, lines: list[str], start: int, end: int) -> bool:
    tree = lay.tree_docs.get(doc)
    if tree is not None and tree.root is not None:
        return isinstance(tree.root, Sequence)
    for i in range(start, end):
        sh = shape(lines[i])
        if sh.blank or sh.doc_marker:
            continue
        return bool(sh.dashes) and sh.dashes[0] == 0
    return True


def _prompt_index(lay: Layout, item: Step | None, line: int, doc: int) -> int:
    """The index of a prompt among all the blueprint's prompts: those of earlier documents, then its
    place in its own list. (A document that does not parse has no prompts in the tree; its prompts
    are then not counted for later documents.)"""
    before = bisect_left(lay.prompt_starts, lay.doc_starts[doc])
    local = item.label if item is not None and isinstance(item.label, int) else 0
    return before + local
