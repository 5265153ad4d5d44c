"""text_lines.Lines reads as `text.split("\\n")` does: lengths, lines, negative indexes, slices, iteration,
whatever the size of the pieces the text is cut into while its lines are counted."""

from __future__ import annotations

import random

import pytest

from evalspec import text_lines
from evalspec.text_lines import Lines

TEXTS = ["", "\n", "a", "a\n", "\n\n", "ab\ncd\n\nef", "x\r\ny\n", "é\n🙂\n\u2028x"]


@pytest.mark.parametrize("piece", [1 << 20, 7, 1], ids=["one-piece", "pieces", "a-piece-a-line"])
def test_lines_read_as_the_split_text(piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_lines, "_PIECE", piece)
    rng = random.Random(7)
    texts = TEXTS + ["".join(rng.choice("ab\n") for _ in range(rng.randint(0, 40))) for _ in range(300)]
    for text in texts:
        expected = text.split("\n")
        lines = Lines(text)
        assert len(lines) == len(expected) and bool(lines)
        assert list(lines) == expected and lines == expected
        assert [lines[i] for i in range(len(expected))] == expected
        assert [lines[-i] for i in range(1, len(expected) + 1)] == [expected[-i] for i in range(1, len(expected) + 1)]
        for a in range(-2, len(expected) + 2):
            for b in range(-2, len(expected) + 2):
                assert lines[a:b] == expected[a:b]
        assert lines[::2] == expected[::2] and lines[::-1] == expected[::-1]
        with pytest.raises(IndexError):
            lines[len(expected)]
        with pytest.raises(IndexError):
            lines[-len(expected) - 1]
