"""`lines.closing_quote` and the inline comment cut jump with str.find (issue 15: a 4 MB line); they
agree with a character-by-character reading on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.ide.lines import _value, closing_quote


def reference_closing_quote(text: str, start: int) -> int:
    q, i = text[start], start + 1
    while i < len(text):
        c = text[i]
        if q == '"' and c == "\\":
            i += 2
            continue
        if c == q:
            if q == "'" and i + 1 < len(text) and text[i + 1] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


texts = st.text(alphabet="\"'\\ #a[]", max_size=30)


@settings(max_examples=3000, deadline=None)
@given(texts)
def test_closing_quote_reads_as_a_person_does(text):
    for start, c in enumerate(text):
        if c in "\"'":
            assert closing_quote(text, start) == reference_closing_quote(text, start)


@given(st.text(alphabet=" #a\t", max_size=30))
def test_the_comment_cut_is_the_first_space_hash(text):
    value = "x" + text
    cut = value.find(" #")
    assert _value(value)[0] == (value if cut < 0 else value[:cut]).rstrip()


def test_a_million_escapes_and_a_long_line_of_words():
    escaped = '"' + '\\"' * 1_000_000 + 'x"'
    assert closing_quote(escaped, 0) == len(escaped) - 1
    assert closing_quote(escaped[:-1], 0) == -1
    words = "word " * 800_000 + "# note"
    assert _value(words)[0] == ("word " * 800_000).rstrip()
