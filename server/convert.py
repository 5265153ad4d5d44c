"""The boundary between engine data and LSP types: positions, ranges, diagnostics and edits.

The engine counts columns in Unicode code points; LSP counts them in the position encoding agreed at
`initialize` (UTF-16 unless the client offers another). The engine counts lines at "\\n"; LSP at a bare
"\\r" too (engine/ide/bare_cr.py keeps where those are). This module is the only place that converts between the
engine's positions and the client's, and the only place that builds lsprotocol objects out of engine
objects. lsprotocol is loaded only to build one (`position`, `range`): a worker's first check, which
answers JSON, does without it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import from_fs_path, to_fs_path

from evalspec.findings import Edit, Finding, Severity, Span, Tag
from evalspec.ide.bare_cr import BareCRs

if TYPE_CHECKING:
    from lsprotocol import types as lsp

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"  # lsp.PositionEncodingKind


class LineIndex:
    """Converts between engine positions (lines counted at "\\n", code-point columns) and client
    positions (lines counted at "\\n", "\\r\\n" and "\\r"; columns in the agreed encoding) for one text.

    `lines` are the text split on "\\n" (what the engine's spans count); the CR of a CRLF stays on its
    line and is part of the line break: no column is after it (a column past a line's end is its end).
    `crs`: the text's bare CRs (bare_cr.py), where the client's lines are not the engine's; None (the
    common case) when it has none.
    """

    __slots__ = ("crs", "encoding", "lines")

    def __init__(self, lines: Sequence[str], encoding: str = UTF16, crs: BareCRs | None = None) -> None:
        self.lines = lines
        self.encoding = encoding
        self.crs = crs

    @classmethod
    def of_text(cls, text: str, encoding: str = UTF16) -> LineIndex:
        return cls(text.split("\n"), encoding, BareCRs.of_text(text))

    def _line(self, line: int) -> str | None:
        return self.lines[line] if 0 <= line < len(self.lines) else None

    def client_col(self, line: int, col: int) -> int:
        """Code points → client units. Lines the index does not hold (a file it could not read)
        pass through unchanged rather than collapsing to column 0."""
        if self.crs is not None:
            return self.client_point(line, col)[1]
        text = self._line(line)
        if text is None:
            return max(0, col)
        n = len(text)
        if col >= n:
            col = n - 1 if n and text[-1] == "\r" else n
        elif col < 0:
            col = 0
        if self.encoding == UTF32 or text.isascii():
            return col  # the common case: every unit is one code point
        return self._units(text, 0, col)

    def _units(self, text: str, start: int, col: int) -> int:
        """The client units of text[start:col]."""
        if self.encoding == UTF32 or text.isascii():
            return col - start
        piece = text[start:col]
        if self.encoding == UTF8:
            return len(piece.encode("utf-8", "surrogatepass"))
        return len(piece.encode("utf-16-le", "surrogatepass")) // 2

    def engine_col(self, line: int, units: int) -> int:
        """Client units → code points. A position inside a character snaps to its start."""
        if self.crs is not None:
            return self.engine_point(line, units)[1]
        text = self._line(line)
        units = max(0, units)
        if text is None:
            return units
        end = len(text) - 1 if text[-1:] == "\r" else len(text)
        if self.encoding == UTF32 or text.isascii():
            return min(units, end)
        return self._code_points(text, 0, end, units)

    def _code_points(self, text: str, start: int, end: int, units: int) -> int:
        """The index in `text` `units` client units after `start`, at most `end`."""
        if self.encoding == UTF32 or text.isascii():
            return min(start + units, end)
        utf8 = self.encoding == UTF8
        seen = 0
        for i in range(start, end):
            ch = text[i]
            width = len(ch.encode("utf-8", "surrogatepass")) if utf8 else (2 if ord(ch) > 0xFFFF else 1)
            if seen + width > units:
                return i
            seen += width
        return end

    def _segment(self, text: str, start: int, end: int) -> int:
        """Where a client line that starts at `start` in engine line `text` ends: `end` (a bare CR), or,
        when it runs to the line's end (-1), before the CR of a CRLF."""
        if end >= 0:
            return end
        n = len(text)
        return n - 1 if start < n and text[-1] == "\r" else n

    def client_point(self, line: int, col: int) -> tuple[int, int]:
        """An engine (line, code-point column) as the client's (line, units)."""
        crs = self.crs
        if crs is None:
            return max(0, line), self.client_col(line, col)
        client_line, start, end = crs.to_client(line, col)
        text = self._line(line)
        if text is None:
            return max(0, client_line), max(0, col)
        end = self._segment(text, start, end)
        return max(0, client_line), self._units(text, start, max(start, min(col, end)))

    def engine_point(self, line: int, units: int) -> tuple[int, int]:
        """A client (line, units) as the engine's (line, code-point column)."""
        crs = self.crs
        if crs is None:
            return line, self.engine_col(line, units)
        engine_line, start, end = crs.to_engine(line)
        text = self._line(engine_line)
        if text is None:
            return engine_line, max(0, units)
        return engine_line, self._code_points(text, start, self._segment(text, start, end), max(0, units))

    def client_line(self, line: int, last: bool = False) -> int:
        """The client line of an engine line's start (`last`: of its end; a bare CR in it ends one)."""
        if self.crs is None:
            return line
        text = self._line(line)
        return self.client_point(line, len(text) if last and text is not None else 0)[0]

    def position(self, line: int, col: int) -> lsp.Position:
        from lsprotocol.types import Position

        line, character = self.client_point(line, col)
        return Position(line=line, character=character)

    def range(self, span: Span) -> lsp.Range:
        from lsprotocol.types import Range

        return Range(start=self.position(span.start_line, span.start_col),
                         end=self.position(span.end_line, span.end_col))

    def range_json(self, span: Span) -> dict[str, dict[str, int]]:
        """`range` as JSON data (for answers encoded without lsprotocol objects)."""
        sl, sc, el, ec = span
        if self.crs is not None:
            (sl, sc), (el, ec) = self.client_point(sl, sc), self.client_point(el, ec)
            return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}
        return {"start": {"line": max(0, sl), "character": self.client_col(sl, sc)},
                "end": {"line": max(0, el), "character": self.client_col(el, ec)}}

    def point(self, position: lsp.Position) -> tuple[int, int]:
        """An LSP position as the engine's (line, code-point column)."""
        return self.engine_point(position.line, position.character)

    def span(self, rng: lsp.Range) -> Span:
        sl, sc = self.point(rng.start)
        el, ec = self.point(rng.end)
        return Span(sl, sc, el, ec)


