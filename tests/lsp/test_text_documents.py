"""The server's own copy of a document follows didChange as LSP counts lines and columns."""

from lsprotocol import types as lsp

from evalspec_lsp.text_documents import apply_change

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
