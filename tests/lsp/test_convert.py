"""The one place that converts engine positions and findings into LSP ones."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from evalspec.findings import Edit, Finding, Related, Severity, Span, Tag
from evalspec_lsp import convert
from evalspec_lsp.convert import UTF8, UTF16, UTF32, LineIndex

# "a😀é b": 'a' (1 unit everywhere), '😀' (astral: 2 UTF-16 units, 4 UTF-8 bytes), 'é' (2 UTF-8 bytes).
LINE = "a😀é b"


@pytest.mark.parametrize(("encoding", "units"), [
    (UTF16, [0, 1, 3, 4, 5, 6]),
    (UTF8, [0, 1, 5, 7, 8, 9]),
    (UTF32, [0, 1, 2, 3, 4, 5]),
])
def test_columns_both_ways(encoding, units):
    index = LineIndex(["x", LINE], encoding)
    for col, unit in enumerate(units):
        assert index.client_col(1, col) == unit
        assert index.engine_col(1, unit) == col


def test_a_position_inside_a_character_snaps_to_its_start():
    index = LineIndex([LINE], UTF16)
    assert index.engine_col(0, 2) == 1  # between the two halves of the emoji
    assert LineIndex([LINE], UTF8).engine_col(0, 3) == 1


def test_columns_past_the_end_clamp_and_unknown_lines_pass_through():
    index = LineIndex([LINE], UTF16)
    assert index.client_col(0, 99) == 6
    assert index.engine_col(0, 99) == 5
    assert LineIndex([], UTF16).client_col(5, 12) == 12  # a file that could not be read


def test_carriage_returns_stay_out_of_ascii_columns():
    index = LineIndex.of_text("key: 😀\r\nnext: 1\r\n", UTF16)
    assert index.range(Span(0, 5, 0, 6)) == lsp.Range(start=lsp.Position(0, 5), end=lsp.Position(0, 7))
    assert index.point(lsp.Position(1, 4)) == (1, 4)


def test_finding_to_diagnostic():
    finding = Finding(
        "duplicate-prompt-id", Severity.ERROR, "Duplicate prompt id 'a'.", Span(3, 6, 3, 7),
        related=(Related(Span(1, 6, 1, 7), "'a' first used here"),), tags=(Tag.DEPRECATED, Tag.UNNECESSARY),
        extra={"url": "https://example.org/rules#duplicate-prompt-id"})
    d = convert.diagnostic_json(finding, LineIndex(["", "- id: a", "", "- id: a"], UTF16), "file:///x.yml")
    assert d["range"] == {"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 7}}
    assert (d["code"], d["source"], d["severity"]) == ("duplicate-prompt-id", "evalspec", lsp.DiagnosticSeverity.Error)
    assert d["tags"] == [lsp.DiagnosticTag.Deprecated, lsp.DiagnosticTag.Unnecessary]
    [related] = d["relatedInformation"]
    assert related["location"] == {"uri": "file:///x.yml", "range": {"start": {"line": 1, "character": 6},
                                                                     "end": {"line": 1, "character": 7}}}
    assert d["codeDescription"]["href"] == "https://example.org/rules#duplicate-prompt-id"


@pytest.mark.parametrize(("severity", "expected"), [
    (Severity.WARNING, lsp.DiagnosticSeverity.Warning), (Severity.INFO, lsp.DiagnosticSeverity.Information),
    (Severity.HINT, lsp.DiagnosticSeverity.Hint)])
def test_severities(severity, expected):
    d = convert.diagnostic_json(Finding("c", severity, "m", Span(0, 0, 0, 1)), LineIndex(["x"]), "file:///x")
    assert d["severity"] == expected
    assert "relatedInformation" not in d and "tags" not in d


def test_edits_with_and_without_document_changes():
    index = LineIndex(["  shuld:"])
    edits = (Edit(Span(0, 2, 0, 7), "should"),)
    versioned = convert.workspace_edit_json([("file:///x", 4, index, edits)], document_changes=True)
    [change] = versioned["documentChanges"]
    assert change["textDocument"] == {"uri": "file:///x", "version": 4}
    assert change["edits"] == [{"range": {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 7}},
                                "newText": "should"}]
    plain = convert.workspace_edit_json([("file:///x", 4, index, edits)], document_changes=False)
    assert list(plain["changes"]) == ["file:///x"]


def test_finding_paths():
    base = convert.path_of("file:///work/evals/suite.eval.yaml")
    outside = Finding("c", Severity.ERROR, "m", Span(0, 0, 0, 1), path="/work/evals/cases.yaml")
    relative = Finding("c", Severity.ERROR, "m", Span(0, 0, 0, 1), path="sub/cases.yaml")
    assert str(convert.finding_path(outside, base)) == "/work/evals/cases.yaml"
    assert str(convert.finding_path(relative, base)) == "/work/evals/sub/cases.yaml"
    assert convert.finding_path(Finding("c", Severity.ERROR, "m", Span(0, 0, 0, 1)), base) is None


# --- lines the client breaks at a bare CR -----------------------------------------------------------

def _positions(text: str, encoding: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every offset of `text` that is not inside a line break, as (engine position, client position),
    walked character by character: the engine breaks lines at "\\n" only and counts code points; the
    client breaks at "\\n", "\\r\\n" and "\\r" (not U+2028, U+2029, NEL) and counts in `encoding`."""
    width = {UTF8: lambda ch: len(ch.encode("utf-8")), UTF16: lambda ch: 2 if ord(ch) > 0xFFFF else 1,
             UTF32: lambda ch: 1}[encoding]
    out = []
    engine = [0, 0]
    client = [0, 0]
    for i, ch in enumerate(text + "\0"):
        crlf_middle = i > 0 and text[i - 1] == "\r" and ch == "\n"
        if not crlf_middle:
            out.append(((engine[0], engine[1]), (client[0], client[1])))
        if ch == "\n":
            engine, client = [engine[0] + 1, 0], [client[0] + 1, 0]
        else:
            engine[1] += 1
            if ch == "\r" and text[i + 1:i + 2] != "\n":
                client = [client[0] + 1, 0]  # a bare CR (the CR of a CRLF: the line breaks after its LF)
            elif ch != "\r":
                client[1] += width(ch)
    return out


