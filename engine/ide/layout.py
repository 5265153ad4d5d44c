"""Where the documents of a file start, which one is a Weval header, where each prompt is.

Computed once per `Analysis` (kept in its `memo`) from the text and the located tree, so
completion and hover at many positions of one version of a file pay for it once. Only C-speed
string searches run over the whole text; nothing here walks all the lines in Python.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..detect import FileKind
from ..registry.weval import PROMPT_MARKERS_OURS
from ..source import Document, Sequence

if TYPE_CHECKING:
    from ..analysis import Analysis

# Possessive runs (`*+`): every one of these is matched once, in one pass. A lazy key before
# `[ \t]*:` was quadratic in trailing spaces, and `#[^\n]*` before `\r?\n` could take or leave each
# line's CR, exponential in CRLF comment lines (26 of them took minutes).
_ROOT_KEY = re.compile(r"""("[^"]*+"|'[^']*+'|[^\s#'"\-?:][^:#]*+)[ \t]*+:(?=[ \t\r]|$)""")
_LINES_BEFORE_CONTENT = re.compile(r"(?:[ \t]*+(?:[#%][^\n]*+)?\r?\n)*+\Z")


@dataclass
class Layout:
    doc_starts: list[int]  # the first line of each document (its `---` line when it has one)
    doc_offsets: list[int]  # the same, as offsets in the text
    tree_docs: dict[int, Document] = field(default_factory=dict)  # document index -> parsed document
    header_doc: int | None = None  # Weval: the document holding the header
    header_has_prompts: bool = False  # Weval: the header holds the prompts under `prompts:`
    prompt_starts: list[int] = field(default_factory=list)  # Weval: first line of each prompt
    prompt_nodes: list[Any] = field(default_factory=list)

    def document_of(self, line: int) -> int:
        return max(0, bisect_right(self.doc_starts, line) - 1)

    def doc_range(self, index: int, n_lines: int) -> tuple[int, int]:
        """First and one-past-last line of a document."""
        end = self.doc_starts[index + 1] if index + 1 < len(self.doc_starts) else n_lines
        return self.doc_starts[index], end


def layout(analysis: Analysis) -> Layout:
    return analysis.memoised("ide.layout", _compute)


def _compute(analysis: Any) -> Layout:
    if analysis.parsed.too_large:  # not looked at: its lines are one empty line (source.parse_yaml)
        return Layout([0], [0])
    text: str = analysis.text
    starts: list[int] = []
    offsets: list[int] = []
    line, pos = 0, 0
    at = 0 if _is_marker(text, 0) else text.find("\n---")
    while at >= 0:
        start = at if at == 0 and text.startswith("---") else at + 1
        if _is_marker(text, start):
            line += text.count("\n", pos, start)
            pos = start
            starts.append(line)
            offsets.append(start)
        at = text.find("\n---", start + 1)
    if not starts or (starts[0] != 0 and not _LINES_BEFORE_CONTENT.match(text, 0, offsets[0])):
        starts.insert(0, 0)
        offsets.insert(0, 0)
    out = Layout(starts, offsets)
    for doc in analysis.parsed.documents:
        out.tree_docs[out.document_of(doc.span.start_line)] = doc
    if analysis.kind is FileKind.WEVAL:
        _weval(analysis, out)
    return out


def _is_marker(text: str, at: int) -> bool:
    """A `---` document marker starts at `at` (str.find, not a multi-line regex: this runs on every
    version of a large file, and `^` regexes try every position)."""
    return text.startswith("---", at) and (at + 3 == len(text) or text[at + 3] in " \t\r\n")


def _weval(analysis: Any, out: Layout) -> None:
    result = analysis.weval
    first = out.tree_docs.get(0)
    if result is not None and first is not None:
        header = result.header_node
        if header is not None:
            out.header_doc = out.document_of(header.span.start_line)
            out.header_has_prompts = isinstance(header.get("prompts"), Sequence)
        nodes = [n for n in result.prompt_nodes if n is not None]
        out.prompt_nodes = nodes
        out.prompt_starts = [n.span.start_line for n in nodes]
        return
    if result is not None:
        out.prompt_nodes = list(result.prompt_nodes)
        out.prompt_starts = [n.span.start_line for n in out.prompt_nodes]
    # The first document does not parse: decide from its top-level keys, as the checker would.
    keys: list[str] = []
    lines = analysis.parsed.lines
    begin, end = out.doc_starts[0], out.doc_starts[1] if len(out.doc_starts) > 1 else len(lines)
    for i in range(begin, end):
        s = lines[i]
        if not s or s[0] in " \t#\r" or s.startswith("---"):
            continue
        if s[0] == "-" and (len(s) == 1 or s[1] in " \t\r"):
            if not keys:
                return  # a list of prompts
            continue
        m = _ROOT_KEY.match(s)
        if m:
            keys.append(m.group(1).rstrip(" \t").strip("'\""))
            if keys[-1] == "prompts":
                break  # the single-mapping form: the rest is its prompts
    if "prompts" in keys:
        out.header_doc, out.header_has_prompts = 0, True
    elif not any(k in PROMPT_MARKERS_OURS for k in keys):
        out.header_doc = 0
