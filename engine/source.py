"""Located YAML: parse text into nodes that keep their source spans.

Why our own composer: libyaml (through PyYAML's C parser) is the fastest parser on PyPI that keeps
positions (see bench/parsers.py), but its composer recurses in C and crashes on deeply nested input,
and a plain load expands aliases. We read libyaml's event stream, which is iterative, and build the
tree with an explicit stack, so nesting depth, alias expansion and size are all bounded and reported
as findings instead of hangs or crashes. Scalars resolve with the YAML 1.2 core schema, as the
reference tools do (`yes` stays a string). Nothing in a file is ever executed: tags are not
constructed, only recorded. A list item or header of the plain subset most files are written in is read
without libyaml (simple_items.py, the same nodes); the nodes and the core schema are yaml_nodes.py's.
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import accumulate, islice, pairwise
from typing import Any, NamedTuple, TypeGuard, cast

from .findings import Edit, Finding, Findings, Fix, Related, Span
from .item_bounds import DROPPED, ItemBounds
from .simple_items import simple_items, simple_mapping
from .text_lines import Lines
from .yaml_feed import all_tab_lines_blank, fed_text, unswapped
from .yaml_nodes import _MAYBE_NOT_STR
from .yaml_nodes import BrokenItem as BrokenItem
from .yaml_nodes import Mapping as Mapping
from .yaml_nodes import Node as Node
from .yaml_nodes import Scalar as Scalar
from .yaml_nodes import Sequence as Sequence
from .yaml_nodes import resolve_plain as resolve_plain

# PyYAML (~12 ms to import) loads at the first text simple_items.py does not read: `_Parser` is made then
# (_load_parser; module attribute access makes it too, as tests that wrap it read it).
_OFFSETS_IN_BYTES = True  # libyaml reads the text as UTF-8: a reader error's position counts bytes


def _load_parser() -> Any:
    global _OFFSETS_IN_BYTES
    try:  # libyaml; the pure-Python parser is the same API, only slower
        from yaml.cyaml import CParser  # type: ignore[attr-defined]  # the stubs do not re-export it
        parser: Any = CParser
    except ImportError:  # pragma: no cover - wheels ship libyaml on every platform we support
        from yaml.parser import Parser as _PyParser
        from yaml.reader import Reader
        from yaml.scanner import Scanner

        _OFFSETS_IN_BYTES = False

        class _PyParsed(Reader, Scanner, _PyParser):
            def __init__(self, stream: str) -> None:
                Reader.__init__(self, stream)
                Scanner.__init__(self)
                _PyParser.__init__(self)

        parser = _PyParsed
    globals()["_Parser"] = parser
    return parser


def __getattr__(name: str) -> Any:
    if name == "_Parser":
        return _load_parser()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MAX_BYTES = 4 * 1024 * 1024  # an editor buffer: what the language server analyses on every keystroke
# What `evalspec check` and `run` read (analysis.analyze_file): a generated 100,000-prompt blueprint is
# 16 MB. The parse is bounded by nodes too (MAX_DEPTH, MAX_EXPANDED_NODES per document), so memory
# grows with the file's nodes and no further: about 55 bytes of memory per byte of a typical blueprint.
MAX_FILE_BYTES = 32 * 1024 * 1024
# From this size (characters) a streamed parse keeps the text's lines as offsets, not strings (text_lines.py):
# each read then costs a slice, which a 2,000-prompt blueprint (~0.3 MB) is spared.
LINES_AS_OFFSETS_FROM = 1 << 20
MAX_DEPTH = 200
MAX_EXPANDED_NODES = 1_000_000  # what a document's aliases may stand for, expanded


# libyaml scans a scalar in one C call holding the interpreter lock (0.04 s of CPU for a 4 MB line, many
# times that in wall time on a loaded machine, during which the language server answered nothing). Fed
# from a reader instead of a string, it asks for more text every 16 KB, and each ask is a yield point.
READ_IN_CHUNKS_FROM = 256 * 1024
_CHUNK = 64 * 1024  # characters handed to libyaml per read


class _Chunks:
    """`text` as a stream libyaml reads in pieces (the same events and marks as from the string)."""

    __slots__ = ("at", "name", "text")

    def __init__(self, text: str) -> None:
        self.text, self.at, self.name = text, 0, "<unicode string>"

    def read(self, size: int = -1) -> str:
        start = self.at
        self.at = len(self.text) if size < 0 else start + max(size, _CHUNK)
        return self.text[start:self.at]


@dataclass
class Document:
    """One YAML document: its root (None for an empty document) and where it starts."""

    root: Node | None
    span: Span
    index: int


@dataclass
class ParsedFile:
    text: str
    documents: list[Document] = field(default_factory=list)
    findings: Findings = field(default_factory=Findings)
    lines: list[str] = field(default_factory=list)
    # id(item node) -> the text of its list item, for items parsed through an editor's ChunkCache: what
    # the Weval checker's PromptCache keys checked prompts by.
    item_texts: dict[int, str] = field(default_factory=dict)
    # Parsed for one pass (`parse_yaml(streamed=True)`): column-0 list items are parsed as they are read
    # (`LazyItems`) and a checker keeps none of them.
    streamed: bool = False
    too_large: bool = False  # past the size limit: not parsed, and no editor feature looks at it

    @property
    def ok(self) -> bool:
        return not any(f.code.startswith("yaml") for f in self.findings)


_TAG_PREFIX = "tag:yaml.org,2002:"


def _block_at_eof(raw: str, lines: list[str], line: int, col: int) -> str:
    """A block scalar's value ending the file without a line break: its final break, unless `-` strips it."""
    header = lines[line][col:col + 4] if line < len(lines) else ""
    return raw if "-" in header[1:3] else raw + "\n"


def _resolve_tagged(text: str, tag: str) -> Any:
    """Explicit core tags (`!!str 1`, `!!int "2"`); any other tag keeps the text as a string."""
    short = tag[len(_TAG_PREFIX):] if tag.startswith(_TAG_PREFIX) else tag.lstrip("!")
    if short == "str":
        return text
    value = resolve_plain(text)
    if short == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if short == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if short == "bool" and isinstance(value, bool):
        return value
    if short == "null" and value is None:
        return None
    return text


# --- composer ---------------------------------------------------------------------------------------

class _TooDeep(Exception):
    def __init__(self, span: Span) -> None:
        self.span = span


class _TooLarge(Exception):
    def __init__(self, span: Span) -> None:
        self.span = span


def _span(sl: int, sc: int, el: int, ec: int, lines: list[str]) -> Span:
    # libyaml puts the end of block scalars at the start of the next line; pull it back to the end
    # of the last line with content so ranges hug their text.
    if ec == 0 and el > sl:
        el = min(el - 1, len(lines) - 1)
        while el > sl and not lines[el].strip():
            el -= 1
        ec = len(lines[el].rstrip("\r")) if el < len(lines) else 0
    span = Span(sl, sc, el, ec)
    return _clamped(span, lines) if el >= len(lines) else span


def _clamped(span: Span, lines: list[str]) -> Span:
    """`span` with both ends inside `lines` (libyaml puts what ends at the end of a text without a final
    newline on the line after it)."""
    last = len(lines) - 1

    def point(line: int, col: int) -> tuple[int, int]:
        return (line, col) if line <= last else (last, len(lines[last]))

    sl, sc = point(span.start_line, span.start_col)
    el, ec = point(span.end_line, span.end_col)
    return Span(sl, sc, el, ec)


def parse_yaml(text: str, cache: ChunkCache | None = None, *, max_bytes: int = MAX_BYTES,
               streamed: bool = False) -> ParsedFile:
    """Parse every document of `text`. Syntax errors become findings; the rest still parses.

    Documents whose root is a block list at column 0 (Weval's list of prompts) are parsed item by
    item: one broken prompt does not hide the others, and with a `cache` (the editor's) an edit
    re-parses only the items whose text changed. `streamed` (check and run of a file on disk): such a
    list's items are parsed only when they are read (`LazyItems`), so a reader that drops each item
    after use never holds the located tree of the whole list; an item's syntax findings join
    `findings` when it is first read.
    """
    size = utf8_size(text, max_bytes)
    if size > max_bytes:
        # Not looked at: its lines are one empty line, as for a file `check` does not read, and the editor
        # features have nothing (`too_large`). Finding the lines of 100 MB, reading its surrogates or
        # folding its million lines cost more than a second, for nothing to show.
        parsed = ParsedFile(text=text, lines=[""], streamed=streamed and cache is None, too_large=True)
        parsed.findings.error("file-too-large", Span(0, 0, 0, 0), too_large_message(size, max_bytes))
        return parsed
    surrogates = _SURROGATE.search(text) if not text.isascii() else None
    if surrogates is not None:
        # An editor can send lone UTF-16 surrogates ("\udca9" as a JSON escape); they are not Unicode and
        # libyaml refuses the whole text. Each becomes U+FFFD, one code point for one (and as many UTF-8
        # and UTF-16 units), so every position stays where it was.
        text = _SURROGATE.sub("\ufffd", text)
    streamed = streamed and cache is None
    # A streamed parse of a big file keeps its lines as offsets into the text (text_lines.py: 42 MB as
    # strings for a 100,000-prompt blueprint); LazyItems reads like the list it stands for, so does Lines.
    lines = cast(list[str], Lines(text)) if streamed and len(text) >= LINES_AS_OFFSETS_FROM else text.split("\n")
    parsed = ParsedFile(text=text, lines=lines, streamed=streamed)
    if surrogates is not None:
        line = text.count("\n", 0, surrogates.start())
        col = surrogates.start() - (text.rfind("\n", 0, surrogates.start()) + 1)
        parsed.findings.warning(
            "invalid-character", Span(line, col, line, col + 1),
            f"A lone surrogate (U+{ord(surrogates.group()):04X}) is not a character; it is read as U+FFFD. "
            "Save the file as UTF-8.")
    _parse_all(parsed, text, cache)
    return parsed


