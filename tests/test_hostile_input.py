"""The attack run's reproducers (issue 15): each once crashed `analyze()`, hung an editor feature or
gave a finding an impossible range. Every range the engine reports must be well-formed: start before
end, inside the text (lines split at "\\n", as the engine and the server count them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.analysis import Analysis, analyze
from evalspec.cli import main
from evalspec.detect import FileKind
from evalspec.findings import Span
from evalspec.ide.completion import complete
from evalspec.ide.lines import shape
from evalspec.ide.refactor import refactorings
from evalspec.ide.symbols import document_symbols, folding_ranges
from evalspec.line_breaks import as_read


def well_formed(span: Span, lines: list[str]) -> bool:
    sl, sc, el, ec = span
    return (0 <= sl <= el < len(lines) and 0 <= sc <= len(lines[sl]) and 0 <= ec <= len(lines[el])
            and (sl, sc) <= (el, ec))


def bad_ranges(analysis: Analysis) -> list[tuple[str, Span]]:
    """Findings of the analysed file itself whose span, a related span or a fix's edit is impossible."""
    lines = analysis.text.split("\n")
    bad = []
    for f in analysis.findings:
        if f.path is not None:
            continue
        spans = [f.span, *(r.span for r in f.related), *(e.span for x in f.fixes for e in x.edits)]
        bad += [(f.code, s) for s in spans if not well_formed(s, lines)]
    return bad


# --- item 4: bare CR, YAML 1.1 line breaks, aliases ------------------------------------------------------

@pytest.mark.parametrize("text", [
    "title: x\r\r",
    "title: x\r\rmodels: [a]\r---\r- prompt: hi\r",
    "a: |\r  one\r  two\r\rb: 1\n",
    "title: x\r\n\r---\n- prompt: p\r  should: [y]\r",
], ids=["reproducer", "cr-only-blueprint", "block-scalar", "mixed"])
def test_bare_cr_parses_with_well_formed_ranges(text: str) -> None:
    analysis = analyze(text, "blueprint.yml", kind=FileKind.WEVAL)
    assert bad_ranges(analysis) == []


def test_a_bare_cr_is_a_line_break_as_editors_count_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """YAML, LSP and editors break lines at a lone CR; so does the engine (line_breaks.py), in the
    analysis, in what `check` prints and in the text a run fingerprints. It counted at LF only: `check`
    put a CR-only file's findings all on line 1, and a run's fingerprints differed from the editor's."""
    analysis = analyze("title: x\rmodels: 3\n", "b.yml", kind=FileKind.WEVAL)
    wrong = [f for f in analysis.findings if f.code == "wrong-type"]
    assert wrong and wrong[0].span.start_line == 1
    assert analysis.text.split("\n")[1][wrong[0].span.start_col:wrong[0].span.end_col] == "3"
    (tmp_path / "b.yml").write_bytes(b"title: x\rmodels: [openai:gpt-4o-mini]\r---\r- prompt: hi\r  shuld: [x]\r")
    main(["check", "--format", "concise", str(tmp_path / "b.yml")])
    out = capsys.readouterr().out
    assert "b.yml:5:3: warning[unknown-key]" in out, out  # was b.yml:1:66


def test_a_bare_cr_in_a_json_lines_record_does_not_end_it() -> None:
    """In JSON Lines a CR inside a record is not a line break: the file is read as it is."""
    text = '{"id": "a", "input": "one\rtwo", "criteria": "c"}\n{"id": "b", "input": 5}\n'
    analysis = analyze(text, "cases.jsonl")
    assert analysis.text == text
    assert all(f.span.start_line <= 1 for f in analysis.findings if f.path is None)


def test_folder_check_goes_on_past_a_bare_cr_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.yml").write_bytes(b"title: x\r\r")
    (tmp_path / "b.yml").write_text("title: y\nmodels: [openai:gpt-4o-mini]\n---\n- prompt: hi\n  shuld: [x]\n")
    code = main(["check", str(tmp_path)])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert "b.yml" in out.out and "shuld" in out.out
    assert code == 0  # a warning only; a.yml is a (short) valid header


