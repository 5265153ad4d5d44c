"""Rename, references and highlights (engine/ide/rename.py): point_defs names, prompt ids, test ids.

A rename must leave a file that checks clean and means the same: the renamed blueprint's points, in the
reference's form (what is hashed, run and written), are those of the original.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from evalspec.analysis import analyze
from evalspec.findings import Span
from evalspec.ide.rename import (
    POINT_DEF,
    PROMPT_ID,
    TEST_ID,
    FileEdits,
    Refusal,
    highlights,
    prepare_rename,
    prepare_rename_in_tests_file,
    references,
    rename,
    rename_in_tests_file,
    scalar,
    symbol_at,
)

from .helpers import apply, at, load

BP = textwrap.dedent("""\
    title: R
    models: [echo]
    point_defs:
      greets: "return 1"
      "polite one":
        $contains: please
    ---
    - id: a
      prompt: hi
      should:
        - $ref: greets
        - {$ref: "polite one", weight: 2}
    - id: "b"
      prompt: hi
      should:
        - $ref: greets
    - prompt: no id
      should: [x]
    """)


def _pos(text: str, needle: str, occurrence: int = 0, offset: int = 1) -> tuple[int, int]:
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index)
    return line, index - (text.rfind("\n", 0, index) + 1) + offset


def _renamed(text: str, fmt: str, needle: str, new: str, occurrence: int = 0, offset: int = 1) -> str:
    a = load(text, fmt)
    got = rename(a, *_pos(text, needle, occurrence, offset), new)
    assert isinstance(got, list) and len(got) == 1 and got[0].path is None, got
    return apply(text, got[0].edits)


def _meaning(text: str) -> list:
    a = load(text, "weval")
    assert not a.errors, a.errors
    return [[p.reference_form() for p in prompt.points] for prompt in a.blueprint.prompts]


@pytest.mark.parametrize("needle,occurrence", [("greets:", 0), ("greets", 1), ("greets", 2)])
def test_a_point_definition_is_renamed_with_every_ref(needle: str, occurrence: int) -> None:
    out = _renamed(BP, "weval", needle, "welcomes", occurrence)
    assert out.count("welcomes") == 3 and "greets" not in out
    assert _meaning(out) == _meaning(BP)


def test_a_quoted_name_stays_quoted_and_a_name_that_needs_quotes_gets_them() -> None:
    out = _renamed(BP, "weval", "polite one", "very: polite")
    assert '"very: polite":' in out and '{$ref: "very: polite", weight: 2}' in out
    assert _meaning(out) == _meaning(BP)
    out = _renamed(BP, "weval", "greets:", "yes")  # a YAML boolean when plain
    assert '"yes": "return 1"' in out and '$ref: "yes"' in out
    assert _meaning(out) == _meaning(BP)
    assert scalar("it's", "'") == "'it''s'"


def test_references_and_highlights_list_the_definition_and_every_use() -> None:
    a = load(BP, "weval")
    line, col = _pos(BP, "greets", 2)
    found = references(a, line, col)
    assert [(o.span.start_line, o.definition) for o in found] == [(3, True), (10, False), (15, False)]
    assert [o.span.start_line for o in references(a, line, col, include_declaration=False)] == [10, 15]
    assert highlights(a, line, col) == found
    assert symbol_at(a, line, col).kind == POINT_DEF


def test_a_prompt_id_is_renamed_and_refused_on_a_clash() -> None:
    a = load(BP, "weval")
    line, col = _pos(BP, "id: a", offset=4)
    assert symbol_at(a, line, col).kind == PROMPT_ID
    assert prepare_rename(a, line, col) is not None
    assert symbol_at(a, line, col - 3) is None  # on the `id` key: the name is the value
    out = _renamed(BP, "weval", "id: a", "first", offset=4)
    assert "- id: first\n" in out
    a2 = load(out, "weval")
    assert not a2.errors and [p.id for p in a2.blueprint.prompts][:2] == ["first", "b"]
    clash = rename(a, line, col, "b")
    assert isinstance(clash, Refusal) and "another prompt has the id 'b' (line 13)" in clash.message
    generated = a.blueprint.prompts[2].id
    clash = rename(a, line, col, generated)
    assert isinstance(clash, Refusal) and "generated id" in clash.message
    # A quoted id: the text inside the quotes is what the editor offers to change.
    line, col = _pos(BP, '"b"')
    span = prepare_rename(a, line, col)
    assert BP.split("\n")[line][span.start_col:span.end_col] == "b"


def test_refusals_say_why() -> None:
    a = load(BP, "weval")
    line, col = _pos(BP, "greets:")
    clash = rename(a, line, col, "polite one")
    assert isinstance(clash, Refusal) and "point_defs already defines 'polite one'" in clash.message
    assert isinstance(rename(a, line, col, " "), Refusal)
    assert isinstance(rename(a, line, col, "two\nlines"), Refusal)
    line, _ = _pos(BP, "- prompt: no id")
    refused = prepare_rename(a, line, 3)
    assert isinstance(refused, Refusal) and "has no id" in refused.message
    assert prepare_rename(a, *_pos(BP, "title")) is None  # nothing to rename there
    assert rename(a, *_pos(BP, "greets:"), "greets") == []


SUITE = textwrap.dedent("""\
    description: s
    tests:
      - id: hello
        input: hi
        criteria: says hi
      - id: 'bye'
        input: bye
        criteria: says bye
    """)


def test_a_test_id_is_renamed_and_clashes_with_tests_files_are_refused(tmp_path: Path) -> None:
    out = _renamed(SUITE, "agentv", "hello", "greeting")
    assert "- id: greeting\n" in out and not load(out, "agentv").errors
    out = _renamed(SUITE, "agentv", "bye", "it's over")
    assert "- id: 'it''s over'\n" in out
    assert [t.id for t in load(out, "agentv").suite.tests] == ["hello", "it's over"]
    # A suite whose tests also come from a tests file: the ids there count.
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "cases.yaml").write_text("- id: three\n  input: x\n  criteria: y\n")
    text = SUITE + "  - file://cases.yaml\n"
    path = folder / "suite.eval.yaml"
    path.write_text(text)
    a = analyze(text, path)
    assert [t.id for t in a.suite.tests] == ["hello", "bye", "three"], a.findings
    line, col = _pos(text, "hello")
    assert symbol_at(a, line, col).kind == TEST_ID
    refused = rename(a, line, col, "three")
    assert isinstance(refused, Refusal) and "cases.yaml" in refused.message
    got = rename(a, line, col, "four")
    assert got == [FileEdits(None, got[0].edits)] and apply(text, got[0].edits).count("id: four") == 1
    # The tests from the file are not in this file: no symbol there.
    assert symbol_at(a, 0, 0) is None


def test_cursor_helpers_work(tmp_path: Path) -> None:
    clean, line, col = at("title: t\nmodels: [echo]\npoint_defs:\n  na‸me: x\n---\n- id: p\n  prompt: hi\n  should:\n    - $ref: name\n")
    a = load(clean, "weval")
    assert symbol_at(a, line, col).name == "name"


def test_a_tests_file_is_referenced_by_the_suites_that_include_it(tmp_path: Path) -> None:
    from evalspec.ide.rename import including_suites

    (tmp_path / ".git").mkdir()
    evals = tmp_path / "evals"
    evals.mkdir()
    cases = evals / "cases.yaml"
    cases.write_text("- id: one\n  input: hi\n  criteria: says hi\n")
    suite = evals / "suite.eval.yaml"
    suite.write_text("description: s\ntests: ./cases.yaml\n")
    (evals / "other.eval.yaml").write_text("description: o\ntests:\n  - id: x\n    input: hi\n    criteria: c\n")
    found = including_suites(cases)
    assert [(o.path, tuple(o.span)) for o in found] == [(suite, (1, 9, 1, 19))]
    assert including_suites(evals / "other.eval.yaml") == []


def test_a_test_id_in_a_tests_file_is_renamed_there_and_checked_against_the_suite(tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text('- id: one\n  input: hi\n  criteria: c\n- id: "two"\n  input: bye\n  criteria: c\n')
    suite_path = tmp_path / "suite.eval.yaml"
    suite_text = "description: s\ntests:\n  - id: inline\n    input: x\n    criteria: y\n  - file://cases.yaml\n"
    suite_path.write_text(suite_text)
    suite = analyze(suite_text, suite_path)
    lines = cases.read_text().split("\n")
    named = next(t.source_path for t in suite.suite.tests if t.id == "two")
    assert prepare_rename_in_tests_file(suite, named, lines, 3, 8) == Span(3, 7, 3, 10)  # inside the quotes
    assert prepare_rename_in_tests_file(suite, named, lines, 1, 4) is None  # not on an id
    refused = rename_in_tests_file(suite, named, lines, 3, 8, "inline")  # the suite's own test
    assert isinstance(refused, Refusal) and "another test has the id 'inline'" in refused.message
    [edit] = rename_in_tests_file(suite, named, lines, 3, 8, "three")
    assert edit.path == named and [e.new_text for e in edit.edits] == ['"three"']
