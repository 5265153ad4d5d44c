"""Where the items of a block list start, for parsing it one item at a time (source.py).

An item starts at a line that begins with `- ` at the items' column; such a line is found with a look at
each line's first characters, which is all a clean file ever needs. But YAML lets a quoted scalar go on
over lines at any indentation, and a plain scalar inside a flow collection too, so a line can look like
an item and be the middle of one (`prompt: "hello⏎- world"` is the one string `hello - world`): cut
there, both parts are syntax errors that the whole file does not have.

Such a cut always shows: the part before it ends inside an open quote or bracket, so it does not parse.
Only then (a part that did not parse) are libyaml's tokens read from that item's first line, to the
first `- ` token at the items' column past the part's end: the lines that looked like items in between
are not, and are dropped. The tokens say exactly what a whole parse reads (the same scanner), and each
line is scanned at most once per parse (a scan never starts before the end of an earlier one), so a
broken file costs one token scan at most, and a clean one none. A file whose last item does not parse
has its whole list scanned once, up front, in a streamed parse: the list's span ends with that item
(`last_start`).
"""

from __future__ import annotations

from array import array
from typing import Any

DROPPED = -1  # a start found not to be one (kept in place: indexes of the others do not move)


class _LineStream:
    """Lines `start` to `end` of `lines` as a stream libyaml reads, a few lines first, then more at each
    read: a scan usually stops a line or two past one item, and must not copy the rest of a 32 MB file."""

    __slots__ = ("at", "end", "lines", "name", "step")

    def __init__(self, lines: list[str], start: int, end: int, first: int) -> None:
        self.lines, self.at, self.end, self.step, self.name = lines, start, end, max(first, 8), "<unicode string>"

    def read(self, size: int = -1) -> str:
        start, stop = self.at, min(self.at + self.step, self.end)
        if start >= stop:
            return ""
        self.at, self.step = stop, min(self.step * 2, 4096)
        piece = "\n".join(self.lines[start:stop])
        # each line's break, the last one's too unless it is the file's last line (as source._lines_text)
        return piece + "\n" if stop < len(self.lines) else piece


class ItemBounds:
    """The first line of each item of a block list at column `indent` of `lines`, then the list's end
    (`starts`, in order). Made from the lines that look like items; `correct` and `correct_all` drop
    those that are not (set to DROPPED, so that every other keeps its index). The first start and the
    end are never dropped."""

    __slots__ = ("dropped", "indent", "lines", "scanned_to", "starts")

    def __init__(self, lines: list[str], starts: list[int] | array[int], indent: int) -> None:
        self.lines, self.starts, self.indent = lines, starts, indent
        self.scanned_to = -1  # lines before this were scanned already: no scan starts there again
        self.dropped: list[tuple[int, int]] = []  # what the last correction dropped: (index, start)

    def next(self, k: int) -> int:
        """The index of the start after `k` that was not dropped (the end's at the latest)."""
        starts = self.starts
        k += 1
        while starts[k] == DROPPED:
            k += 1
        return k

    def last(self) -> int:
        """The index of the last item's start (the one before the end), or 0 for an empty list."""
        k = len(self.starts) - 2
        while k > 0 and self.starts[k] == DROPPED:
            k -= 1
        return max(k, 0)

    def correct(self, k: int) -> bool:
        """The item at index `k` did not parse: if it was cut at a line inside a scalar or collection,
        drop the starts up to the item's real end. True when any was dropped: item `k` is then longer
        and must be parsed again, and if it still does not parse, the item is broken and the correction
        undone (`restore`), so that the items after it are read on their own (a bracket never closed
        would take every later line into the item)."""
        starts = self.starts
        start = starts[k]
        if start < self.scanned_to:
            return False
        found, reach = self._scan(start, starts[self.next(k)])
        self.scanned_to = max(reach, start + 1)
        dropped = self.dropped = []
        j, last = k + 1, len(starts) - 1
        while j < last and starts[j] < reach:
            if starts[j] != DROPPED and starts[j] not in found:
                dropped.append((j, starts[j]))
                starts[j] = DROPPED
            j += 1
        return bool(dropped)

    def restore(self) -> None:
        """Undo the last correction (the longer item did not parse either)."""
        for j, line in self.dropped:
            self.starts[j] = line
        self.dropped = []

    def last_start(self) -> int | None:
        """Where the last item really starts, when the list's last item did not parse (a streamed parse needs
        it first, for the list's span; the bounds are left as they are, each item is corrected as it is
        read): the whole list's tokens are scanned. None when they do not reach its end."""
        starts = self.starts
        if len(starts) < 2:
            return None
        found, reach = self._scan(starts[0], None)
        return max(found) if found and reach >= starts[-1] else None

    def _scan(self, start: int, past: int | None) -> tuple[set[int], int]:
        """libyaml's tokens from line `start` on: the lines of the `- ` tokens at the items' column, up to
        the first at or after line `past` (None: to the end), and the line the scan stopped at (an error's,
        or the end's)."""
        import yaml  # here: a clean file is never scanned (PyYAML loads at its first use)

        try:  # libyaml's scanner; the pure-Python one has the same API
            from yaml.cyaml import CParser as _Scanner  # type: ignore[attr-defined]  # the stubs do not re-export it
        except ImportError:  # pragma: no cover - wheels ship libyaml on every platform we support
            from yaml.loader import BaseLoader as _Scanner  # type: ignore[assignment]  # the same get_token
        _BlockEntry, _StreamEnd = yaml.BlockEntryToken, yaml.StreamEndToken
        indent, end = self.indent, self.starts[-1]
        found: set[int] = set()
        reach = end
        scanner: Any = _Scanner(_LineStream(self.lines, start, end, (past or start) - start + 2))
        tokens = 0
        try:
            while True:
                tokens += 1
                token = scanner.get_token()
                if token is None or type(token) is _StreamEnd:
                    break
                if type(token) is _BlockEntry and token.start_mark.column == indent:
                    line = token.start_mark.line + start
                    found.add(line)
                    if past is not None and line >= past:  # an item starts here for sure: stop
                        reach = line
                        break
        except yaml.YAMLError as exc:  # a real error: what the scan read up to it holds
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            reach = min(end, mark.line + start) if mark is not None else start
        finally:
            del scanner
        return found, reach
