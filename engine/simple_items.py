"""A block list's items (`simple_items`) or a header mapping (`simple_mapping`) in the plain subset of YAML
most blueprints are written in, read without libyaml: the same nodes, spans and values as source.py's
composer gives from libyaml's events, or None.

A line of that subset is `- ` dashes, then `key:` (a word) with or without a value, or a value alone; a value
is a one-line plain scalar (no `: `, `#`, or indicator first), a one-line quoted scalar with no escape, a
flow list of plain words (`[3, 60]`), or a one-line flow mapping of `key: value` pairs, each value such a word
or quoted scalar (`{type: contains, value: "0"}`, an AgentV suite's assertions). Each line lines up with an open collection (a block mapping's keys, a
block list's dashes) or opens one under a key with no value. Anything else — a comment, a tab, an anchor, a
tag, a block scalar, a multi-line scalar, a key with no value after all, a list at its key's column, a key
longer than libyaml's simple keys, a character YAML refuses — gives None, and the text is parsed by libyaml
as before: what is read here is read exactly as libyaml reads it (tests/test_simple_items.py compares both on
every corpus file and on mutations of them). libyaml's events reach Python as an event object and two marks
each: a blueprint's prompt, ~20 events, is read here in about two thirds of the time, and a clean blueprint
without loading PyYAML.
"""

from __future__ import annotations

import re
from typing import Any

from .findings import Span
from .yaml_nodes import _MAYBE_NOT_STR, Mapping, Node, Scalar, Sequence, resolve_plain

# One line: its indentation, dashes, a key, a value (a key with none, or a value alone, are told apart after).
_WORD = r"[\w.$+][\w.$+-]*"
# A flow mapping's pair: a key as a block mapping's, `: `, a flow list's word or a quoted scalar as above
_PAIR = rf"""[A-Za-z_$][\w$.-]*:\ +(?:{_WORD}|"[^"\\]*"|'[^']*')"""
_LINE = re.compile(
    r"""(?P<ind>\ *)(?P<dashes>(?:-\ +)*)(?:(?P<key>[A-Za-z_$][\w$.-]*):(?:\ +(?=[^\ ])|\Z))?"""
    rf"""(?:(?P<dq>"[^"\\]*")|(?P<sq>'[^']*')|(?P<flow>\[\ *(?:{_WORD}(?:\ *,\ *{_WORD})*)?\ *\])"""
    rf"""|(?P<fmap>\{{\ *(?:{_PAIR}(?:\ *,\ *{_PAIR})*)?\ *\}})"""
    r"""|(?P<plain>[^\s\-?:,\[\]{}#&*!|>'"%@`](?:[^\s:#]|:(?=[^\s#])|\ +(?=[^\s:#]))*))?\Z""")
_FLOW_ITEM = re.compile(_WORD)
# One pair of a flow mapping `_LINE` read, the `{` or `,` before it, each part a group (their lengths are
# its columns): the `{` or `,` and spaces, the key, `:` and spaces, a word or a quoted text, spaces
_FLOW_PAIRS = re.compile(rf"""([{{,]\ *)([A-Za-z_$][\w$.-]*)(:\ +)(?:({_WORD})|"([^"\\]*)"|'([^']*)')(\ *)""")
# What YAML refuses in a text, the line breaks only YAML knows (source.py parses texts with those in one
# stream), tabs and a byte order mark: a chunk with one of these is libyaml's to read.
_REFUSED = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_ONE_DASH = (" ",)  # what follows the one dash of most lines, as `dashes.split("-")[1:]` gives it
_MAX_KEY = 1000  # libyaml's simple keys end at 1,024 characters
_MAX_DEPTH = 64

# A line's groups by its text, and a flow list's words or a flow mapping's pairs (`_flow_pairs`) by theirs, as
# last read: a big file's items repeat most of their lines (`  should:`, `    - $word_count_between: [3, 60]`,
# `      - {type: latency, max_ms: 60000}`), and a look-up costs a twentieth of a match. Only immutable values
# are kept (groups, columns, texts, resolved scalars), of texts up to _KEPT_LENGTH characters (the lines that
# repeat are short; a long prompt's is not kept alive in an editor's worker); each memo is emptied when full,
# so it stays bounded (a few MB at most) and follows the file being read.
_READ_LINES: dict[str, tuple[Any, ...]] = {}
_READ_FLOWS: dict[str, list[tuple[Any, ...]]] = {}
_KEPT_LINES = 4096
_KEPT_LENGTH = 160

_new_object = object.__new__
_new_tuple = tuple.__new__
_MAPPING, _SEQUENCE = 0, 1


