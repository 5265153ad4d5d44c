"""The sixth attack round's findings in the streamed and the editor's analyses, each from its reproducer
(`python bench/attack.py streamed`: every text analysed streamed, as `check` and `run` do, and by the
editor's incremental analyzer, against a whole analysis of the same text).

- A streamed list the checker never reads (a `tests:` list in a blueprint, a second document's list in
  a suite) kept its items' syntax errors to itself: `check` passed a file whose YAML is broken.
- A bare CR (or NEL, LS, PS) is a line break to YAML and not to the lines evalspec splits a file at:
  `# c\\r===` before the first test hid a syntax error from `check`, and in the editor two prompts
  joined by one read as one item's text, the second taking the first one's checked prompt (its id).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.analysis import analyze
from evalspec.cli import main
from evalspec.incremental import DocumentAnalyzer


def _suite_test(i: int) -> str:
    return f"  - id: t{i}\n    input: question {i}\n    criteria: answers {i}\n"


def _prompt(i: int) -> str:
    return f"- id: p{i}\n  prompt: question {i}\n  should: [answers {i}]\n"


def _checked(path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict]]:
    path.write_text(text, newline="")
    capsys.readouterr()
    code = main(["check", str(path), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


SUITE_WITH_A_BROKEN_TEST = ("name: s\ndescription: d\ntests:\n" + "".join(_suite_test(i) for i in range(40))
                            + "  - id: {\n" + "".join(_suite_test(i) for i in range(40, 80)))


def test_a_broken_list_under_tests_in_a_blueprint_fails_check(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _checked(tmp_path / "b.weval.yml", SUITE_WITH_A_BROKEN_TEST, capsys)
    assert code == 1
    assert [(f["code"], f["line"]) for f in found if f["severity"] == "error"] == [("yaml-syntax", 125)]


def test_a_second_documents_broken_list_is_reported_by_check(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    text = "name: s\ndescription: d\ntests:\n" + _suite_test(1) + "---\n- {id: a,\n- x: y}\n- a\n"
    code, found = _checked(tmp_path / "s.eval.yaml", text, capsys)
    assert code == 1
    assert {f["code"] for f in found} >= {"multiple-documents", "yaml-syntax"}
    whole = analyze(text, tmp_path / "s.eval.yaml")
    assert sorted(f["code"] for f in found) == sorted(f.code for f in whole.findings)


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028"])
def test_a_line_break_inside_a_comment_line_does_not_hide_what_follows_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], brk: str) -> None:
    text = "name: s\ndescription: d\ntests:\n  # a comment" + brk + "===\n" + _suite_test(1) + _suite_test(2)
    code, found = _checked(tmp_path / "s.eval.yaml", text, capsys)
    whole = analyze(text, tmp_path / "s.eval.yaml")
    assert [f.code for f in whole.findings] == ["yaml-syntax"]
    assert code == 1 and [f["code"] for f in found] == ["yaml-syntax"]


def test_two_prompts_joined_by_a_bare_cr_keep_their_ids_in_the_editor(tmp_path: Path) -> None:
    path = tmp_path / "b.weval.yml"
    head = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n"
    text = head + "".join(_prompt(i) for i in range(6))
    joined = text.replace("  should: [answers 2]\n- id: p3", "  should: [answers 2]\r- id: p3")
    editor = DocumentAnalyzer(path)
    editor.analyze(text)
    edited = editor.analyze(joined)
    fresh = analyze(joined, path)
    assert [p.id for p in fresh.weval.blueprint.prompts] == ["p0", "p1", "p2", "p3", "p4", "p5"]
    assert [p.id for p in edited.weval.blueprint.prompts] == ["p0", "p1", "p2", "p3", "p4", "p5"]
    assert [f.code for f in edited.findings] == [f.code for f in fresh.findings] == []
