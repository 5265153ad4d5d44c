"""Document text kept in step with the client: `apply_change` applies one didChange content change.

The server keeps each open document's text itself (`documents.py`) instead of reading pygls's copy:
pygls applies incremental edits on `TextDocument.lines`, built with `str.splitlines`, which also breaks
lines at form feeds, `\\x1c`–`\\x1e`, `\\x85`, `\\u2028` and `\\u2029`. LSP (and the engine) break lines only
at `\\n`, `\\r\\n` and `\\r`, so in a file holding one of those characters pygls's copy puts an edit below it
on the wrong line. pygls offers no setting for its document class; owning the text needs none.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from lsprotocol import types as lsp

from .convert import LineIndex

_BREAK = re.compile(r"\r\n|\r|\n")
_LF = re.compile(r"\n")
_CONTENT = re.compile(r"[^\r\n]*")


def apply_change(text: str, change: lsp.TextDocumentContentChangeEvent, encoding: str) -> str:
    """`text` after one content change: a whole new text, or `range` replaced (positions counted in the
    client's `encoding`; a position past a line's end or past the last line is clamped to it)."""
    if not isinstance(change, lsp.TextDocumentContentChangePartial):
        return change.text
    start = change.range.start
    end = change.range.end
    if (end.line, end.character) < (start.line, start.character):
        start, end = end, start
    first_line = _line_start(text, start.line, 0)
    first = _offset(text, first_line, start, encoding)
    # The end's line counted on from the start's: one pass over the text, not two.
    last = _offset(text, _line_start(text, end.line - start.line, first_line) if first_line is not None else None,
                   end, encoding)
    return text[:first] + change.text + text[last:]


# More changes than this in one didChange are applied on a list of lines (`apply_changes`).
_MANY = 8


def apply_changes(text: str, changes: Sequence[lsp.TextDocumentContentChangeEvent], encoding: str) -> str:
    """`text` after a didChange's content changes, in order. A few are applied one by one on the text; many
    (a multi-cursor edit on every line of a 50,000-line file sends 50,000) on a list of its lines, where
    finding a line is an index and replacing it touches that line only: one by one, each change scanned
    the text down to its line and copied the whole text, and 50,000 changes going down a file took a
    minute on the server's event loop. Both give the same text (tests/lsp/test_text_documents.py)."""
    if len(changes) <= _MANY:
        for change in changes:
            text = apply_change(text, change, encoding)
        return text
    lines = _lines(text)
    for change in changes:
        if not isinstance(change, lsp.TextDocumentContentChangePartial):
            lines = _lines(change.text)
            continue
        start, end = change.range.start, change.range.end
        if (end.line, end.character) < (start.line, start.character):
            start, end = end, start
        first_line, first = _locate(lines, start, encoding)
        last_line, last = _locate(lines, end, encoding)
        new = lines[first_line][:first] + change.text + lines[last_line][last:]
        if first_line > 0 and new.startswith("\n") and lines[first_line - 1].endswith("\r"):
            first_line -= 1  # a CR ending the line above and this LF are one line break in the text
            new = lines[first_line] + new
        pieces = _lines(new)
        if last_line < len(lines) - 1:
            pieces.pop()  # `new` ends with the replaced last line's own break: the line after it follows
        lines[first_line:last_line + 1] = pieces
    return "".join(lines)


def _lines(text: str) -> list[str]:
    """`text` cut after each line break (`\r\n`, `\r`, `\n`): every piece but the last ends with its break;
    the last (maybe empty) is the last line, so there is one piece per LSP line."""
    out: list[str] = []
    pos = 0
    for m in (_BREAK if "\r" in text else _LF).finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    out.append(text[pos:])
    return out


def _locate(lines: list[str], position: lsp.Position, encoding: str) -> tuple[int, int]:
    """The line and the index in it of an LSP position (past a line's end: its end, before the break;
    past the last line: the end of the text)."""
    if position.line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    line_no = max(0, position.line)
    line = lines[line_no]
    content = line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith(("\r", "\n")) else line
    return line_no, LineIndex((content,), encoding).engine_col(0, position.character)


def _line_start(text: str, lines: int, start: int) -> int | None:
    """The index where the line `lines` lines below the one starting at `start` starts (None: past the
    last line). The breaks are skipped by islice, in C: a Python loop over the 240,000 lines of a
    4 MB file held the event loop for 0.1 s per edit."""
    if lines <= 0:
        return start
    breaks = _BREAK if "\r" in text else _LF  # a one-character pattern is searched for twice as fast
    found = next(itertools.islice(breaks.finditer(text, start), lines - 1, None), None)
    return found.end() if found is not None else None


def _offset(text: str, line_start: int | None, position: lsp.Position, encoding: str) -> int:
    """The index in `text` of an LSP position on the line starting at `line_start`."""
    if line_start is None:
        return len(text)  # past the last line
    content = _CONTENT.match(text, line_start)
    line = content.group() if content is not None else ""
    return line_start + LineIndex((line,), encoding).engine_col(0, position.character)