def simple_items(text: str, first_line: int) -> list[Node] | None:
    """The items of the block list that `text` (lines from `first_line` on) is, its first line its first
    item's (or a bare `---` before it: a list document's first part), or None when a line is not of the
    subset this module reads."""
    if text.startswith("---\n"):
        text, first_line = text[4:], first_line + 1
    column = len(text) - len(text.lstrip(" "))  # the list's: its first item's dash (an AgentV suite's is indented)
    if text[column:column + 2] != "- ":
        return None
    items = _read(text, first_line, [_SEQUENCE, column, [], first_line, column, 0, 0])
    # (a text with a character libyaml treats otherwise is not read here, looked for once the lines were
    # read: most texts that are not of the subset stop at a line well before their end)
    return items if items is not None and _REFUSED.search(text) is None else None


def simple_mapping(text: str, first_line: int) -> Mapping | None:
    """The block mapping at column 0 that `text` (lines from `first_line` on: a document without a `---`
    marker, a blueprint's header) is, its first line its first key's, or None as for `simple_items`."""
    if not text[:1].isalpha():
        return None
    pairs = _read(text, first_line, [_MAPPING, 0, [], first_line, 0, 0, 0], closed=True)
    return pairs[0] if pairs and _REFUSED.search(text) is None else None  # type: ignore[return-value]


def _read(text: str, first_line: int, root: list[Any], closed: bool = False) -> list[Node] | None:
    """The children of `root` (an open collection, as on the stack below) read from `text`'s lines; `closed`:
    `root` itself, closed, alone in a list."""
    # The open collections, outermost first: [kind, column, children (a mapping's keys and values in turn),
    # start line, start column, the last child's end line, its end column]
    stack = [root]
    top = root
    waiting = False  # the innermost mapping's last key has no value yet: the next line holds it
    line_no = first_line - 1
    match, new_object, new_tuple, span_type, resolve = _LINE.match, _new_object, _new_tuple, Span, resolve_plain
    read_lines, read_flows = _READ_LINES, _READ_FLOWS
    maybe_not_str, scalar_type = _MAYBE_NOT_STR, Scalar
    for line in text.split("\n"):
        line_no += 1
        if not line:
            continue
        groups = read_lines.get(line)
        if groups is None:
            m = match(line)
            if m is None:
                return None
            groups = _kept(read_lines, line, m.groups())
        ind, dashes, key, dq, sq, flow, fmap, plain = groups
        column = len(ind)
        # where the line's first dash (or its key or value) sits: it closes what is deeper
        while top[1] > column:
            if top is root or not _close(stack):
                return None
            top = stack[-1]
        if waiting:
            # a key's value on the lines below: a list or mapping deeper than the mapping's keys
            if top[1] == column or top[0] != _MAPPING:
                return None  # a null value (or a list at its key's column: libyaml's, not ours)
            waiting = False
            opened = True
        elif top[1] != column:
            return None  # deeper than any open collection: a continuation or an error
        else:
            opened = False
        at = column
        if dashes:
            for dash in _ONE_DASH if dashes == "- " else dashes.split("-")[1:]:
                # a dash at `at`: an entry of the list at that column, or a new list
                if opened:
                    if len(stack) >= _MAX_DEPTH:
                        return None
                    top = [_SEQUENCE, at, [], line_no, at, 0, 0]
                    stack.append(top)
                elif top[0] != _SEQUENCE:
                    return None
                opened = True  # what follows the dash opens the entry's value
                at += 1 + len(dash)
        if key is not None:
            if len(key) > _MAX_KEY:
                return None
            if opened:
                if len(stack) >= _MAX_DEPTH:
                    return None
                top = [_MAPPING, at, [], line_no, at, 0, 0]
                stack.append(top)
            elif top[0] != _MAPPING:
                return None
            node: Any = new_object(scalar_type)
            end = at + len(key)
            node.span = new_tuple(span_type, (line_no, at, line_no, end))
            node.value = resolve(key) if key[0] in maybe_not_str else key
            node.raw, node.style, node.tag, node.anchor = key, None, None, None
            top[2].append(node)
            if plain is None and dq is None and sq is None and flow is None and fmap is None:
                waiting = True
                top[5], top[6] = line_no, end
                continue
        elif not opened or (plain is None and dq is None and sq is None and flow is None and fmap is None):
            return None  # a value alone, not after a dash; or nothing after the dashes
        end = len(line)
        node = new_object(scalar_type)
        if plain is not None:
            start = end - len(plain)
            node.value = resolve(plain) if plain[0] in maybe_not_str else plain
            node.raw, node.style = plain, None
        elif dq is not None:
            start = end - len(dq)
            node.value = node.raw = dq[1:-1]
            node.style = '"'
        elif sq is not None:
            start = end - len(sq)
            node.value = node.raw = sq[1:-1]
            node.style = "'"
        elif fmap is not None:
            start = end - len(fmap)
            node = new_object(Mapping)
            node.pairs = _flow_pairs(fmap, line_no, start)
            node.flow = True
        else:
            start = end - len(flow)
            words = read_flows.get(flow)
            if words is None:
                words = _kept(read_flows, flow, [
                    (w.start(), w.group(), resolve(w.group()) if w.group()[0] in maybe_not_str else w.group())
                    for w in _FLOW_ITEM.finditer(flow)])
            items = []
            for col, word, value in words:
                col += start
                item = new_object(scalar_type)
                item.span = new_tuple(span_type, (line_no, col, line_no, col + len(word)))
                item.value, item.raw, item.style, item.tag, item.anchor = value, word, None, None, None
                items.append(item)
            node = new_object(Sequence)
            node.items, node.flow = items, True
        node.span = new_tuple(span_type, (line_no, start, line_no, end))
        node.tag = node.anchor = None
        top[2].append(node)
        top[5], top[6] = line_no, end
    if waiting:
        return None
    while len(stack) > 1:
        if not _close(stack):
            return None
    if closed:
        stack.insert(0, [_SEQUENCE, 0, [], 0, 0, 0, 0])  # a parent for the root to close into
        return stack[0][2] if _close(stack) else None
    return root[2]