_SURROGATE = re.compile("[\ud800-\udfff]")
_ODD_BREAK = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


def too_large_message(size: int, limit: int) -> str:
    where = (f" in the editor (`evalspec check` and `run` read files up to {MAX_FILE_BYTES // 1_048_576} MB)"
             if limit < MAX_FILE_BYTES else "")
    return (f"File is {size / 1_048_576:.1f} MB; evalspec checks files up to {limit // 1_048_576} MB{where}. "
            "Split it into several blueprints or move tests into an external file.")


def utf8_size(text: str, limit: int = MAX_BYTES) -> int:
    """The size of `text` in UTF-8 bytes, as on disk: the limits are in bytes, and a character can be
    four (a file of 4.2 million emoji is 16.8 MB). Lone surrogates (an editor can send them) count three."""
    n = len(text)
    if n > limit or text.isascii():
        return n  # over the limit anyway, or one byte per character
    return len(text.encode("utf-8", "surrogatepass"))


_new_object = object.__new__
_new_tuple = tuple.__new__


class ChunkCache:
    """Parsed list items by their text, kept between edits of one document.

    An entry is reused when the same text comes back. Entries are never changed: an item that moved
    (lines were added or removed above it) is returned as a copy with shifted spans, so the analysis
    that first got those nodes keeps describing its own text. An item that did not move is shared
    as it is (nothing changes it).
    """

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, list[Node], list[Finding]]] = {}
        self.used: dict[str, tuple[int, list[Node], list[Finding]]] = {}

    def get(self, text: str, line: int) -> tuple[list[Node], list[Finding]] | None:
        entry = self.used.get(text) or self.entries.get(text)
        if entry is None:
            return None
        old_line, nodes, findings = entry
        if old_line != line:
            delta = line - old_line
            nodes = [shifted_node(n, delta) for n in nodes]
            findings = [shifted_finding(f, delta) for f in findings]
        self.used[text] = (line, nodes, findings)
        return nodes, findings

    def put(self, text: str, line: int, nodes: list[Node], findings: list[Finding]) -> None:
        self.used[text] = (line, nodes, findings)

    def rotate(self) -> None:
        """Keep only what the last parse used, so the cache never outgrows the document."""
        self.entries, self.used = self.used, {}


def shift_span(span: Span, delta: int) -> Span:
    sl, sc, el, ec = span
    return _new_tuple(Span, (sl + delta, sc, el + delta, ec))  # Span(…) without its Python-level __new__


def shifted_node(node: Node, delta: int) -> Node:
    """`node` `delta` lines further down, as a new node; `node` is not changed.

    A moved list item is most often not looked into again (the Weval checker reuses its checked
    prompt), so a mapping or list is copied lazily: its children are made, shifted, when first read
    (`MovedMapping.pairs`, `MovedSequence.items`). An edit at the top of a 50,000-line blueprint moves
    5,000 items of ~25 nodes each; copying them all up front took longer than the rest of the analysis.
    Chunks hold no aliases (see `_is_item_list`), so every node is reached once.
    """
    kind = type(node)
    if kind is MovedMapping or kind is MovedSequence:  # shift the original, not a chain of copies
        delta += node._delta  # type: ignore[attr-defined]
        node = node._origin  # type: ignore[attr-defined]
        kind = type(node)
    sl, sc, el, ec = node.span
    span = _new_tuple(Span, (sl + delta, sc, el + delta, ec))
    if kind is Mapping:
        copy: Node = _new_object(MovedMapping)
        copy.flow = node.flow  # type: ignore[attr-defined]
    elif kind is Sequence:
        copy = _new_object(MovedSequence)
        copy.flow = node.flow  # type: ignore[attr-defined]
    else:  # Scalar, BrokenItem
        copy = _new_object(kind)
        copy.value = node.value  # type: ignore[attr-defined]
        copy.raw = node.raw  # type: ignore[attr-defined]
        copy.style = node.style  # type: ignore[attr-defined]
        copy.span, copy.tag, copy.anchor = span, node.tag, node.anchor
        return copy
    copy.span, copy.tag, copy.anchor = span, node.tag, node.anchor
    copy._origin, copy._delta, copy._children = node, delta, None  # type: ignore[attr-defined]
    return copy


class MovedMapping(Mapping):
    """A mapping of an earlier parse, `_delta` lines further down; its pairs are made on first read
    (the same copies every time after that). Behaves as a Mapping in every other way."""

    __slots__ = ("_children", "_delta", "_origin")
    _children: list[tuple[Node, Node]] | None
    _delta: int
    _origin: Mapping

    @property
    def pairs(self) -> list[tuple[Node, Node]]:
        children = self._children
        if children is None:
            d = self._delta
            children = self._children = [(shifted_node(k, d), shifted_node(v, d)) for k, v in self._origin.pairs]
        return children

    @pairs.setter
    def pairs(self, value: list[tuple[Node, Node]]) -> None:
        self._children = value


class MovedSequence(Sequence):
    """A list of an earlier parse, `_delta` lines further down; its items are made on first read."""

    __slots__ = ("_children", "_delta", "_origin")
    _children: list[Node] | None
    _delta: int
    _origin: Sequence

    @property
    def items(self) -> list[Node]:
        children = self._children
        if children is None:
            d = self._delta
            children = self._children = [shifted_node(n, d) for n in self._origin.items]
        return children

    @items.setter
    def items(self, value: list[Node]) -> None:
        self._children = value


def shifted_finding(f: Finding, delta: int) -> Finding:
    """A copy of a finding `delta` lines further down, with its related places and fixes."""
    return replace(
        f, span=shift_span(f.span, delta),
        related=tuple(Related(shift_span(r.span, delta), r.message) for r in f.related),
        fixes=tuple(Fix(x.title, tuple(Edit(shift_span(e.span, delta), e.new_text) for e in x.edits), x.preferred)
                    for x in f.fixes))


# Places in an item's check moved to another item of the same text, the first on `line` moved by `dl` lines
# and `dc` columns: a position on the item's first line moves by both, one on a later line by lines only
# (the lines after the first are the same text from column 0). What the checkers' memos of identical items
# (Weval's prompts, AgentV's tests) use; functions, not a class: a 4 MB flow list of `{}` moves 1.4 million.

def moved_span(s: Span, line: int, dl: int, dc: int) -> Span:
    sl, sc, el, ec = s
    return _new_tuple(Span, (sl + dl, sc + dc if sl == line else sc, el + dl, ec + dc if el == line else ec))


def moved_finding(f: Finding, line: int, dl: int, dc: int) -> Finding:
    fixes, related, extra = f.fixes, f.related, f.extra
    if not fixes and not related and not extra:  # most: a million `{}` each miss a prompt; every field given,
        # as the dataclass's own __init__ costs a third more for a default factory it calls
        return Finding(f.code, f.severity, f.message, moved_span(f.span, line, dl, dc), (), (), f.tags, f.path, {})
    return Finding(
        f.code, f.severity, f.message, moved_span(f.span, line, dl, dc),
        tuple(Fix(x.title, tuple(Edit(moved_span(e.span, line, dl, dc), e.new_text) for e in x.edits), x.preferred)
              for x in fixes) if fixes else (),
        tuple(Related(moved_span(r.span, line, dl, dc), r.message) for r in related) if related else (),
        f.tags, f.path, extra.copy() if extra else {})


def findings_within(item: Span, found: list[Finding]) -> bool:
    """Does every place of these findings (their spans, related places and edits) lie within `item`, each
    well-formed: what `moved_finding` can move?"""
    spans: list[Span | None] = [f.span for f in found]
    for f in found:
        if f.related:
            spans += [r.span for r in f.related]
        if f.fixes:
            spans += [e.span for x in f.fixes for e in x.edits]
    return spans_within(item, spans)


