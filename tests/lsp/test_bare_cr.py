"""Documents with bare CRs, over the protocol: every position is where the client counts it.

LSP (and VS Code, and Neovim with `fileformat=mac`) breaks lines at "\\n", "\\r\\n" and a lone "\\r"; the
engine counts at "\\n" only. Each test reads the server's ranges back with the client's line model
(`Client` below) and checks what they cover; U+2028 and NEL sit in the texts too, and are not breaks.
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from .session import RecordingClient, change, edits_of, open_doc, published

_BREAK = re.compile(r"\r\n|\r|\n")


class Client:
    """A text as an editor holds it: lines broken at "\\n", "\\r\\n" and "\\r"; columns in UTF-16 units."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]
        ends = [m.start() for m in _BREAK.finditer(text)] + [len(text)]
        self.lines = [text[s:e] for s, e in zip(self.starts, ends, strict=True)]

    def offset(self, p: lsp.Position) -> int:
        line = self.lines[p.line]
        units = col = 0
        while col < len(line) and units < p.character:
            units += 2 if ord(line[col]) > 0xFFFF else 1
            col += 1
        return self.starts[p.line] + col

    def position(self, needle: str, *, after: bool = False, occurrence: int = 0) -> lsp.Position:
        at = -1
        for _ in range(occurrence + 1):
            at = self.text.index(needle, at + 1)
        at += len(needle) if after else 0
        line = max(i for i, s in enumerate(self.starts) if s <= at)
        return lsp.Position(line=line, character=len(self.text[self.starts[line]:at].encode("utf-16-le")) // 2)

    def covered(self, rng: lsp.Range) -> str:
        return self.text[self.offset(rng.start):self.offset(rng.end)]

    def edited(self, edits: list[lsp.TextEdit]) -> str:
        text = self.text
        for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            text = text[:self.offset(e.range.start)] + e.new_text + text[self.offset(e.range.end):]
        return text


# All bare CRs (a file saved with old Mac line endings)...
MAC = "title: x\rmodels: [openai:gpt-4o-mini]\r---\r- id: p\r  promt: hi\r- id: q\r  prompt: \"hé 😀\u2028x\x85y\"\r  shuld: [a]\r"
# ... and a CRLF file with stray CRs.
MIXED = ("title: x\r\nmodels: [openai:gpt-4o-mini]\r\n---\r\n- id: p\r  promt: hi\r\n- id: q\r\n"
         "  prompt: \"hé 😀\u2028x\x85y\"\r\n  shuld: [a]\r\r\n")


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def test_diagnostics_cover_the_offending_text_as_the_client_counts_lines(client: RecordingClient, tmp_path):
    for name, text in (("mac", MAC), ("mixed", MIXED)):
        uri = open_doc(client, tmp_path / f"{name}.weval.yml", text)
        report = await published(client, uri, version=1)
        seen = Client(text)
        typos = sorted((d.range.start.line, seen.covered(d.range)) for d in report.diagnostics if d.code == "unknown-key")
        assert typos == [(4, "promt"), (7, "shuld")], name
        [missing] = [d for d in report.diagnostics if d.code == "missing-prompt"]
        assert missing.range.start == seen.position("id", occurrence=0), name


async def test_hover_and_completion_after_a_bare_cr(client: RecordingClient, tmp_path):
    text = MAC.replace("  shuld: [a]\r", "  sho\r")
    uri = open_doc(client, tmp_path / "mac.weval.yml", text)
    await published(client, uri, version=1)
    seen = Client(text)

    at = seen.position("models")
    hover = await client.text_document_hover_async(lsp.HoverParams(text_document=doc(uri), position=at))
    assert hover is not None and "**models**" in hover.contents.value
    assert seen.covered(hover.range) == "models"

    # Typing `sho` under the second prompt: the completion is for that prompt's keys, and accepting
    # it rewrites that line only.
    at = seen.position("sho", after=True)
    result = await client.text_document_completion_async(lsp.CompletionParams(text_document=doc(uri), position=at))
    by_label = {item.label: item for item in result.items}
    assert "should" in by_label and "prompt" not in by_label  # `prompt` is there already
    edit = by_label["should"].text_edit
    assert seen.covered(edit.range) == "sho"
    accepted = Client(seen.edited([lsp.TextEdit(range=edit.range, new_text=edit.new_text)]))
    assert accepted.lines[:7] == seen.lines[:7]
    assert accepted.lines[7].startswith("  should:")


async def test_an_incremental_change_after_a_bare_cr(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "mixed.weval.yml", MIXED)
    await published(client, uri, version=1)
    seen = Client(MIXED)
    # Rename `promt` (after a bare CR) to `prompt`, and add a typo on a line after the stray CR of `shuld`.
    change(client, uri, 2, (seen.position("promt").line, seen.position("promt").character),
           (seen.position("promt", after=True).line, seen.position("promt", after=True).character), "prompt")
    after = Client(MIXED.replace("promt", "prompt"))
    end = after.position("shuld: [a]", after=True)
    change(client, uri, 3, (end.line, end.character), (end.line, end.character), "\r  idael: z")
    text = MIXED.replace("promt", "prompt").replace("shuld: [a]", "shuld: [a]\r  idael: z")
    edited = await published(client, uri, version=3)
    seen = Client(text)
    assert sorted(seen.covered(d.range) for d in edited.diagnostics if d.code == "unknown-key") == ["idael", "shuld"]

    # The server's text is the client's: a fresh open of it gives the same diagnostics.
    fresh = open_doc(client, tmp_path / "fresh.weval.yml", text)
    opened = await published(client, fresh, version=1)

    def key(d: lsp.Diagnostic) -> tuple[object, ...]:
        return d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.code

    assert sorted(map(key, edited.diagnostics)) == sorted(map(key, opened.diagnostics))


async def test_a_quick_fix_applied_by_the_client(client: RecordingClient, tmp_path):
    for name, text in (("mac", MAC), ("mixed", MIXED)):
        uri = open_doc(client, tmp_path / f"{name}.weval.yml", text)
        report = await published(client, uri, version=1)
        seen = Client(text)
        for typo, meant in (("promt", "prompt"), ("shuld", "should")):
            [diag] = [d for d in report.diagnostics if d.code == "unknown-key" and seen.covered(d.range) == typo]
            actions = await client.text_document_code_action_async(lsp.CodeActionParams(
                text_document=doc(uri), range=diag.range,
                context=lsp.CodeActionContext(diagnostics=[diag], only=[lsp.CodeActionKind.QuickFix])))
            [fix] = [a for a in actions if a.title == f"Rename '{typo}' to '{meant}'"]
            assert seen.edited(edits_of(fix, uri)) == text.replace(typo, meant), name


async def test_outline_folding_and_lenses_on_the_client_lines(client: RecordingClient, tmp_path):
    text = MAC.replace("promt", "prompt").replace("shuld", "should")  # no errors: each prompt has its lens
    uri = open_doc(client, tmp_path / "mac.weval.yml", text)
    assert not (await published(client, uri, version=1)).diagnostics
    seen = Client(text)
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc(uri)))
    by_name = {s.name: s for s in symbols}
    assert seen.covered(by_name["q"].selection_range) == "q"
    assert (by_name["q"].range.start.line, by_name["q"].range.end.line) == (5, 7)
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc(uri)))
    assert {(3, 4), (5, 7)} <= {(r.start_line, r.end_line) for r in folds}
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(text_document=doc(uri)))
    runs = {lens.command.arguments[0].get("item"): lens.range.start.line for lens in lenses
            if lens.command is not None and lens.command.title == "▶ Run"}
    assert runs == {"p": 3, "q": 5}