def _kept(memo: dict[str, Any], text: str, read: Any) -> Any:
    """`read`, kept in `memo` under `text` when the text is short (emptied first when full)."""
    if len(text) <= _KEPT_LENGTH:
        if len(memo) >= _KEPT_LINES:
            memo.clear()
        memo[text] = read
    return read


def _flow_pairs(fmap: str, line_no: int, start: int) -> list[tuple[Node, Node]]:
    """The pairs of a one-line flow mapping `fmap` (as `_LINE` matched it) that starts at `start`."""
    read = _READ_FLOWS.get(fmap)
    if read is None:
        read = _kept(_READ_FLOWS, fmap, _pairs_read(fmap))
    pairs: list[tuple[Node, Node]] = []
    new_object, new_tuple, scalar_type, span_type = _new_object, _new_tuple, Scalar, Span
    # (one attribute a statement: a tuple assigned to five cost more, per scalar of every test's assertions)
    for k_start, k_end, key, k_value, v_start, v_end, raw, value, style in read:
        k: Any = new_object(scalar_type)
        k.span = new_tuple(span_type, (line_no, start + k_start, line_no, start + k_end))
        k.value = k_value
        k.raw = key
        k.style = None
        k.tag = None
        k.anchor = None
        v: Any = new_object(scalar_type)
        v.span = new_tuple(span_type, (line_no, start + v_start, line_no, start + v_end))
        v.value = value
        v.raw = raw
        v.style = style
        v.tag = None
        v.anchor = None
        pairs.append((k, v))
    return pairs


def _pairs_read(fmap: str) -> list[tuple[Any, ...]]:
    """Each pair of `fmap` as (key column, key end, key, its value, value column, value end, raw text, value,
    style), the columns from the mapping's `{`. `_LINE` matched `fmap`: its pairs follow one another, each
    where the last ended (`findall` finds them all, and nothing else); their columns are summed lengths."""
    out: list[tuple[Any, ...]] = []
    at, maybe_not_str, resolve = 0, _MAYBE_NOT_STR, resolve_plain
    for before, key, colon, word, dq, sq, after in _FLOW_PAIRS.findall(fmap):
        k_start = at + len(before)
        k_end = k_start + len(key)
        v_start = k_end + len(colon)
        k_value = resolve(key) if key[0] in maybe_not_str else key
        if word:
            v_end = v_start + len(word)
            out.append((k_start, k_end, key, k_value, v_start, v_end, word,
                        resolve(word) if word[0] in maybe_not_str else word, None))
        else:  # a quoted scalar's span holds its quotes (findall gives '' for the group that did not take part)
            style = fmap[v_start]
            text = dq if style == '"' else sq
            v_end = v_start + len(text) + 2
            out.append((k_start, k_end, key, k_value, v_start, v_end, text, text, style))
        at = v_end + len(after)
    return out


def _close(stack: list[list[Any]]) -> bool:
    """Close the innermost open collection: its node joins its parent's children."""
    kind, _, children, sl, sc, el, ec = stack.pop()
    if not children:
        return False
    node: Any
    if kind == _SEQUENCE:
        node = _new_object(Sequence)
        node.items = children
    else:
        if len(children) % 2:
            return False
        node = _new_object(Mapping)
        node.pairs = list(zip(children[0::2], children[1::2], strict=True))
    node.span = _new_tuple(Span, (sl, sc, el, ec))
    node.flow, node.tag, node.anchor = False, None, None
    parent = stack[-1]
    parent[2].append(node)
    parent[5], parent[6] = el, ec
    return True
