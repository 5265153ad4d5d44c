"""Positions as the client counts them, for one text: lines broken at "\\n", "\\r\\n" and a bare "\\r"
(bare_cr.py keeps where those are), columns in the encoding agreed with it (UTF-16 unless it offers
another), against the engine's lines at "\\n" and columns in code points. Used on both sides of the
language server; `range_json` gives an LSP range as JSON data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from ..findings import Span
from .bare_cr import BareCRs

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"  # LSP's PositionEncodingKind


class LineIndex:
    """Engine positions ↔ client positions in one text. `lines`: the text split at "\\n" (the CR of a
    CRLF stays on its line and no column is after it; a column past a line's end is its end); `crs`:
    its bare CRs, None (the common case) when it has none. A line the index does not hold (a file it
    could not read) passes through unchanged."""

    __slots__ = ("crs", "encoding", "lines")

    def __init__(self, lines: Sequence[str], encoding: str = UTF16, crs: BareCRs | None = None) -> None:
        self.lines = lines
        self.encoding = encoding
        self.crs = crs

    @classmethod
    def of_text(cls, text: str, encoding: str = UTF16) -> Self:
        return cls(text.split("\n"), encoding, BareCRs.of_text(text))

    def _line(self, line: int) -> str | None:
        return self.lines[line] if 0 <= line < len(self.lines) else None

    def client_point(self, line: int, col: int) -> tuple[int, int]:
        """An engine (line, code-point column) as the client's (line, units)."""
        client_line, start, end = (line, 0, -1) if self.crs is None else self.crs.to_client(line, col)
        text = self._line(line)
        if text is None:
            return max(0, client_line), max(0, col)
        end = _segment_end(text, start, end)
        col = max(start, min(col, end))
        if self.encoding == UTF32 or text.isascii():
            return max(0, client_line), col - start  # the common case: a unit is a code point
        piece = text[start:col]
        if self.encoding == UTF8:
            return max(0, client_line), len(piece.encode("utf-8", "surrogatepass"))
        return max(0, client_line), len(piece.encode("utf-16-le", "surrogatepass")) // 2

    def engine_point(self, line: int, units: int) -> tuple[int, int]:
        """A client (line, units) as the engine's (line, code-point column); inside a character, its start."""
        engine_line, start, end = (line, 0, -1) if self.crs is None else self.crs.to_engine(line)
        text = self._line(engine_line)
        units = max(0, units)
        if text is None:
            return engine_line, units
        end = _segment_end(text, start, end)
        if self.encoding == UTF32 or text.isascii():
            return engine_line, min(start + units, end)
        utf8, seen = self.encoding == UTF8, 0
        for i in range(start, end):
            ch = text[i]
            width = len(ch.encode("utf-8", "surrogatepass")) if utf8 else (2 if ord(ch) > 0xFFFF else 1)
            if seen + width > units:
                return engine_line, i
            seen += width
        return engine_line, end

    def client_col(self, line: int, col: int) -> int:
        return self.client_point(line, col)[1]

    def engine_col(self, line: int, units: int) -> int:
        return self.engine_point(line, units)[1]

    def client_line(self, line: int, last: bool = False) -> int:
        """The client line of an engine line's start (`last`: of its end; a bare CR in it ends one)."""
        text = self._line(line)
        return line if self.crs is None else self.client_point(line, len(text) if last and text else 0)[0]

    def range_json(self, span: Span) -> dict[str, dict[str, int]]:
        """A span as an LSP range (JSON data)."""
        (sl, sc), (el, ec) = self.client_point(span[0], span[1]), self.client_point(span[2], span[3])
        return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}

    def point(self, position: Any) -> tuple[int, int]:
        """An LSP position (`line`, `character`) as the engine's (line, code-point column)."""
        return self.engine_point(position.line, position.character)

    def span(self, rng: Any) -> Span:
        """An LSP range (`start`, `end` positions) as the engine's span."""
        return Span(*self.point(rng.start), *self.point(rng.end))


def _segment_end(text: str, start: int, end: int) -> int:
    """Where a client line starting at `start` in engine line `text` ends: `end` (a bare CR), or, when
    it runs to the line's end (-1), before the CR of a CRLF."""
    if end >= 0:
        return end
    n = len(text)
    return n - 1 if start < n and text[-1] == "\r" else n