@pytest.mark.parametrize("encoding", [UTF16, UTF8, UTF32])
def test_positions_in_a_text_with_bare_crs_are_the_clients_both_ways(encoding):
    import random

    rng = random.Random(8)
    pieces = ["a", "é", "😀", " ", "\n", "\r", "\r\n", "\r\r\n", "\u2028", "\u2029", "\x85", "\x0c"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        index = LineIndex.of_text(text, encoding)
        assert (index.crs is None) == ("\r" not in text.replace("\r\n", "")), repr(text)
        for engine, client in _positions(text, encoding):
            assert index.client_point(*engine) == client, (text, engine)
            assert index.engine_point(*client) == engine, (text, client)
            assert index.position(*engine) == lsp.Position(*client)
        # A client position past its line's end stays on that line, at its end.
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for n, line in enumerate(lines):
            end = index.engine_point(n, 10_000)
            assert index.client_point(*end) == (n, sum(len(ch.encode("utf-8")) if encoding == UTF8 else
                                                        2 if encoding == UTF16 and ord(ch) > 0xFFFF else 1
                                                        for ch in line)), (text, n)


def test_spans_and_ranges_over_a_bare_cr():
    text = "title: x\rmodels: [a]\r\n---\r- id: é\r"
    index = LineIndex.of_text(text)
    span = Span(0, 9, 1, 3)  # from `models` (after the bare CR) to the end of `---` (after the CRLF)
    assert index.range(span) == lsp.Range(start=lsp.Position(1, 0), end=lsp.Position(2, 3))
    assert index.range_json(span) == {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 3}}
    assert index.span(index.range(span)) == span
    assert index.client_line(1) == 2 and index.client_line(1, last=True) == 4
    assert LineIndex.of_text("a\r\nb\n").crs is None  # CRLF only: the engine's lines are the client's
