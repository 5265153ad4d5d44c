"""The server's own copy of a document follows didChange as LSP counts lines and columns."""

import random
import time

from lsprotocol import types as lsp

from evalspec_lsp.documents import apply_change, apply_changes

UTF16, UTF8, UTF32 = lsp.PositionEncodingKind.Utf16, lsp.PositionEncodingKind.Utf8, lsp.PositionEncodingKind.Utf32


def change(sl: int, sc: int, el: int, ec: int, text: str) -> lsp.TextDocumentContentChangePartial:
    return lsp.TextDocumentContentChangePartial(
        range=lsp.Range(start=lsp.Position(line=sl, character=sc), end=lsp.Position(line=el, character=ec)),
        text=text)


def test_a_whole_document_change_replaces_the_text():
    assert apply_change("old", lsp.TextDocumentContentChangeWholeDocument(text="new"), UTF16) == "new"


def test_lines_break_only_at_lf_crlf_and_cr():
    text = "a\x0cb\u2028c\x85d\ne\r\nf\rg"
    assert apply_change(text, change(1, 0, 1, 1, "E"), UTF16) == "a\x0cb\u2028c\x85d\nE\r\nf\rg"
    assert apply_change(text, change(2, 0, 2, 1, "F"), UTF16) == "a\x0cb\u2028c\x85d\ne\r\nF\rg"
    assert apply_change(text, change(3, 1, 3, 1, "!"), UTF16) == "a\x0cb\u2028c\x85d\ne\r\nf\rg!"
    assert apply_change(text, change(0, 7, 1, 0, ""), UTF16) == "a\x0cb\u2028c\x85de\r\nf\rg"


def test_columns_count_in_the_agreed_encoding():
    text = "x: 😋 y\n"
    assert apply_change(text, change(0, 3, 0, 5, "🙂"), UTF16) == "x: 🙂 y\n"
    assert apply_change(text, change(0, 6, 0, 7, "Z"), UTF16) == "x: 😋 Z\n"
    assert apply_change(text, change(0, 8, 0, 9, "Z"), UTF8) == "x: 😋 Z\n"
    assert apply_change(text, change(0, 5, 0, 6, "Z"), UTF32) == "x: 😋 Z\n"


def test_positions_past_a_line_or_the_text_are_clamped():
    text = "ab\ncd"
    assert apply_change(text, change(0, 10, 0, 10, "!"), UTF16) == "ab!\ncd"
    assert apply_change(text, change(5, 0, 5, 0, "\nz"), UTF16) == "ab\ncd\nz"
    assert apply_change("ab\n", change(1, 0, 1, 0, "c"), UTF16) == "ab\nc"


def _partial(line: int, char: int, end_line: int, end_char: int, text: str) -> lsp.TextDocumentContentChangePartial:
    return lsp.TextDocumentContentChangePartial(
        range=lsp.Range(start=lsp.Position(line=line, character=char), end=lsp.Position(line=end_line, character=end_char)),
        text=text)


def test_many_changes_in_one_notification_give_the_text_one_by_one_gives() -> None:
    # apply_changes takes a list of lines past 8 changes: the same text as applying them in turn, whatever
    # the line breaks (CR LF split and joined by edits, CR then LF, U+2028 and NEL that are not breaks)
    rng = random.Random(15)
    units = ["a", "b", "\n", "\r", "\r\n", "😀", "é", " ", "\u2028", "\x85"]
    for _ in range(1500):
        text = "".join(rng.choice(units) for _ in range(rng.randint(0, 30)))
        changes: list[lsp.TextDocumentContentChangeEvent] = []
        for _ in range(rng.randint(9, 20)):
            new = "".join(rng.choice(units) for _ in range(rng.randint(0, 4)))
            if rng.random() < 0.03:
                changes.append(lsp.TextDocumentContentChangeWholeDocument(text=new))
            else:
                changes.append(_partial(rng.randint(0, 12), rng.randint(0, 8), rng.randint(0, 12), rng.randint(0, 8),
                                        new))
        for encoding in (UTF16, "utf-8", "utf-32"):
            one_by_one = text
            for change in changes:
                one_by_one = apply_change(one_by_one, change, encoding)
            assert apply_changes(text, changes, encoding) == one_by_one, (text, changes, encoding)


def test_a_change_on_every_line_of_a_big_file_costs_in_proportion() -> None:
    # The fifth attack run: one didChange with 50,000 changes going down a file (a multi-cursor edit
    # on every line) scanned the text to each line and copied it per change: a minute on the event loop.
    # The cost of 40,000 changes over 4,000 must be near 10 (linear), not near 100 (quadratic).
    def cost(n: int) -> float:
        text = "title: T\n" * n
        changes = [_partial(i, 9, i, 9, "#") for i in range(n)]
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            out = apply_changes(text, changes, UTF16)
            best = min(best, time.process_time() - started)
        assert out == "title: T#\n" * n
        return best
    assert cost(40_000) / cost(4_000) < 30