def spans_within(item: Span, spans: list[Span | None]) -> bool:
    isl, isc, iel, iec = item
    for s in spans:
        if s is None:
            continue
        sl, sc, el, ec = s
        # start ≤ s's start ≤ s's end ≤ end, as (line, column) pairs, without a tuple per comparison
        if (sl < isl or (sl == isl and sc < isc) or el > iel or (el == iel and ec > iec)
                or sl > el or (sl == el and sc > ec)):
            return False
    return True


def _parse_all(parsed: ParsedFile, text: str, cache: ChunkCache | None) -> None:
    lines = parsed.lines
    ranges = _document_ranges(lines)
    if ranges is None or (("\r" in text or not text.isascii()) and _ODD_BREAK.search(text) is not None):
        # Directives or explicit document ends; or a line break to YAML that the lines are not split at (a
        # bare CR, NEL, LS, PS: "# c\rkey: 1" is a comment, then a key): parse the stream as one, as
        # items and documents found by lines would not be those YAML reads.
        _parse_resuming(parsed, text, 0)
    else:
        others: list[tuple[int, int]] = []  # documents in a row that are not column-0 lists
        for start, end in ranges:
            if not _is_item_list(lines, start, end):
                key = _keyed_line(lines, start, end) if parsed.streamed else None
                if key is not None:
                    _parse_documents(parsed, others)  # the documents before it, in order
                    others = []
                    if _lazy_keyed_list(parsed, start, end, key):
                        continue
                others.append((start, end))
                continue
            _parse_documents(parsed, others)
            others = []
            if parsed.streamed:
                _lazy_items(parsed, start, end)
            elif cache is not None or not _parse_whole(parsed, start, end):
                # Item by item: the editor's cache reuses unchanged items, and a syntax error in one
                # item hides none of the others.
                _parse_items(parsed, start, end, cache)
        _parse_documents(parsed, others)
    if cache is not None:
        cache.rotate()


def _parse_documents(parsed: ParsedFile, ranges: list[tuple[int, int]]) -> None:
    """Parse documents that follow each other (their line ranges) in one stream: a parser per document
    cost ~15 µs even for an empty one, and a 4 MB file of `---` lines is a million documents. A document
    the stream stops at (a syntax error, too deep, an alias bomb) is parsed on its own, as every one was
    before, so it says what it said alone and hides none of the others; the stream goes on after it."""
    lines = parsed.lines
    if len(ranges) == 1 and not lines[ranges[0][0]].startswith("---"):
        # one document, a block mapping (a blueprint's header), maybe of the plain subset simple_items reads:
        # then its span is its root's (no marker, comment or blank line before its first key or after its end)
        root = simple_mapping(_lines_text(lines, *ranges[0]), ranges[0][0])
        if root is not None:
            parsed.documents.append(Document(root, root.span, len(parsed.documents)))
            return
    ends = [end for _, end in ranges]
    # Each stream reads its lines as it goes: one stopped by a broken document is started again after it,
    # and joining (and encoding) the rest of the file for each made 16,000 broken documents cost 6.6 s.
    # _parse_all takes this way only for texts libyaml breaks into the same lines: no remarking.
    reader = _Resumed(lines, ranges[0][0], ranges[-1][1], False) if ranges else None
    i = 0
    while i < len(ranges):
        # Each document in the stream is one range only when each starts with its `---` (a file's first
        # range may not: only comments there are no document at all)
        if i + 1 < len(ranges) and lines[ranges[i][0]].startswith("---"):
            scratch = ParsedFile(text="", lines=lines)
            first = ranges[i][0]
            # the first stream as it always was; one started again after a broken document reads lines
            stopped = _parse_stream(_lines_text(lines, first, ranges[-1][1]), first, scratch) if i == 0 or \
                reader is None else _parse_stream("", first, scratch, reader)
            if stopped is None and len(scratch.documents) == len(ranges) - i:
                done = scratch.documents
            else:  # the documents that ended before it stopped are as each alone
                done = scratch.documents[:-1] if len(scratch.documents) > len(ranges) - i else scratch.documents
                if stopped is not None:
                    # ...but not the one whose lines hold the error, though libyaml may have ended it
                    # first (`--- {}` then `a` on the next line: the document ends at `{}`, the error is
                    # after it): it is parsed alone below, which reports the error (dropped with the
                    # scratch before, so a file of three documents passed with a syntax error)
                    held = bisect_right(ends, stopped, i)
                    done = done[:held - i]
                    if i + len(done) < held:
                        # A character libyaml refuses stops it as soon as it reads it, ahead of the parse:
                        # the documents before it are a stream of their own (one by one, each of 1,300
                        # documents before a \v restarted the rest: quadratic, 48 s for 141 KB)
                        for d in done:
                            d.index = len(parsed.documents)
                            parsed.documents.append(d)
                        _parse_documents(parsed, ranges[i + len(done):held])
                        i = held
                        done = []
            for d in done:
                d.index = len(parsed.documents)
                parsed.documents.append(d)
            i += len(done)
            if i >= len(ranges):
                return
        start, end = ranges[i]
        _parse_resuming(parsed, _lines_text(lines, start, end), start, end)
        i += 1


def _parse_whole(parsed: ParsedFile, start: int, end: int) -> bool:
    """Parse a list document in one go (one parser instead of one per item: faster for a valid
    file). False, with nothing added, when it has a syntax error."""
    scratch = ParsedFile(text="", lines=parsed.lines)
    if _parse_stream(_lines_text(parsed.lines, start, end), start, scratch) is not None or scratch.findings:
        return False
    for d in scratch.documents:
        d.index = len(parsed.documents)
        parsed.documents.append(d)
    return True


# Parses resumed after syntax errors in one stream. Each costs a parser and a few reads; past this many the
# rest is one finding (the findings of a kind shown stop at analysis.MAX_PER_KIND anyway): 700,000 broken
# documents fit in 4 MB.
MAX_RESUMES = 1000


def _parse_resuming(parsed: ParsedFile, text: str, first_line: int, end_line: int | None = None) -> None:
    """Parse a stream (the lines from `first_line` to `end_line`, or the whole text); after a syntax error,
    go on at the next document marker.

    A resumed parse reads the lines from its marker as it goes (_LineChunks), and its positions come from
    one table of line starts: it used to join, encode and scan the whole rest of the stream, so a file of
    16,000 broken documents behind a bare CR (112 KB) took 6.6 s, quadratic in its errors."""
    offset_line = first_line
    total = end_line if end_line is not None else first_line + text.count("\n") + 1
    error_line = _parse_stream(text, offset_line, parsed)
    resumed: _Resumed | None = None
    for _ in range(MAX_RESUMES):
        if error_line is None:
            return
        nxt = _next_document_start(parsed.lines, max(error_line, offset_line + 1))
        if nxt is None or nxt >= total:
            return
        offset_line = nxt
        if resumed is None:
            resumed = _Resumed(parsed.lines, first_line, total, _other_breaks(text))
        error_line = _parse_stream("", offset_line, parsed, resumed)
    if error_line is not None:
        nxt = _next_document_start(parsed.lines, max(error_line, offset_line + 1))
        if nxt is not None and nxt < total:
            _not_checked(parsed, nxt)


def _not_checked(parsed: ParsedFile, line: int) -> None:
    # its own code: a 1,001st `yaml-syntax` would be folded into the count of those past the cap
    parsed.findings.error("yaml-too-many-errors", Span(line, 0, line, min(3, len(parsed.lines[line]))),
                          f"More than {MAX_RESUMES:,} documents with syntax errors: the documents from line "
                          f"{line + 1} on are not checked. Fix the errors above first.")


class _Resumed:
    """The lines `first` to `end` of a file, parsed again from a document marker after each syntax error:
    where each resumed parse reads (`chunks`), and its positions at "\n" only (`remarker`) when libyaml
    breaks lines elsewhere too, from line starts counted once."""

    __slots__ = ("end", "fed", "first", "lines", "offsets", "starts", "swapped")

    def __init__(self, lines: list[str], first: int, end: int, other_breaks: bool) -> None:
        self.lines, self.first, self.end = lines, first, end
        self.fed, self.swapped = False, False  # the lines as libyaml reads them: made at the first restart
        # where each line starts, in characters from line `first` (and where the last one ends)
        self.offsets = [0, *accumulate(len(lines[i]) + 1 for i in range(first, end))]
        self.starts = self.offsets if other_breaks else None

    def chunks(self, line: int) -> _LineChunks:
        if not self.fed:
            self.lines, self.swapped = _fed_lines(self.lines, self.first, self.end)
            self.fed = True
        return _LineChunks(self, line)

    def reader_mark(self, line: int, position: int) -> _Mark:
        """_reader_mark for the stream from `line`, counted along its lines up to the place only (the
        rest of the file is not text here: joining it for each control character was quadratic again)."""
        at = chars = 0  # offsets (bytes for libyaml) and characters from the stream's start to line k
        k = line
        for k in range(line, self.end):
            text = self.lines[k]
            size = len(text.encode("utf-8", "surrogatepass")) if _OFFSETS_IN_BYTES and not text.isascii() else len(text)
            if position <= at + size or k == self.end - 1:
                break
            at, chars = at + size + 1, chars + len(text) + 1
        text = self.lines[k]
        into = max(0, position - at)
        if _OFFSETS_IN_BYTES and not text.isascii():
            into = len(text.encode("utf-8", "surrogatepass")[:into].decode("utf-8", "ignore"))
        col = min(into, len(text))
        return _Mark(k - line, col, chars + col)

    def remarker(self, line: int) -> Callable[[Any], _Mark] | None:
        starts = self.starts
        if starts is None:
            return None
        at = line - self.first
        base = starts[at]

        def remark(mark: Any) -> _Mark:
            k = bisect_right(starts, base + mark.index) - 1
            return _Mark(k - at, base + mark.index - starts[k], mark.index)

        return remark


