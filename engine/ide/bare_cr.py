"""Lines as the client counts them in a text that holds a bare CR (a "\\r" not followed by "\\n").

LSP breaks lines at "\\n", "\\r\\n" and a lone "\\r", and so do clients (VS Code; Neovim sends "\\r" between
the lines of a `fileformat=mac` buffer). The engine's spans count lines at "\\n". Two things keep them in
step:

- An eval file is read with each bare CR as "\\n" (engine/line_breaks.as_read, in `analyze` for `check`,
  `run` and the language server alike, which hands it the client's text as it is; and for the YAML tests files a
  suite includes): one character for one, so every offset stays put. The engine's lines are then the
  client's, for its spans and for everything that reads the text line by line (completion and hover
  finding the key at the cursor, folding).
- JSON Lines and CSV are read as they are (a CR inside a record does not end it): their bare CRs are
  kept in `BareCRs`, through which LineIndex (line_index.py) turns the engine's lines into the
  client's.

U+2028, U+2029 and NEL are not line breaks in LSP, nor here.
"""

from __future__ import annotations

from bisect import bisect_right
from pathlib import Path

from ..line_breaks import BARE_CR, reads_bare_crs

BARE_CRS = "lsp.bare-crs"  # an analysis's memo key for the BareCRs of its text


def dataset_crs(text: str, path: Path | None) -> BareCRs | None:
    """The bare CRs of an open document the engine reads as it is (a JSON Lines or CSV file's), for
    LineIndex; None for every other file, whose bare CRs `analyze` reads as "\\n" itself
    (line_breaks.as_read), so nothing is scanned twice."""
    return None if reads_bare_crs(path) else BareCRs.of_text(text)


class BareCRs:
    """Where a text's bare CRs are, in the engine's lines: `after[i]` is (line, column just after it) of
    the i-th; `starts[i]` is the client line that starts after it (the engine's line plus the i bare CRs
    before it, plus one)."""

    __slots__ = ("after", "starts")

    def __init__(self, after: list[tuple[int, int]]) -> None:
        self.after = after
        self.starts = [line + i + 1 for i, (line, _) in enumerate(after)]

    @classmethod
    def of_text(cls, text: str) -> BareCRs | None:
        """The bare CRs of `text` (None when it holds none: the common case, one scan in C)."""
        if "\r" not in text:
            return None
        first = BARE_CR.search(text)
        if first is None:
            return None
        after: list[tuple[int, int]] = []
        line = line_start = pos = 0
        for m in BARE_CR.finditer(text, first.start()):
            at = m.start()
            breaks = text.count("\n", pos, at)
            if breaks:
                line += breaks
                line_start = text.rindex("\n", pos, at) + 1
            pos = at
            after.append((line, at + 1 - line_start))
        return cls(after)

    def to_client(self, line: int, col: int) -> tuple[int, int, int]:
        """An engine position as (client line, where that client line starts in the engine's line, the
        column it ends at): a position on a bare CR belongs to the client line the CR ends."""
        after = self.after
        i = bisect_right(after, (line, col))  # bare CRs before the position
        start = after[i - 1][1] if i and after[i - 1][0] == line else 0
        return line + i, start, self._end(i, line)

    def to_engine(self, client_line: int) -> tuple[int, int, int]:
        """A client line as (the engine's line, the column it starts at in it, the column it ends at)."""
        j = bisect_right(self.starts, client_line)  # bare CRs that end a line above it
        if j == 0:
            line, start = client_line, 0
        else:
            cr_line, cr_after = self.after[j - 1]
            first = self.starts[j - 1]
            # The client line the CR starts, then the engine's lines below it, broken at "\n" only
            # until the next bare CR.
            line, start = (cr_line, cr_after) if client_line == first else (cr_line + client_line - first, 0)
        return line, start, self._end(j, line)

    def _end(self, i: int, line: int) -> int:
        """Where the client line ends in engine line `line` when the next bare CR is the i-th: at that
        CR if it is on `line`, else at the line's end (-1)."""
        after = self.after
        return after[i][1] - 1 if i < len(after) and after[i][0] == line else -1

