"""A big text's lines without a string per line: `text.split("\\n")` as a sequence that slices each line
from the text when it is read.

Only each line's start is kept (8 bytes a line instead of a string object). A read costs a slice and a
Python call instead of a list index, so only a streamed parse of a large file (`check` and `run`,
source.parse_yaml) uses it; an editor's buffers and small files keep the list.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import overload

_PIECE = 1 << 20  # characters split at once while the lines are counted or iterated


class Lines(Sequence[str]):
    """`text.split("\\n")`, read-only: len, indexes (negative too), slices (a list), iteration."""

    __slots__ = ("_last", "_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts = _line_starts(text)
        # The last line read, (index, line): checks read one line again and again (a fix per item of a
        # long flow line), and a 4 MB line copied per read made that quadratic.
        self._last: tuple[int, str] = (-1, "")

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self._starts))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            if start >= stop:
                return []
            return self._text[self._starts[start]:self._end(stop - 1)].split("\n")
        starts = self._starts
        n = len(starts)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("line index out of range")
        last = self._last
        if last[0] == index:
            return last[1]
        line = self._text[starts[index]:self._end(index)]
        self._last = (index, line)
        return line

    def joined(self, start: int, end: int) -> str:
        """`"\\n".join(self[start:end])` for 0 ≤ start ≤ end ≤ len: one slice of the text."""
        if start >= end:
            return ""
        return self._text[self._starts[start]:self._end(end - 1)]

    def span_text(self, sl: int, sc: int, el: int, ec: int) -> str | None:
        """The text from column `sc` of line `sl` to column `ec` of line `el` (0 ≤ sl < el < len), as
        `"\\n".join([self[sl][sc:], *self[sl + 1:el], self[el][:ec]])` gives it, in one slice; None
        when a column is past its line's end (the join would cut there)."""
        starts = self._starts
        first, last = starts[sl], starts[el]
        if sc > starts[sl + 1] - 1 - first or ec > self._end(el) - last:
            return None
        return self._text[first + sc:last + ec]

    def _end(self, index: int) -> int:
        """Where line `index` ends (its line break, or the end of the text)."""
        return self._starts[index + 1] - 1 if index + 1 < len(self._starts) else len(self._text)

    def __iter__(self) -> Iterator[str]:
        for _, piece in _pieces(self._text):
            yield from piece.split("\n")

    def __bool__(self) -> bool:
        return True  # like text.split("\n"): always at least one line

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Lines):
            return self._text == other._text
        if isinstance(other, list):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __repr__(self) -> str:
        return f"<Lines: {len(self)} lines>"


def _pieces(text: str) -> Iterator[tuple[int, str]]:
    """(where it starts, the piece) of `text` cut at line breaks into pieces of about _PIECE characters,
    each without the break that ends it: split("\\n") of each, chained, is split("\\n") of the text."""
    pos, n = 0, len(text)
    while True:
        cut = text.find("\n", pos + _PIECE) if pos + _PIECE < n else -1
        if cut < 0:
            yield pos, text[pos:]
            return
        yield pos, text[pos:cut]
        pos = cut + 1


def _line_starts(text: str) -> array:
    starts = array("q")
    for base, piece in _pieces(text):
        # each line's start: the piece's start, then + (a line's length + its line break), summed in C
        starts.extend(accumulate(map((1).__add__, map(len, piece.split("\n")[:-1])), initial=base))
    return starts