_WINDOW = 16 * 1024  # libyaml's raw buffer, in bytes: what it takes from its input at a time


class _LineChunks:
    """Lines `at` to `end` as a stream libyaml reads in pieces (the same text as _lines_text gives, so the
    same events and marks): a parse that stops early reads at most a piece past it."""

    __slots__ = ("at", "name", "of")

    def __init__(self, of: _Resumed, at: int) -> None:
        self.of, self.at, self.name = of, at, "<unicode string>"

    def read(self, size: int = -1) -> str:
        of = self.of
        if self.at >= of.end:
            return ""
        # Whole lines of at least 16 K characters: libyaml takes its windows of 16 KB from them as from a
        # string, so it meets a character it refuses (a reader error) where it did before.
        offsets, first = of.offsets, of.first
        stop = of.end if size < 0 else \
            min(of.end, first + bisect_left(offsets, offsets[self.at - first] + max(size, _WINDOW)))
        stop = max(stop, self.at + 1)
        piece = _lines_text(of.lines, self.at, stop)
        self.at = stop
        return piece


def _lines_text(lines: list[str], start: int, end: int) -> str:
    """The text of lines `start` to `end` (excluded), with the line break that ends the last one when
    more follow: without it, a block scalar ending the part lost its own final line break (`|` read
    "hello" where the whole file says "hello\n": another prompt text, and another prompt id, in every
    32nd prompt of a streamed check, or in a document before `---`)."""
    if type(lines) is Lines:  # a big file's: one slice of its text, not a string per line joined
        text = cast(Lines, lines).joined(start, end)
    else:
        text = "\n".join(lines[start:end])
    return text + "\n" if end < len(lines) else text


def _document_ranges(lines: list[str]) -> list[tuple[int, int]] | None:
    """Line ranges of the documents (each from its `---` marker), or None when the stream has
    directives (`%YAML`) or document-end markers (`...`) that a split would misread."""
    starts = [0]
    for i, line in enumerate(lines):
        if not line:
            continue
        c = line[0]
        if c == "-" and line.startswith("---") and _DOC_MARKER.match(line):
            if i:
                starts.append(i)
        elif c == "%" or (c == "." and line.startswith("...")):
            return None
    starts.append(len(lines))
    return [(a, b) for a, b in pairwise(starts) if b > a]


_ITEM = re.compile(r"-(?:[ \t]|$)")
_ANCHOR = re.compile(r"(?:^|[\s\[{,])&[^\s\[\]{},]")


def _is_item_list(lines: list[str], start: int, end: int) -> bool:
    """A document whose root is a block list at column 0, with no anchors (an alias could point
    from one item into another)."""
    first = start + 1 if lines[start].startswith("---") else start
    if lines[start].startswith("---") and lines[start][3:].strip() and not lines[start][3:].lstrip().startswith("#"):
        return False  # content on the marker line
    for i in range(first, end):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not _ITEM.match(lines[i]):
            return False
        break
    else:
        return False
    return not any("&" in line and _ANCHOR.search(line) for _, line in _numbered(lines, first, end))


def _item_bounds(lines: list[str], start: int, end: int) -> tuple[int, list[int]]:
    """The first line of the first item of a column-0 block list, and where each item's part of the text
    starts, then `end`: the first part from `start` (the document's marker and comments before the first
    item are parsed with it: a character YAML refuses there is an error in every way the list is read)."""
    bounds = [i for i, line in _numbered(lines, start, end) if line[:1] == "-" and _ITEM.match(line)
              and not (line.startswith("---") and _DOC_MARKER.match(line))]
    first = bounds[0] if bounds else end
    if bounds:
        bounds[0] = start
    bounds.append(end)
    return first, bounds


def _parse_chunk(lines: list[str], a: int, b: int) -> tuple[list[Node], list[Finding]]:
    """The nodes of the list item on lines a..b-1 (a broken item: one BrokenItem) and its findings: read
    without libyaml when its lines are of the plain subset `simple_items` reads (the same nodes)."""
    chunk = _lines_text(lines, a, b)
    simple = simple_items(chunk, a)
    if simple is not None:
        return simple, []
    return _libyaml_chunk(lines, a, b, chunk)


def _libyaml_chunk(lines: list[str], a: int, b: int, chunk: str) -> tuple[list[Node], list[Finding]]:
    """_parse_chunk through libyaml."""
    scratch = ParsedFile(text=chunk, lines=lines)
    _parse_stream(chunk, a, scratch)
    nodes: list[Node] = []
    for d in scratch.documents:
        if isinstance(d.root, Sequence):
            nodes += d.root.items
    if not nodes and scratch.findings:
        # A broken item still takes its place (as null), so the items after it keep their index; it starts
        # past the document's marker and comments of a list's first part.
        end_line = b - 1
        while end_line > a and not lines[end_line].strip():
            end_line -= 1
        while a < end_line and (not lines[a].strip() or lines[a].lstrip().startswith("#") or _DOC_MARKER.match(lines[a])):
            a += 1
        nodes = [BrokenItem(Span(a, 0, end_line, len(lines[end_line])), None, "", None)]
    return nodes, list(scratch.findings)


def _parse_items(parsed: ParsedFile, start: int, end: int, cache: ChunkCache | None) -> None:
    """Parse a column-0 block list item by item, then put the items back together as one list. Without a
    cache, items are parsed a group at a time, as LazyItems does (it is LazyItems, read once). An item that
    does not parse may have been cut at a line that only looks like an item (`ItemBounds.correct`): it is
    parsed again to its real end."""
    lines = parsed.lines
    first, starts = _item_bounds(lines, start, end)
    bounds = ItemBounds(lines, starts, 0)
    if cache is None:  # no item is looked up by its text: a libyaml parse per LazyItems.GROUP items
        items = list(LazyItems(parsed, bounds))
        _list_document(parsed, start, first, items, items[-1].span if items else None)
        return
    items = []
    k, last = 0, len(starts) - 1
    while k < last:
        e = bounds.next(k)
        a, b = starts[k], starts[e]
        chunk = "\n".join(lines[a:b])
        hit = cache.get(chunk, a)
        if hit is None:
            nodes, found = _parse_chunk(lines, a, b)
            cache.put(chunk, a, nodes, found)
        else:
            nodes, found = hit
        if found and bounds.correct(k):  # cut inside a scalar or collection? the item goes on past `b`
            longer = bounds.next(k)
            text = "\n".join(lines[a:starts[longer]])
            hit = cache.get(text, a)
            if hit is None:
                hit = _parse_chunk(lines, a, starts[longer])
                cache.put(text, a, *hit)
            if hit[1]:
                bounds.restore()  # no: a broken item
            else:
                e, chunk, (nodes, found) = longer, text, hit
        if len(nodes) == 1:
            # One item, one text: a chunk that holds two (a bare CR or NEL is a line break to YAML, not to
            # the lines) would give both the first one's checked prompt (PromptCache keys by the text).
            parsed.item_texts[id(nodes[0])] = chunk
        items += nodes
        parsed.findings.extend(found)
        k = e
    _list_document(parsed, start, first, items, items[-1].span if items else None)


def _list_document(parsed: ParsedFile, start: int, first: int, items: list[Node], last: Span | None) -> None:
    last = last or Span(first, 0, first, 0)
    root = Sequence(Span(first, 0, last.end_line, last.end_col), items, False) if items else None
    doc_span = Span(start, 0, last.end_line, last.end_col)
    parsed.documents.append(Document(root, doc_span, len(parsed.documents)))


