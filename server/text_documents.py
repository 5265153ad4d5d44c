"""Document text kept in step with the client: `apply_change` applies one didChange content change.

The server keeps each open document's text itself (`documents.py`) instead of reading pygls's copy:
pygls applies incremental edits on `TextDocument.lines`, built with `str.splitlines`, which also breaks
lines at form feeds, `\\x1c`–`\\x1e`, `\\x85`, `\\u2028` and `\\u2029`. LSP (and the engine) break lines only
at `\\n`, `\\r\\n` and `\\r`, so in a file holding one of those characters pygls's copy puts an edit below it
on the wrong line. pygls offers no setting for its document class; owning the text needs none.
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from .convert import LineIndex

_BREAK = re.compile(r"\r\n|\r|\n")
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
    first = _offset(text, start, encoding)
    last = _offset(text, end, encoding)
    return text[:first] + change.text + text[last:]


def _offset(text: str, position: lsp.Position, encoding: str) -> int:
    """The index in `text` of an LSP position."""
    line_start = 0
    if position.line > 0:
        for n, found in enumerate(_BREAK.finditer(text), 1):
            if n == position.line:
                line_start = found.end()
                break
        else:
            return len(text)  # past the last line
    content = _CONTENT.match(text, line_start)
    line = content.group() if content is not None else ""
    return line_start + LineIndex((line,), encoding).engine_col(0, position.character)
