"""External tests: `tests: path`, `file://` items and globs, JSONL and CSV, bounds and loops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalspec.agentv import check_agentv
from evalspec.analysis import analyze_file
from evalspec.source import parse_yaml

from .helpers import at, check, codes, one

JSONL = ('{"id": "j1", "input": "Hi there!", "criteria": "Greets back"}\n'
         '\n'
         '{"id": "j2", "input": "Bye"}\n'
         '{"id": "j3", "input": "x", "criteria": "y", "assert": [{"type": "contanis", "value": "a"}]}\n'
         '{"id": j4}\n')


def test_tests_path_to_jsonl(tmp_path: Path) -> None:
    result = check("input: Be polite.\ntests: ./cases.jsonl\n", tmp_path, files={"cases.jsonl": JSONL})
    suite = result.suite
    assert suite is not None and [t.id for t in suite.tests] == ["j1", "j3"]
    assert suite.tests_files == [tmp_path / "cases.jsonl"]
    # Findings land on the JSONL line (1-based 3, 4, 5) and carry the file's path.
    by_code = {f.code: f for f in result.findings}
    assert set(by_code) == {"incomplete-test", "unknown-assertion-type", "invalid-jsonl"}
    assert all(f.path == str(tmp_path / "cases.jsonl") for f in result.findings)
    assert at(by_code["incomplete-test"]) == (3, 8)
    assert at(by_code["unknown-assertion-type"]) == (4, 65)
    assert by_code["invalid-jsonl"].message.startswith("Line 5 is not valid JSON")
    # Suite defaults apply to external tests too.
    assert [m.content for m in suite.tests[0].input_messages] == ["Be polite.", "Hi there!"]
    assert suite.tests[0].source_path == tmp_path / "cases.jsonl"


def test_file_items_and_sorted_globs(tmp_path: Path) -> None:
    files = {
        "cases/b.yaml": "- {id: b, input: hi, criteria: ok}\n",
        "cases/a.yaml": "- {id: a, input: hi, criteria: ok}\n- {id: a2, input: hi, criteria: ok}\n",
        "more/c.jsonl": '{"id": "c", "input": "hi", "criteria": "ok"}\n',
    }
    result = check("""
        tests:
          - {id: first, input: hi, criteria: ok}
          - file://cases/*.yaml
          - {id: middle, input: hi, criteria: ok}
          - file://more/c.jsonl
    """, tmp_path, files=files)
    assert result.findings == []
    assert [t.id for t in result.suite.tests] == ["first", "a", "a2", "b", "middle", "c"]  # type: ignore[union-attr]


def test_a_csv_tests_file_is_refused_as_agentv_does(tmp_path: Path) -> None:
    # AgentV v2.19's loader refuses it ("Unsupported external test file format '.csv'"), its validator says
    # this: evalspec follows (issue 25, load vector 85).
    result = check("tests: ./cases.csv\n", tmp_path, files={"cases.csv": "id,input,criteria\nc1,hi,Greets\n"})
    f = one(result, "unsupported-tests-extension")
    assert f.severity == "error" and f.message == (
        "Unsupported file extension '.csv' for tests path './cases.csv'. Supported extensions: .yaml, .yml, .jsonl")
    glob = check("tests:\n  - file://*.csv\n", tmp_path, files={"cases.csv": "id,input,criteria\nc1,hi,G\n"})
    assert codes(glob) == ["unsupported-tests-extension"]


def _csv_alone(tmp_path: Path, text: str) -> Any:
    """A CSV dataset checked on its own (`evalspec check rows.csv`, the editor)."""
    path = tmp_path / "cases.csv"
    path.write_text(text, encoding="utf-8")
    return analyze_file(path)


def test_glob_matching_nothing_and_missing_files(tmp_path: Path) -> None:
    result = check("""
        tests:
          - file://cases/*.yaml
          - file://cases/one.yaml
          - file://cases/notes.txt
          - ./cases/plain.yaml
    """, tmp_path)
    assert codes(result) == ["invalid-test", "missing-tests-file", "tests-glob-empty", "unsupported-tests-extension"]
    assert one(result, "tests-glob-empty").message.startswith("No files match 'cases/*.yaml'")
    assert at(one(result, "missing-tests-file")) == (3, 5)


def test_a_file_that_includes_itself_is_read_once(tmp_path: Path) -> None:
    files = {"loop.yaml": "- {id: a, input: hi, criteria: ok}\n- file://loop.yaml\n- file://other.yaml\n",
             "other.yaml": "- file://loop.yaml\n- {id: b, input: hi, criteria: ok}\n"}
    result = check("tests: ./loop.yaml\n", tmp_path, files=files)
    assert [t.id for t in result.suite.tests] == ["a", "b"]  # type: ignore[union-attr]
    assert codes(result) == ["tests-file-repeated", "tests-file-repeated"]
    assert {Path(f.path).name for f in result.findings} == {"loop.yaml", "other.yaml"}  # type: ignore[arg-type]


def test_at_most_100_files(tmp_path: Path) -> None:
    files = {f"cases/{i:03}.yaml": f"- {{id: t{i}, input: hi, criteria: ok}}\n" for i in range(102)}
    result = check("tests:\n  - file://cases/*.yaml\n", tmp_path, files=files)
    assert len(result.suite.tests) == 100  # type: ignore[union-attr]
    assert codes(result) == ["tests-limit", "tests-limit"]
    assert all("at most 100 files per suite" in f.message and "MB" not in f.message for f in result.findings)


def test_the_file_limit_is_named_alike_in_check_and_the_editor(tmp_path: Path) -> None:
    """Found by bench/fuzz.py: past the 100-file limit, `check` named its 32 MB budget and the editor its
    10 MB one, so the two said different things of the same suite. The limit reached is named alone."""
    from evalspec.analysis import analyze, analyze_file

    (tmp_path / "cases").mkdir()
    for i in range(102):
        (tmp_path / "cases" / f"{i:03}.yaml").write_text(f"- {{id: t{i}, input: hi, criteria: ok}}\n", encoding="utf-8")
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("name: s\ndescription: d\ntests:\n  - file://cases/*.yaml\n", encoding="utf-8")
    editor = analyze(suite.read_text(encoding="utf-8"), suite)
    cli = analyze_file(suite)
    said = [(f.code, f.message) for f in editor.findings]
    assert said == [(f.code, f.message) for f in cli.findings] and [c for c, _ in said] == ["tests-limit"] * 2


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    result = check("tests:\n  - {id: a, input: hi, criteria: ok}\n  - file://more.yaml\n", tmp_path,
                   files={"more.yaml": "- {id: a, input: hi, criteria: ok}\n"})
    f = one(result, "duplicate-test-id")
    assert f.path == str(tmp_path / "more.yaml") and "(in suite.eval.yaml)" in f.related[0].message


def test_a_tests_file_must_be_a_list(tmp_path: Path) -> None:
    f = one(check("tests: ./cases.yaml\n", tmp_path, files={"cases.yaml": "id: a\n"}), "invalid-tests-file")
    assert f.path == str(tmp_path / "cases.yaml")


def test_yaml_syntax_errors_in_a_tests_file(tmp_path: Path) -> None:
    result = check("tests: ./cases.yaml\n", tmp_path, files={"cases.yaml": "- {id: a, input: [\n"})
    assert codes(result) == ["yaml-syntax"] and result.findings[0].path == str(tmp_path / "cases.yaml")


def test_a_tests_file_checked_on_its_own(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(JSONL)
    result = check_agentv(parse_yaml(JSONL), tmp_path / "cases.jsonl", env={})
    assert [t.id for t in result.suite.tests] == ["j1", "j3"]  # type: ignore[union-attr]
    assert all(f.path is None for f in result.findings)
    yaml_list = "- {id: a, input: hi, criteria: ok}\n- {id: a, input: hi, criteria: ok}\n"
    result = check_agentv(parse_yaml(yaml_list), tmp_path / "cases.yaml", env={})
    assert codes(result) == ["duplicate-test-id"]


def test_a_csv_saved_with_a_byte_order_mark(tmp_path: Path) -> None:
    """A spreadsheet's "CSV UTF-8" starts with a BOM: its first column is still `id` (it was an unknown
    column '\ufeffid' and every test lost its id; found by the ninth attack round)."""
    analysis = _csv_alone(tmp_path, '\ufeffid,input,criteria\nc1,"What is 2+2?",Adds\n')
    assert [t.id for t in analysis.agentv.suite.tests] == ["c1"] and analysis.findings == []


def test_csv_columns_that_csv_cannot_express(tmp_path: Path) -> None:
    analysis = _csv_alone(tmp_path, "id,input,criteria,assert\na,hi,ok,x\n")
    [f] = [f for f in analysis.findings if f.code == "unsupported-csv-column"]
    assert at(f) == (1, 19) and [t.id for t in analysis.agentv.suite.tests] == ["a"]