def test_folder_check_shows_an_alias_bomb_in_a_file_of_no_known_format(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    (tmp_path / "w.yml").write_text("\n".join(lines) + "\n")
    (tmp_path / "compose.yml").write_text("services: [web\n")  # a syntax error in unrelated YAML: not shown
    code = main(["check", "--format", "concise", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0  # a warning
    assert "w.yml:7:10: warning[yaml-alias-bomb]" in out and "compose.yml" not in out


def test_a_bug_on_one_file_is_an_error_on_it_and_the_rest_is_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import evalspec.check_cli as cli  # `evalspec check`'s module

    real = cli.analyze_file

    def flaky(path: Path, **kw: object) -> Analysis:
        if path.name == "a.yml":
            raise IndexError("list index out of range")
        return real(path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "analyze_file", flaky)
    (tmp_path / "a.yml").write_text("title: x\n")
    (tmp_path / "b.yml").write_text("title: y\nmodels: [openai:gpt-4o-mini]\n---\n- prompt: hi\n  shuld: [x]\n")
    code = main(["check", str(tmp_path)])
    out = capsys.readouterr().out
    assert "a.yml:1:1: error[internal-error]" in out and "IndexError" in out
    assert "shuld" in out
    assert code == 1


@pytest.mark.parametrize("text", [
    "x: &b\ntargets: &b\n  k: *b\n",
    "x: &b 1\ntargets:\n  - name: a\n    provider: *b\n",
    "a: &x [1]\nb:\n  c: *x\n",
], ids=["reproducer", "alias-value", "alias-last-child"])
def test_alias_as_last_child_keeps_the_collection_in_order(text: str) -> None:
    analysis = analyze(text, Path("/nonexistent/.agentv/targets.yaml"))
    assert analysis.kind is FileKind.AGENTV_TARGETS
    assert bad_ranges(analysis) == []
    for doc in analysis.parsed.documents:
        assert doc.root is not None and well_formed(doc.root.span, analysis.text.split("\n"))


@pytest.mark.parametrize("text", [
    "title: x\u2028y\nmodels: [a]\n---\n- prompt: \u2028hi\n  should: [\x85]\n",
    "- prompt: a\x85b\n  shuld: 1\n- prompt: c\u2029\n",
    "title: x\x85\n\x85models: 3\n",
], ids=["u2028", "nel", "nel-line"])
def test_yaml_11_breaks_keep_ranges_inside_their_line(text: str) -> None:
    analysis = analyze(text, "b.yml", kind=FileKind.WEVAL)
    assert bad_ranges(analysis) == []


# --- item 6: an empty rubric criterion -------------------------------------------------------------------

def test_empty_rubric_criterion_is_a_finding() -> None:
    text = "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: rubrics\n        criteria: [{}]\n"
    analysis = analyze(text, "x.eval.yaml", kind=FileKind.AGENTV)
    missing = [f for f in analysis.findings if f.code == "missing-outcome"]
    assert len(missing) == 1
    assert analysis.text.split("\n")[5][missing[0].span.start_col:missing[0].span.end_col] == "{}"
    assert bad_ranges(analysis) == []


# --- item 9 (second half): the size limit counts bytes ---------------------------------------------------

def test_size_limit_counts_utf8_bytes() -> None:
    text = "title: x\n---\n- prompt: " + "😀" * (1_100_000) + "\n"  # 1.1 M characters, 4.4 MB
    assert len(text) < 4 * 1024 * 1024 < len(text.encode())
    analysis = analyze(text, "b.yml", kind=FileKind.WEVAL)
    assert [f.code for f in analysis.findings] == ["file-too-large"]
    assert "4.2 MB" in analysis.findings[0].message


def test_just_under_the_limit_in_bytes_is_checked() -> None:
    text = "title: x\n---\n- prompt: " + "é" * 1_000_000 + "\n"  # 2 MB
    assert [f.code for f in analyze(text, "b.yml", kind=FileKind.WEVAL).findings] != ["file-too-large"]


# --- items 2 and 8: the editor features on the reproducers -----------------------------------------------

# The reproducer had 26 comment lines (33 s per call before the fix); 30 make it minutes, so the hang
# guard below fails on the old code even on a fast machine.
CRLF_COMMENTS = "# c\r\n" * 30 + "title: x\r\nmodels: [openai:gpt-4o-mini]\r\n---\r\n- id: p\r\n  prompt: hi\r\n"


@pytest.mark.timeout(30)  # a hang guard: before the fix, each call below ran for minutes
def test_crlf_comment_lines_before_the_header() -> None:
    analysis = analyze(CRLF_COMMENTS + "  ", "b.yml")
    assert analysis.kind is FileKind.WEVAL
    assert {(30, 31), (33, 34)} <= set(folding_ranges(analysis))  # the header, the prompt
    symbols = document_symbols(analysis)
    assert [s.name for s in symbols][-1] == "p"
    labels = [i.label for i in complete(analysis, 35, 2, snippets=False).items]
    assert "should" in labels
    refactorings(analysis, Span(34, 0, 34, 0))


@pytest.mark.timeout(30)  # a hang guard: before the fix, this cost seconds per call
def test_a_line_of_trailing_spaces_is_read_in_one_pass() -> None:
    line = "- prompt" + " " * 60_000
    sh = shape(line)
    assert sh.key is None and sh.dashes == (0,)
    assert shape("  models  : [a]" + " " * 60_000).key == "models"
    analysis = analyze("title: x\n---\n" + line + "\n", "b.yml", kind=FileKind.WEVAL)
    for _ in range(50):
        complete(analysis, 2, len(line), snippets=False)


def test_completion_of_a_file_path_holding_a_nul() -> None:
    """Found by bench/fuzz.py: a NUL in a typed `file://` path made completion raise ValueError."""
    text = "tests:\n  - file://ca\x00ses/\n"
    analysis = analyze(text, "/tmp/suite.eval.yaml", kind=FileKind.AGENTV)
    assert complete(analysis, 1, len("  - file://ca\x00ses/"), snippets=False).items == []


def test_a_jsonl_line_nested_thousands_deep() -> None:
    """Found by bench/fuzz.py (seed 88): recognising a `.jsonl` file as a tests file parsed its lines with
    the standard JSON parser, which recursed past Python's limit on `[[[[…` (RecursionError)."""
    deep = "[" * 5_000 + "]" * 5_000
    analysis = analyze(deep + '\n{"id": "a", "input": "hi"}\n', "/nonexistent/cases.jsonl")
    assert analysis.kind is FileKind.AGENTV  # the other line is a test
    assert ("invalid-jsonl", 0) in [(f.code, f.span.start_line) for f in analysis.findings]
    assert analyze(deep + "\n", "/nonexistent/cases.jsonl").kind is FileKind.NONE


def test_a_model_collection_nested_thousands_deep(tmp_path: Path) -> None:
    """A Weval collection file (`models/CORE.json`) of `[[[[…` crashed the blueprint's analysis the same
    way; it is reported like any collection that is not a list of ids (not as an unknown one)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "CORE.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "models" / "QUICK.json").write_text('["openai:gpt-4o-mini"]')
    analysis = analyze("title: t\nmodels: [CORE, QUICK]\n---\n- prompt: hi\n", str(tmp_path / "b.yml"))
    assert [(f.code, f.message) for f in analysis.findings] == [
        ("unresolved-collection", "Model collection 'CORE' cannot be resolved: models/CORE.json is not readable as "
                                  "JSON (JSON nested too deeply). Weval expects a JSON array of model id strings and "
                                  "refuses it; so does `evalspec run`.")]


def test_a_past_comparison_file_nested_thousands_deep(tmp_path: Path) -> None:
    """The editor's run history reads past Weval comparison files from the output folder (which may come
    from someone else): one of `[[[[…` after its identity fields raised RecursionError; it is skipped."""
    from evalspec.ide.run_history import load_history

    blueprint = tmp_path / "t.yml"
    blueprint.write_text("title: t\n---\n- id: p1\n  prompt: hi\n")
    folder = tmp_path / "out" / "live" / "blueprints" / "t"
    folder.mkdir(parents=True)
    (folder / "abc_2026-01-01T00-00-00-000Z_comparison.json").write_text(
        '{"sourceBlueprintFileName": "t.yml", "promptIds": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert load_history(tmp_path / "out", blueprint).results == {}


@pytest.mark.parametrize("documents", [1, 2, 3, 2_000])
@pytest.mark.parametrize("kind", [FileKind.WEVAL, FileKind.AGENTV])
def test_a_syntax_error_after_a_document_that_ended(documents: int, kind: FileKind) -> None:
    """Found by bench/fuzz.py (seed 89, full vs streamed): documents parsed in one stream kept a document
    libyaml had ended before it stopped (`--- {}`, then `a` on the next line) and dropped the syntax error
    with the scratch parse; a file of two or more such documents passed. Every way reports it, at its line."""
    from evalspec.analysis import Caches

    text = "--- {}\n" * documents + "    a\n  b: c\n"
    for way in ({}, {"streamed": True}, {"caches": Caches()}):
        found = [(f.code, tuple(f.span)) for f in analyze(text, "/nonexistent/f.yaml", kind=kind, **way).findings
                 if f.code == "yaml-syntax"]
        assert found == [("yaml-syntax", (documents, 4, documents, 5))], way


@pytest.mark.timeout(60)  # a hang guard: before the fix each ran for minutes (quadratic in the errors)
@pytest.mark.parametrize("unit", ["]\u2028\n---\n", "k: \u2028]\n---\n", "--- x\n"])
def test_many_broken_documents_cost_linear_time(unit: str) -> None:
    """Found by bench/fuzz.py (seeds 89-91: 1.1 s of CPU for 400 KB, 6.5 s for 2 MB, 48 s for 141 KB): a parse
    resumed after a syntax error (after a bare CR, NEL, U+2028), and a stream of documents started again
    after a broken one, joined, encoded and scanned the whole rest of the file each time; a character
    libyaml refuses (`\\v`) made every document before it start the rest again. Now each reads its lines
    as it goes, the documents before such a character are one stream, and past 1,000 resumed parses the
    rest of a file is one `yaml-too-many-errors` finding."""
    resumed = "x: 1\ry: 2\n" + unit * 100_000  # the whole file one resumed stream
    refused = "x: 1\n" + unit * 60_000 + "\x0b\n"  # documents in one stream, a \v after them
    for way in ({}, {"streamed": True}):
        found = analyze(resumed, "/nonexistent/b.yml", kind=FileKind.WEVAL, **way).findings
        too_many = [f for f in found if f.code == "yaml-too-many-errors"]
        if unit.startswith("---"):
            assert too_many == []  # nothing broken: nothing to resume
        else:
            assert len(too_many) == 1 and len([f for f in found if f.code == "yaml-syntax"]) >= 1000
            line = too_many[0].span.start_line
            assert 1990 < line < 2010 and as_read(resumed, None).split("\n")[line] == "---", way
            assert f"the documents from line {line + 1} on are not checked" in too_many[0].message
        if unit.startswith("---"):  # (the others' errors stop being listed at 1,000)
            last = analyze(refused, "/nonexistent/b.yml", kind=FileKind.WEVAL, **way).findings
            assert [(f.code, f.span.start_line) for f in last if f.code == "yaml-syntax"] == [
                ("yaml-syntax", len(refused.split("\n")) - 2)], way
    # a few: every error reported where it is, the break U+2028 counted as a character of its line
    if not unit.startswith("---"):
        few = analyze("x: 1\ry: 2\n" + unit * 3, "/nonexistent/b.yml", kind=FileKind.WEVAL).findings
        col = unit.index("]")
        # (lines 2, 4, 6: the bare CR is a line break, line_breaks.py)
        assert [(f.code, tuple(f.span)) for f in few] == [("yaml-syntax", (n, col, n, col + 1)) for n in (2, 4, 6)]
        unrelated = analyze(resumed, "/nonexistent/notes.yml").findings  # unrelated YAML: the limit, a warning
        assert [(f.code, f.severity.value) for f in unrelated] == [("yaml-too-many-errors", "warning")]


@pytest.mark.parametrize("depth", [50, 300])
def test_completion_inside_composites_nested_thousands_deep(depth: int) -> None:
    """Found by bench/fuzz.py: composites nested 2,000 deep (a 7 MB file) cost up to 2.5 s of CPU for
    three cursors, each step of the path scanning the lines below it for the item's `type:` (quadratic in
    the depth). Past the parser's depth limit (the document is `yaml-too-deep`, not checked) there is
    nothing to complete; within it, completion still offers an assertion's keys. (300 levels: 0.4 MB; the
    7 MB file is now one file-too-large finding, not looked at.)"""
    from evalspec.source import MAX_DEPTH

    text = "tests:\n  - id: t\n    input: hi\n    assert:\n"
    text += "".join("  " * i + "      - type: composite\n" + "  " * i + "        assert:\n" for i in range(depth))
    text += "  " * depth + "      - type: contains\n" + "  " * depth + "        \n"
    analysis = analyze(text, "deep.eval.yaml", kind=FileKind.AGENTV)
    lines = analysis.parsed.lines
    last = len(lines) - 2  # the blank line under the innermost `type: contains`
    labels = [i.label for i in complete(analysis, last, len(lines[last]), snippets=False).items]
    if depth * 2 > MAX_DEPTH:
        assert labels == []
    else:
        assert "value" in labels and "weight" in labels


def test_a_text_past_the_size_limit_is_not_looked_at() -> None:
    """Found by bench/fuzz.py: 20 MB of text holding a million bare CRs took 1.2 s of CPU, its million
    lines split, read as line breaks and folded by indentation, for a file that is one `file-too-large`
    finding; 100 MB took 1.1 s to find its lines and surrogates. Past the limit nothing is read: its
    lines are one empty line, as for a file `check` does not read, and no editor feature has anything."""
    text = "tests:\r  - id: t\r    input: hi\r" * 700_000
    analysis = analyze(text, "suite.eval.yaml")
    assert [f.code for f in analysis.findings] == ["file-too-large"] and analysis.parsed.lines == [""]
    assert folding_ranges(analysis) == [] and complete(analysis, 5, 4, snippets=False).items == []


@pytest.mark.parametrize(("name", "text"), [
    ("b.weval.yml", "title: t\n---\n" + "- prompt: hi\n  should: [x]\n---\n" * 150_000),
    ("s.eval.yaml", "tests: [" + "openai:gpt-4o-mini, {id: m2}, " * 150_000 + "]\n---\n- id: x\n"),
])
def test_every_editor_feature_on_a_text_past_the_size_limit(name: str, text: str) -> None:
    """Found by bench/fuzz.py (seed 94) once such a text's lines were one empty line: the layout found its
    documents in the text and read lines that were not there (IndexError in outline, folding, hover)."""
    analysis = analyze(text, name)
    assert [f.code for f in analysis.findings] == ["file-too-large"]
    assert folding_ranges(analysis) == [] and document_symbols(analysis) == []
    for line in (0, 1, 5, 10_000):
        assert complete(analysis, line, 2, snippets=True).items == []
        assert refactorings(analysis, Span(line, 0, line, 0)) == []


@pytest.mark.parametrize("brk", ["\u2029", "\u2028", "\x85"])
def test_a_byte_order_mark_then_a_yaml_1_1_line_break(brk: str) -> None:
    """Found by bench/fuzz.py (seed 93): libyaml skips a leading byte order mark and does not count it, so
    with a YAML 1.1 line break in the text (positions then come from its character index) every position
    was one character early: the second document's flow mapping started at the end of the `---` line, and
    "Add an explicit id" inserted past that line's end. The first line's columns count the mark too."""
    text = f'\ufeffdescription: d\n---\n{{"prompt": "a{brk}b"}}\n'
    parsed = analyze(text, "b.yml", kind=FileKind.WEVAL).parsed
    first, second = (d.root for d in parsed.documents)
    assert tuple(first.span)[:2] == (0, 1) and tuple(first.pairs[0][0].span) == (0, 1, 0, 12)  # type: ignore[union-attr]
    assert tuple(second.span)[:2] == (2, 0)  # type: ignore[union-attr]
    analysis = analyze(text, "b.yml", kind=FileKind.WEVAL)
    edits = [e for fix in refactorings(analysis, Span(2, 0, 2, 0)) for e in fix.edits]
    assert edits and all(tuple(e.span) == (2, 1, 2, 1) for e in edits)


def test_a_targets_file_with_a_broken_item_says_the_same_in_check_and_the_editor() -> None:
    """Found by bench/fuzz.py (seed 94): `check` reads a column-0 list under a key item by item, and an
    item with a syntax error lost only itself, where the editor's whole parse loses the document: a
    targets file's `check` listed its targets' findings that the editor did not. Now both read it whole."""
    from evalspec.analysis import Caches

    text = ("targets:\n  - name: a\n    provider: cli\ntests:\n"
            + "".join(f"  - x{i}\n" for i in range(50)) + "  - {id: other\n  - {id: m}\n")
    path = "/nonexistent/.agentv/targets.yaml"
    full = [(f.code, tuple(f.span)) for f in analyze(text, path).findings]
    assert [c for c, _ in full] == ["yaml-syntax"]
    for way in ({"streamed": True}, {"caches": Caches()}):
        assert [(f.code, tuple(f.span)) for f in analyze(text, path, **way).findings] == full, way