# --- URIs -------------------------------------------------------------------------------------------

def uri_of(path: str | Path) -> str:
    return from_fs_path(str(path)) or Path(path).as_uri()


def path_of(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


def finding_path(finding: Finding, analysed: Path | None) -> Path | None:
    """The file a finding belongs to: `finding.path` (relative to the analysed file) or the file itself."""
    if finding.path is None:
        return None
    p = Path(finding.path)
    if not p.is_absolute() and analysed is not None:
        p = analysed.parent / p
    return p


# --- diagnostics ------------------------------------------------------------------------------------

# lsp.DiagnosticSeverity and lsp.DiagnosticTag
_SEVERITY = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3, Severity.HINT: 4}
_TAG = {Tag.UNNECESSARY: 1, Tag.DEPRECATED: 2}
SOURCE = "evalspec"


def diagnostic_json(finding: Finding, index: LineIndex, uri: str) -> dict[str, Any]:
    """One finding as an LSP diagnostic (JSON data) in `uri`, the file the finding belongs to, indexed
    by `index`."""
    out: dict[str, Any] = {
        "range": index.range_json(finding.span),
        "message": finding.message,
        "severity": _SEVERITY.get(finding.severity, 1),
        "code": finding.code,
        "source": SOURCE,
    }
    from evalspec.finding_docs import doc_url  # (in the worker: the LSP process never loads the registry)

    url = (finding.extra.get("url") if finding.extra else None) or doc_url(finding.code)
    if isinstance(url, str):
        out["codeDescription"] = {"href": url}
    if finding.related:
        out["relatedInformation"] = [{"location": {"uri": uri, "range": index.range_json(r.span)},
                                      "message": r.message} for r in finding.related]
    tags = [_TAG[t] for t in finding.tags if t in _TAG]
    if tags:
        out["tags"] = tags
    return out


# --- edits ------------------------------------------------------------------------------------------

def workspace_edit_json(files: Iterable[tuple[str, int | None, LineIndex, Iterable[Edit]]],
                        document_changes: bool) -> dict[str, Any]:
    """Edits to documents, each (uri, version, its line index, its edits), as a WorkspaceEdit (JSON);
    versioned `documentChanges` when the client takes them, so an edit computed for an older text is
    refused rather than applied at the wrong place."""
    changes = [(uri, version, [{"range": index.range_json(e.span), "newText": e.new_text} for e in edits])
               for uri, version, index, edits in files]
    if document_changes:
        return {"documentChanges": [{"textDocument": {"uri": uri, "version": version}, "edits": edits}
                                    for uri, version, edits in changes]}
    return {"changes": {uri: edits for uri, _, edits in changes}}


# --- answers ----------------------------------------------------------------------------------------

def as_json(value: Any) -> bytes:
    """An answer as JSON: plain data, or lsprotocol objects (unstructured as pygls would)."""
    from evalspec import jsonio

    if (isinstance(value, list) and value and not isinstance(value[0], dict)) or not isinstance(value, (dict, list, str, int, float, type(None))):
        value = converter().unstructure(value)
    return jsonio.dumps_bytes(value)


@functools.cache
def converter() -> Any:
    """pygls's converter (lsprotocol objects <-> JSON data)."""
    from pygls.protocol import default_converter

    return default_converter()