class LazyItems:
    """The items of a column-0 block list, parsed when they are read and not kept: what a streamed
    parse (`parse_yaml(streamed=True)`) puts in the list's `Sequence.items`. It reads like that list
    (iteration, `len`, indexes and slices); every read parses again, so a reader goes through it once.
    Each item's syntax findings are added to the file's findings the first time the item is parsed, in
    order, as `_parse_items` adds them."""

    def __init__(self, parsed: ParsedFile, bounds: ItemBounds) -> None:
        # The file's lines and findings, not the ParsedFile that holds this list: that would be a reference
        # cycle, and the `evalspec` process runs with the cyclic collector off, so the file's text and
        # lines (~60 MB at 100,000 prompts) would live until the end of the run.
        self._lines = parsed.lines
        self._findings = parsed.findings
        self._bounds = bounds
        self._reported = 0  # index (in bounds.starts) up to which the items' findings are in parsed.findings
        self._len: int | None = None
        # simple_items is tried on each group until SIMPLE_TRIES groups in a row were not of its subset with
        # none read before (an AgentV suite's flow mappings): then the list's groups go to libyaml at once
        self._simple_misses = 0

    # Items are parsed GROUP at a time: one libyaml parse per item cost 0.035 s more than one for the
    # whole list at 2,000 prompts. A group that parses to one node per item and says nothing is what
    # the items give one by one (column-0 items share nothing: no aliases, see `_is_item_list`); any
    # other group is parsed again item by item, so one broken item still hides nothing. An item that does
    # not parse may have been cut where a line only looks like an item: the bounds are corrected and the
    # item parsed again to its real end (ItemBounds.correct; corrected once, for every later read too).
    GROUP = 32
    SIMPLE_TRIES = 8

    def _group(self, k: int, end: int) -> tuple[int, int]:
        """Where the group of items from start `k` ends (at most GROUP items, not past `end`), and its size."""
        group_end, count, bounds = k, 0, self._bounds
        while count < self.GROUP and group_end < end:
            group_end = bounds.next(group_end)
            count += 1
        return group_end, count

    def __iter__(self) -> Iterator[Node]:
        lines, bounds = self._lines, self._bounds
        starts = bounds.starts
        k, last = 0, len(starts) - 1
        while k < last:
            group_end, count = self._group(k, last)
            if count > 1:
                a, b = starts[k], starts[group_end]
                chunk = _lines_text(lines, a, b)
                simple = simple_items(chunk, a) if self._simple_misses < self.SIMPLE_TRIES else None
                found: list[Finding]
                if simple is not None:
                    nodes, found = simple, []
                    self._simple_misses = -1_000_000_000  # one read: tried on every group from now on
                else:
                    nodes, found = _libyaml_chunk(lines, a, b, chunk)
                    self._simple_misses += 1
                if not found and len(nodes) == count and not any(type(x) is BrokenItem for x in nodes):
                    if self._reported >= k:  # nothing to report for these items
                        self._reported = max(self._reported, group_end)
                    yield from nodes
                    k = group_end
                    continue
            while k < group_end:
                e = bounds.next(k)
                nodes, found = _parse_chunk(lines, starts[k], starts[e])
                if found and bounds.correct(k):  # cut inside a scalar or collection? parse to its real end
                    longer = bounds.next(k)
                    merged = _parse_chunk(lines, starts[k], starts[longer])
                    if merged[1]:
                        bounds.restore()  # no: a broken item
                    else:
                        e, (nodes, found) = longer, merged
                if k == self._reported:
                    self._findings.extend(found)
                    self._reported = e
                yield from nodes
                k = e

    def count(self) -> int:
        """How many items the bounds find (parsing none): the items there are when every line that looks
        like an item starts one, as in every clean file."""
        starts = self._bounds.starts
        return len(starts) - 1 - sum(1 for k in range(len(starts) - 1) if starts[k] == DROPPED)

    def ranges(self, parts: int) -> list[tuple[int, int]]:
        """The items cut into `parts` ranges of about as many items each, as (first, end) indexes of the
        bounds' starts (`part` reads one)."""
        starts = self._bounds.starts
        kept = [k for k in range(len(starts) - 1) if starts[k] != DROPPED]
        last = len(starts) - 1
        cuts = [kept[len(kept) * j // parts] for j in range(parts)] + [last]
        return [(cuts[j], cuts[j + 1]) for j in range(parts) if cuts[j] < cuts[j + 1]]

    def part(self, first: int, end: int) -> Iterator[Node]:
        """The items of one range (`ranges`), as iteration reads them, for a read of the items in several
        processes (item_processes.py): raises Unshared where only a read of the whole list can say what
        an item is (a syntax finding, an item cut where a line only looked like one). Reports nothing."""
        from .item_processes import Unshared

        lines, bounds = self._lines, self._bounds
        starts = bounds.starts
        k = first
        while k < end:
            group_end, count = self._group(k, end)
            if count > 1:
                a, b = starts[k], starts[group_end]
                chunk = _lines_text(lines, a, b)
                simple = simple_items(chunk, a)
                nodes, found = (simple, []) if simple is not None else _libyaml_chunk(lines, a, b, chunk)
            if count == 1 or found or len(nodes) != count or any(type(x) is BrokenItem for x in nodes):
                while k < group_end:  # as iteration: one by one
                    e = bounds.next(k)
                    nodes, found = _parse_chunk(lines, starts[k], starts[e])
                    if found:
                        raise Unshared(f"item at line {starts[k] + 1}")
                    yield from nodes
                    k = e
                continue
            yield from nodes
            k = group_end

    def read_all(self) -> None:
        """Every item was read (in parts, `part`) and none said anything: nothing is left to report."""
        self._reported = len(self._bounds.starts) - 1

    def __bool__(self) -> bool:
        return len(self._bounds.starts) > 1  # a chunk always gives at least one node (BrokenItem if broken)

    @property
    def unread(self) -> bool:
        """Not read to its end: the syntax findings of its items past `_reported` are not in the file's."""
        return self._reported < len(self._bounds.starts) - 1

    def __len__(self) -> int:
        if self._len is None:
            self._len = sum(1 for _ in self)
        return self._len

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            if (index.start or 0) >= 0 and (index.stop is not None and index.stop >= 0) and index.step is None:
                return list(islice(self, index.start or 0, index.stop))
            return list(self)[index]
        if index >= 0:
            for i, node in enumerate(self):
                if i == index:
                    return node
            raise IndexError(index)
        return list(self)[index]


def materialize(parsed: ParsedFile) -> None:
    """Turn a streamed parse's LazyItems into the lists they stand for (a reader that keeps the items
    or reads them more than once: an editor, a checker other than Weval's and AgentV's)."""
    for d in parsed.documents:
        if isinstance(d.root, Sequence) and isinstance(d.root.items, LazyItems):
            d.root.items = list(d.root.items)
        elif isinstance(d.root, Mapping):
            for _, value in d.root.pairs:
                if isinstance(value, Sequence) and isinstance(value.items, LazyItems):
                    value.items = list(value.items)
    parsed.streamed = False


def nested_lazy(parsed: ParsedFile) -> bool:
    """A streamed list that is a mapping's value (not a document's root): a whole parse reads its mapping
    as one, so a syntax error in one of its items loses the whole document there, not the item alone."""
    for d in parsed.documents:
        root = d.root
        if isinstance(root, Mapping) and any(isinstance(v, Sequence) and isinstance(v.items, LazyItems)
                                             for _, v in root.pairs):
            return True
    return False


def unread_lazy(parsed: ParsedFile) -> bool:
    """A streamed list the checker did not read to its end (a list in a document AgentV does not read):
    what its items would say is missing from the findings."""
    for d in parsed.documents:
        root = d.root
        if isinstance(root, Sequence):
            lists: list[Node] = [root]
        elif isinstance(root, Mapping):
            lists = [v for _, v in root.pairs]
        else:
            continue
        if any(isinstance(x, Sequence) and isinstance(x.items, LazyItems) and x.items.unread for x in lists):
            return True
    return False


def is_lazy(node: Node | None) -> bool:
    """A list whose items a streamed parse makes when they are read (`LazyItems`): read it once."""
    return isinstance(node, Sequence) and isinstance(node.items, LazyItems)


# A streamed parse also reads lazily the block list under this column-0 key of a mapping document
# (an AgentV suite's tests: 100,000 of them are ~1.2 million nodes).
LAZY_KEYS = ("tests",)
_KEYED_LIST = re.compile(r"(" + "|".join(LAZY_KEYS) + r"):[ \t]*(?:#.*)?\Z")


def _numbered(lines: list[str], start: int, end: int) -> Iterator[tuple[int, str]]:
    """`(i, lines[i])` for i in range(start, end), read a slice at a time: a big file's lines are
    `text_lines.Lines`, where each index is a Python call and a slice one split (the scans of a 100,000-test
    suite's 700,000 lines read them four times: 0.4 s of a 20,000-test check went to single reads)."""
    for a in range(start, end, 4096):
        yield from enumerate(lines[a:min(a + 4096, end)], a)


def _keyed_line(lines: list[str], start: int, end: int) -> int | None:
    """The line of the document's one column-0 `tests:` key holding a block list, if it has exactly one."""
    keys = [i for i, line in _numbered(lines, start, end) if line[:1] == "t" and _KEYED_LIST.match(line)]
    return keys[0] if len(keys) == 1 else None


def _lazy_keyed_list(parsed: ParsedFile, start: int, end: int, key: int) -> bool:
    """A mapping document at column 0 whose `tests:` key holds a block list: the rest of the document is
    parsed now (the list's lines read as empty lines, so every position, the document's end included,
    stays where it was) and the list's items are LazyItems. False, with nothing added,
    for any document this cannot be sure to read as a whole parse would (anchors, a line of the list
    less indented than its items, a syntax error outside the list): it is parsed whole."""
    lines = parsed.lines
    first = stop = -1
    indent = 0
    bounds = array("q")  # the items' first lines (8 bytes an item, held while the tests are read)
    deeper = None  # past the first item: the indentation of a line inside an item
    for i, line in _numbered(lines, key + 1, end):
        if deeper is not None and line.startswith(deeper) and "\t" not in line:
            continue  # a line inside an item (most): what the tests below do with it, nothing, told at once
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        if stripped[0] == "\t":
            return False
        k = len(line) - len(stripped)
        if first < 0:
            if not _ITEM.match(stripped):
                return False
            first, indent = i, k
            deeper = " " * (indent + 1)
        elif k == 0 and not (indent == 0 and _ITEM.match(line)):
            stop = i  # the next key of the mapping
            break
        elif k < indent or (k == indent and not _ITEM.match(stripped)):
            return False
        if line[indent:indent + 1] == "-" and not line[:indent].strip() and _ITEM.match(line, indent):
            bounds.append(i)
    if first < 0:
        return False
    stop = end if stop < 0 else stop
    if _any_anchor(lines, start, end):
        return False
    bounds[0] = key + 1  # the comments before the first test are parsed with it (see _item_bounds)
    bounds.append(stop)
    item_bounds = ItemBounds(lines, bounds, indent)
    tail = _last_item(item_bounds)
    if not tail[0] or tail[1] or type(tail[0][-1]) is BrokenItem:
        return False
    # The list's lines as empty lines (a list of 100,000 tests' lines as strings would be ~80 MB; a list
    # of as many empty strings, 5.6 MB, so the text is made from its parts), the document's last line, if
    # the list's, as a comment as long as it was: the document's end is the same.
    head, blank, after = lines[start:key + 1], stop - key - 1, lines[stop:end]
    if stop == end and not blank and head[-1]:
        head[-1] = "#" * len(head[-1])
    masked = "\n".join(head) + "\n" * blank + ("\n" + "\n".join(after) if after else "")
    simple = _simple_head(lines, start, key, blank) if stop == end and blank and lines[key] == "tests:" else None
    if simple is not None:
        doc, root, at = simple, cast(Mapping, simple.root), len(cast(Mapping, simple.root).pairs) - 1
    else:
        scratch = ParsedFile(text="", lines=lines)
        if _parse_stream(masked, start, scratch) is not None or scratch.findings \
                or len(scratch.documents) != 1 or not isinstance(scratch.documents[0].root, Mapping):
            return False
        doc = scratch.documents[0]
        root = cast(Mapping, doc.root)
        found = next((n for n, (k, v) in enumerate(root.pairs) if isinstance(k, Scalar)
                      and k.span.start_line == key and k.span.start_col == 0), None)
        value = root.pairs[found][1] if found is not None else None
        if found is None or not (isinstance(value, Scalar) and value.value is None):
            return False
        at = found
    last = tail[0][-1].span
    items = cast(list[Node], LazyItems(parsed, item_bounds))
    seq = Sequence(Span(first, indent, last.end_line, last.end_col), items, False)
    pairs = list(root.pairs)
    pairs[at] = (pairs[at][0], seq)
    root.pairs = pairs
    if at == len(pairs) - 1:  # a block mapping ends where its last value does
        root.span = Span(root.span.start_line, root.span.start_col, last.end_line, last.end_col)
    doc.index = len(parsed.documents)
    parsed.documents.append(doc)
    return True


def _simple_head(lines: list[str], start: int, key: int, blank: int) -> Document | None:
    """The document `_lazy_keyed_list` has libyaml parse (its `tests:` list's lines masked as `blank` empty
    lines, the document's last ones), read by simple_items when the lines before `tests:` (its last key, alone
    on its line) are of that subset: the same nodes and spans, without loading PyYAML (an AgentV suite's
    usual head: `name`, `description`, `execution: {target}`). `tests`'s value is null, as libyaml reads it."""
    root = simple_mapping("\n".join([*lines[start:key], "tests: x"]), start)
    if root is None:
        return None
    k = root.pairs[-1][0]
    if k.span != Span(key, 0, key, 5):
        return None
    root.pairs[-1] = (k, Scalar(Span(key, 6, key, 6), None, "", None))
    # libyaml ends the document at the masked text's end (its last line break then column 0), _span pulls it
    # back to the last line with content
    return Document(root, _span(start, 0, key + blank, 0, lines), 0)


def _any_anchor(lines: list[str], start: int, end: int) -> bool:
    """Does a line from `start` to `end` hold an anchor (`&name`)? Lines are looked at only in a piece of
    4,096 that holds a `&`."""
    for a in range(start, end, 4096):
        piece = lines[a:min(a + 4096, end)]
        if "&" in "\n".join(piece) and any("&" in line and _ANCHOR.search(line) for line in piece):
            return True
    return False


def _lazy_items(parsed: ParsedFile, start: int, end: int) -> None:
    """`_parse_items` for a streamed parse: the list's items are LazyItems. Only the last item is
    parsed now, for the list's span (its findings come when it is read)."""
    first, starts = _item_bounds(parsed.lines, start, end)
    bounds = ItemBounds(parsed.lines, starts, 0)
    if len(bounds.starts) < 2:
        _list_document(parsed, start, first, [], None)
        return
    tail = _last_item(bounds)[0]
    if not tail:  # a last item that parses to nothing and says nothing: the lists would differ, parse it all
        _parse_items(parsed, start, end, None)
        return
    # LazyItems reads like the list it stands for (iteration, len, indexes, slices): every reader of
    # `Sequence.items` takes it as one.
    items = cast(list[Node], LazyItems(parsed, bounds))
    _list_document(parsed, start, first, items, tail[-1].span)


def _last_item(bounds: ItemBounds) -> tuple[list[Node], list[Finding]]:
    """The nodes and findings of a list's last item, parsed first in a streamed parse, for the list's span.
    One that does not parse may have been cut at a line that only looks like an item: then the whole
    list's tokens say where it starts (`ItemBounds.last_start`), and it is parsed from there if that parses.
    The bounds stay as they are: each item is corrected, as every parse does, when it is read."""
    starts = bounds.starts
    nodes, found = _parse_chunk(bounds.lines, starts[bounds.last()], starts[-1])
    if found:
        line = bounds.last_start()
        if line is not None and line < starts[bounds.last()]:
            longer = _parse_chunk(bounds.lines, line, starts[-1])
            if not longer[1]:
                return longer
    return nodes, found


_DOC_MARKER = re.compile(r"---(?:\s|$)")


_YAML11_BREAKS = ("\x85", "\u2028", "\u2029")


def _other_breaks(text: str) -> bool:
    """Does libyaml break lines where we do not: at a YAML 1.1 break, or at a CR not before a LF?"""
    if any(c in text for c in _YAML11_BREAKS):
        return True
    crs = text.count("\r")
    return crs > 0 and crs != text.count("\r\n")


class _Mark(NamedTuple):
    line: int
    column: int
    index: int  # type: ignore[assignment]  # shadows tuple.index, as libyaml's Mark.index does


def _remarker(text: str, bom: bool = False) -> Callable[[Any], _Mark]:
    """Marks with line and column counted at "\n" only, from libyaml's code-point index (which does not
    count a leading byte order mark: `bom`)."""
    starts = [0, *accumulate(len(line) + 1 for line in text.split("\n")[:-1])]  # in C: a 400 KB text per resume
    skipped = 1 if bom else 0

    def remark(mark: Any) -> _Mark:
        index = mark.index + skipped
        line = bisect_right(starts, index) - 1
        return _Mark(line, index - starts[line], index)

    return remark


def _next_document_start(lines: list[str], start: int) -> int | None:
    for i in range(start, len(lines)):
        if lines[i].startswith("---") and _DOC_MARKER.match(lines[i]):
            return i
    return None


def _parse_stream(text: str, off: int, parsed: ParsedFile, resumed: _Resumed | None = None) -> int | None:
    """Compose the documents of `text` (which starts at line `off` of the file) into `parsed`; or, `resumed`,
    of its lines from `off` on (`text` unused).

    Returns the (file) line of a syntax error that stopped parsing early, else None.
    """
    import yaml

    lines = parsed.lines
    _Parser = globals().get("_Parser") or _load_parser()
    if resumed is not None:
        parser = _Parser(resumed.chunks(off))
        remark = resumed.remarker(off)
        swapped = resumed.swapped
    else:
        # (a surrogate escape or a blank line with a tab: libyaml reads a text of the same length, yaml_feed.py)
        fed, swapped = fed_text(text, _scalar_lines) if "\\" in text or "\t" in text else (text, False)
        parser = _Parser(_Chunks(fed) if len(fed) > READ_IN_CHUNKS_FROM else fed)
        # libyaml also breaks lines at \x85, \u2028 and \u2029 (YAML 1.1); LSP and the engine do not. In
        # the rare text that holds one, positions are recomputed from the marks' code-point index. So they
        # are after a byte order mark, which libyaml skips and does not count (the first line's columns
        # were one short, and with such a break every position after it was one character early: a flow
        # mapping on line 7 started at the end of the `---` on line 6).
        bom = text.startswith("\ufeff")
        remark = _remarker(text, bom) if bom or _other_breaks(text) else None
    # [children or alternating keys and values, expanded size, end of the last child as written (an
    # alias's own position, not its anchor's: the anchor may sit before the collection), start event]
    stack: list[list[Any]] = []
    ScalarEvent, AliasEvent = yaml.ScalarEvent, yaml.AliasEvent
    anchors: dict[str, tuple[Node, int]] = {}
    expanded = 0  # nodes the document's aliases stand for
    doc_start: Any = None
    root: Node | None = None
    n_lines = len(lines)
    # Span(...) goes through NamedTuple's Python-level __new__; the tuple's own is a quarter of the
    # cost, and a large file makes a Span per event.
    new_span = tuple.__new__
    MappingStartEvent, SequenceStartEvent = yaml.MappingStartEvent, yaml.SequenceStartEvent
    MappingEndEvent, SequenceEndEvent = yaml.MappingEndEvent, yaml.SequenceEndEvent
    get_event, new_object = parser.get_event, _new_object
    try:
        while True:
            # libyaml's C events: typed as the base `Event` by the stubs, each kind has its own fields.
            event: Any = get_event()
            if event is None:
                break
            if remark is not None:
                event.start_mark, event.end_mark = remark(event.start_mark), remark(event.end_mark)
            kind = type(event)
            if kind is ScalarEvent:
                start, end = event.start_mark, event.end_mark
                style = event.style or None
                if style is not None and style in "|>":  # block scalars end on the next line
                    span = _span(start.line + off, start.column, end.line + off, end.column, lines)
                else:
                    el = end.line + off
                    span = new_span(Span, (start.line + off, start.column, el, end.column))
                    if el >= n_lines:  # libyaml's implied final line break: stay on the last line
                        span = _clamped(span, lines)
                tag = event.tag
                raw = event.value
                if swapped:
                    raw = unswapped(raw)
                    if style == '"' and _SURROGATE.search(raw) is not None:
                        raw = _lone_surrogates(raw, span, parsed.findings)
                if tag and tag != "!":
                    value = _resolve_tagged(raw, tag)
                elif style is None and (not raw or raw[0] in _MAYBE_NOT_STR):  # (libyaml says '' for null)
                    value = resolve_plain(raw)
                else:  # quoted, block, or plain that can only be a string (resolve_plain's first test)
                    value = raw
                if style is not None and style in "|>" and raw and end.line + off >= n_lines - 1 and lines[-1] \
                        and not raw.endswith("\n"):
                    # the file ends inside the block scalar with no line break: libyaml drops the final one
                    # the scalar's chomping keeps, YAML (and js-yaml, Weval's parser) keep it
                    value = raw = _block_at_eof(raw, lines, start.line + off, start.column)
                # Scalar(…) without its Python-level __init__ (a frame per node; a 4 MB file has millions)
                node: Node = new_object(Scalar)
                node.span, node.value, node.raw, node.style = span, value, raw, style  # type: ignore[attr-defined]
                node.tag = tag if tag != "!" else None
                anchor = node.anchor = event.anchor
                if anchor:
                    anchors[anchor] = (node, 1)
                if stack:
                    top = stack[-1]
                    top[0].append(node)
                    top[1] += 1
                    top[2] = span
                else:
                    root = node
            elif kind is AliasEvent:
                target = anchors.get(event.anchor)
                if target is None:  # libyaml already rejects these; be safe anyway
                    raise yaml.composer.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
                node, size = target
                # The bound is on what aliases add: a document may be large in its own right (a
                # 100,000-test suite is ~1.2 million nodes as written), which the file-size cap bounds.
                expanded += size
                if expanded > MAX_EXPANDED_NODES:
                    end = event.end_mark
                    raise _TooLarge(Span(end.line + off, end.column, end.line + off, end.column))
                if stack:
                    top = stack[-1]
                    top[0].append(node)
                    top[1] += size
                    end = event.end_mark
                    top[2] = Span(end.line + off, end.column, end.line + off, end.column)
                else:
                    root = node
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                if len(stack) >= MAX_DEPTH:
                    mark = event.start_mark
                    raise _TooDeep(Span(mark.line + off, mark.column, mark.line + off, mark.column + 1))
                # The node is made at its end event, with its final span: nothing can refer to it before
                # (an alias to its anchor inside it is undefined), and a deep file has millions of them.
                stack.append([[], 1, None, event])
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                children, size, last, start_event = stack.pop()
                start_mark = start_event.start_mark
                flow = start_event.flow_style is True  # True, False or None (libyaml's style)
                if not flow and last is not None:
                    # A block collection's end event sits on the next token, maybe lines later;
                    # its text really ends where its last child does.
                    span = new_span(Span, (start_mark.line + off, start_mark.column, last.end_line, last.end_col))
                else:
                    end = event.end_mark
                    sl, el, ec = start_mark.line + off, end.line + off, end.column
                    if (ec or el <= sl) and el < n_lines:  # what _span leaves as it is (flow collections)
                        span = new_span(Span, (sl, start_mark.column, el, ec))
                    else:
                        span = _span(sl, start_mark.column, el, ec, lines)
                tag = start_event.tag
                # Sequence(…) and Mapping(…) without their Python-level __init__, as for scalars
                if kind is SequenceEndEvent:
                    node = new_object(Sequence)
                    node.items = children
                else:  # an empty mapping's pairs: its (empty) list of children
                    node = new_object(Mapping)
                    node.pairs = (list(zip(children[0::2], children[1::2], strict=False))
                                  if children else children)
                node.span, node.flow = span, flow
                node.tag = tag if tag != "!" else None
                anchor = node.anchor = start_event.anchor
                if anchor:
                    anchors[anchor] = (node, size)
                if stack:
                    top = stack[-1]
                    top[0].append(node)
                    top[1] += size
                    top[2] = span
                else:
                    root = node
            elif kind is yaml.DocumentStartEvent:
                doc_start = event.start_mark
                root = None
                anchors = {}
                expanded = 0
                stack = []
            elif kind is yaml.DocumentEndEvent:
                end = event.end_mark
                span = _span(doc_start.line + off, doc_start.column, end.line + off, end.column, lines)
                parsed.documents.append(Document(root, span, len(parsed.documents)))
            # StreamStart/StreamEnd carry nothing we need
    except _TooDeep as exc:
        parsed.findings.error("yaml-too-deep", exc.span,
                              f"Nesting deeper than {MAX_DEPTH} levels; this document is not checked.")
        return exc.span.start_line  # resume at the next document
    except _TooLarge as exc:
        parsed.findings.error(
            "yaml-alias-bomb", exc.span,
            f"Aliases in this document expand to more than {MAX_EXPANDED_NODES:,} nodes "
            "(an alias bomb?); this document is not checked.")
        return exc.span.start_line
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        if mark is None and isinstance(exc, yaml.reader.ReaderError):
            # a character YAML refuses: where it is
            mark = _reader_mark(text, exc.position) if resumed is None else resumed.reader_mark(off, exc.position)
        if mark is not None and remark is not None:
            mark = remark(mark)
        line, col = (mark.line + off, mark.column) if mark is not None else (off, 0)
        line = max(0, min(line, len(lines) - 1))
        col = max(0, min(col, len(lines[line])))
        problem = getattr(exc, "problem", None) or str(exc)
        if "maximum nesting depth" in str(problem):
            # PyYAML 6.0.4's libyaml has a nesting limit of its own, met by its scanner (which reads ahead)
            # before the events reach MAX_DEPTH here: the same finding as ours, whichever comes first.
            span = Span(line, col, line, min(col + 1, len(lines[line])))
            parsed.findings.error("yaml-too-deep", span,
                                  f"Nesting deeper than {MAX_DEPTH} levels; this document is not checked.")
            return line
        context = getattr(exc, "context", None)
        message = f"YAML syntax error: {problem}"
        if context:
            message += f" ({context})"
        hint = _syntax_hint(lines, line, problem)
        if hint:
            message += f". {hint}"
        parsed.findings.error("yaml-syntax", Span(line, col, line, min(col + 1, len(lines[line]))), message)
        return line
    return None


def _lone_surrogates(raw: str, span: Span, findings: Findings) -> str:
    """A double-quoted scalar's lone surrogates (`"\\ud83d"` without its pair) as U+FFFD, with a warning: js-yaml
    keeps them, but no UTF-8 text holds one (a run's labels and files, a provider's request), and a lone one
    is a broken character, not what the author meant (docs/reference-differences.md)."""
    first = _SURROGATE.search(raw)
    assert first is not None
    findings.warning(
        "invalid-character", span,
        f"\\u{ord(first.group()):04x} is half of a UTF-16 surrogate pair, not a character: it is read as U+FFFD "
        "(Weval and AgentV keep the lone half). Write the whole pair, e.g. \"\\ud83d\\ude00\" for \U0001F600.")
    return _SURROGATE.sub("\ufffd", raw)


def _scalar_lines(text: str) -> list[tuple[int, int, int, int, str | None]]:
    """yaml_feed's ScalarLines: the multi-line scalars of `text`, read as the real parse reads it: after a
    syntax error, from the next document marker on (the lines in between are no scalar of any document)."""
    import yaml

    _Parser = globals().get("_Parser") or _load_parser()
    lines = text.split("\n")
    found: list[tuple[int, int, int, int, str | None]] = []
    ScalarEvent = yaml.ScalarEvent
    first = 0
    # restarted as a real parse is, reading the lines from the marker (joining the rest of the text for each
    # broken document was quadratic)
    restarts = _Resumed(lines, 0, len(lines), _other_breaks(text))
    restarts.fed = True  # these lines are what libyaml reads
    bom = text.startswith("\ufeff")
    for _ in range(MAX_RESUMES):
        if first:
            parser, remark = _Parser(_LineChunks(restarts, first)), restarts.remarker(first)
        else:
            parser = _Parser(text)
            remark = _remarker(text, bom) if bom or restarts.starts is not None else None
        try:
            while (event := parser.get_event()) is not None:
                if type(event) is ScalarEvent:
                    start: Any = event.start_mark
                    end: Any = event.end_mark
                    if remark is not None:
                        start, end = remark(start), remark(end)
                    if start.line != end.line:
                        found.append((start.line + first, start.column, end.line + first, end.column,
                                      event.style or None))
            return found
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            if mark is not None and remark is not None:
                mark = remark(mark)
            nxt = _next_document_start(lines, first + max(1, mark.line if mark is not None else 0))
            if nxt is None:
                return found
            first = nxt
    return found


def tab_lines_agentv_refuses(text: str) -> list[int]:
    """The blank lines holding a tab (0-based) that AgentV's YAML parser (the `yaml` package, 2.8.2) refuses
    and js-yaml reads as blank: inside a multi-line scalar (or after a block scalar's content), with fewer
    leading spaces than the scalar needs there: its content's indentation for a block scalar, one more than
    the column of the block collection holding it for a plain or quoted one (BAD_INDENT, TAB_AS_INDENT,
    MISSING_CHAR). Read from libyaml's events on the text with every such line blank, up to its first
    error; a text with other line breaks than `\\n` is not read (an empty list)."""
    if "\t" not in text or text.count("\r") != text.count("\r\n"):
        return []
    import yaml

    blanked, numbers = all_tab_lines_blank(text)
    if not numbers:
        return []
    lines, written, tabbed = blanked.split("\n"), text.split("\n"), set(numbers)
    _Parser = globals().get("_Parser") or _load_parser()
    parser = _Parser(blanked)
    refused: set[int] = set()
    blocks: list[int] = []  # the columns of the block collections holding the next event
    kinds: list[bool] = []  # for each open collection: whether it is a block one
    try:
        while (event := parser.get_event()) is not None:
            kind = type(event)
            if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                block = not event.flow_style
                kinds.append(block)
                if block:
                    blocks.append(event.start_mark.column)
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                if kinds.pop():
                    blocks.pop()
            elif kind is yaml.ScalarEvent and event.start_mark.line != event.end_mark.line:
                sl, el, ec = event.start_mark.line, event.end_mark.line, event.end_mark.column
                if event.style in ("|", ">"):
                    last = el if ec else el - 1
                    content = [i for i in range(sl + 1, last + 1) if i < len(lines) and lines[i].strip()]
                    if not content:
                        continue
                    need = len(lines[content[0]]) - len(lines[content[0]].lstrip(" "))
                    while last + 1 < len(written) and (last + 1 in tabbed or not written[last + 1].strip()):
                        last += 1  # a tab line with a comment ends it for libyaml, not for the yaml package
                else:
                    last, need = el, (blocks[-1] if blocks else -1) + 1
                for i in numbers[bisect_right(numbers, sl):bisect_right(numbers, last)]:
                    if len(written[i]) - len(written[i].lstrip(" ")) < need:  # the spaces before its tab
                        refused.add(i)
    except yaml.YAMLError:
        pass  # a syntax error of ours too (or of the lines blanked here, which js-yaml reads as content)
    return sorted(refused)


def _fed_lines(lines: list[str], first: int, end: int) -> tuple[list[str], bool]:
    """`lines` with lines `first` to `end` as libyaml reads them (yaml_feed.fed_text), and whether their
    surrogate escapes were swapped: the same object when none of them changes."""
    if not any("\\" in lines[i] or "\t" in lines[i] for i in range(first, end)):
        return lines, False
    text = _lines_text(lines, first, end)
    fed, swapped = fed_text(text, _scalar_lines)
    if fed == text:
        return lines, swapped
    whole = (_lines_text(lines, 0, first) if first else "") + fed + _lines_text(lines, end, len(lines))
    return (cast(list[str], Lines(whole)) if type(lines) is Lines else whole.split("\n")), swapped


def _reader_mark(text: str, position: int) -> _Mark:
    """The place of libyaml's reader error (a control character, U+FFFE…) from its offset: in UTF-8 bytes
    (libyaml reads the text as UTF-8), or in characters from the pure-Python reader."""
    if _OFFSETS_IN_BYTES and not text.isascii():
        position = len(text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "ignore"))
    position = max(0, min(position, len(text)))
    line = text.count("\n", 0, position)
    return _Mark(line, position - (text.rfind("\n", 0, position) + 1), position)


def _syntax_hint(lines: list[str], line: int, problem: str) -> str | None:
    """Name the common cause of the message libyaml gives for an unquoted ': ' in a value."""
    if "mapping values are not allowed" in problem and 0 <= line < len(lines):
        return "A value that contains ': ' must be quoted, e.g. title: \"Part 1: Overview\""
    return None


# --- plain values -------------------------------------------------------------------------------------

def to_python(node: Node | None, budget: int = MAX_EXPANDED_NODES,
              scalar: Callable[[Scalar], Any] | None = None) -> Any:
    """The plain value of a node (aliases expanded). Mapping keys become strings, as in JSON.

    `scalar` gives the value of each scalar when the caller wants something else than `.value`
    (AgentV's `${{ VAR }}` interpolation).
    """
    return _Plain(budget, scalar).conv(node)


class _Plain:
    """to_python's walk. A method on an object, not a nested function that calls itself: that closure is
    a reference cycle, which only the cyclic collector frees, and the `evalspec` process runs with the
    collector off (cli.main), so every converted value left one behind (a 100,000-prompt blueprint:
    ~100 MB, ~1 KB a prompt)."""

    __slots__ = ("left", "scalar")

    def __init__(self, budget: int, scalar: Callable[[Scalar], Any] | None) -> None:
        self.left = budget
        self.scalar = scalar

    def conv(self, n: Node | None) -> Any:
        self.left -= 1
        if self.left < 0:
            raise ValueError("document too large to convert")
        if n is None:
            return None
        if isinstance(n, Scalar):
            return n.value if self.scalar is None else self.scalar(n)
        if isinstance(n, Sequence):
            return [self.conv(i) for i in n.items]
        if isinstance(n, Mapping):
            out: dict[str, Any] = {}
            for k, v in n.pairs:
                key = k.value if isinstance(k, Scalar) else str(self.conv(k))
                out[key if isinstance(key, str) else _key_text(key)] = self.conv(v)
            return out
        return None


def _key_text(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    return str(key)


def node_type_name(node: Node | None) -> str:
    """How a message names what was found: 'a string', 'a list', 'a mapping', 'a number', 'null'."""
    if node is None:
        return "nothing"
    if isinstance(node, Mapping):
        return "a mapping"
    if isinstance(node, Sequence):
        return "a list"
    value = node.value  # type: ignore[attr-defined]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string"


def is_str(node: Node | None) -> TypeGuard[Scalar]:
    return isinstance(node, Scalar) and isinstance(node.value, str)


def is_number(node: Node | None) -> TypeGuard[Scalar]:
    return (isinstance(node, Scalar) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool))


def is_null(node: Node | None) -> bool:
    return node is None or (isinstance(node, Scalar) and node.value is None)


def truthy(node: Node | None) -> bool:
    """JavaScript truthiness of a node's value, as the reference's detection uses."""
    if node is None:
        return False
    if isinstance(node, (Mapping, Sequence)):
        return True
    value = node.value  # type: ignore[attr-defined]
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value) or value is True