CASES = "- id: ok\r  input: What is 15 + 27?\r  criteria: Answers 42\r\r- id: incomplete\r  input: Hello\r"
SUITE = "name: suite\ndescription: Sums\ntests:\n  - file://cases.yaml\n"


async def test_a_finding_in_another_file_with_bare_crs(client: RecordingClient, tmp_path):
    # The suite's check reads cases.yaml as it is (from the disk, then as the editor has it): the
    # finding published to it is on the line the client shows.
    (tmp_path / "cases.yaml").write_bytes(CASES.encode())
    cases_uri = (tmp_path / "cases.yaml").as_uri()
    open_doc(client, tmp_path / "suite.eval.yaml", SUITE)
    report = await published(client, cases_uri, where=lambda p: bool(p.diagnostics))
    [incomplete] = report.diagnostics
    assert incomplete.code == "incomplete-test"
    assert incomplete.range.start.line == Client(CASES).position("- id: incomplete").line == 4


async def test_a_jsonl_tests_file_keeps_a_cr_inside_a_record(client: RecordingClient, tmp_path):
    # In JSON Lines a CR inside a record is whitespace, not a record break: the file is checked as it
    # is, and its positions are converted to the client's lines.
    text = '{"id": "a", "input": "hi", "criteria": "c"}\n{"id": "b",\r "inptu": "x", "criteria": "c"}\n'
    uri = open_doc(client, tmp_path / "cases.jsonl", text, language="jsonl")
    report = await published(client, uri, version=1)
    seen = Client(text)
    assert report.diagnostics
    assert all(d.range.start.line >= 1 for d in report.diagnostics)
    assert any(seen.covered(d.range) == '"inptu"' or seen.covered(d.range) == "inptu" for d in report.diagnostics), \
        [(d.code, seen.covered(d.range)) for d in report.diagnostics]
