"""An AgentV tests file (dataset) checked or run on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.analysis import analyze_file
from evalspec.cli import main
from evalspec.detect import FileKind

CASES = """{"id": "t1", "input": "Hello", "criteria": "says hello"}
{"id": "t2", "input": "Bye", "expected_output": "bye", "assert": [{"type": "contians", "value": "bye"}]}
not json
{"input": "no id", "criteria": "x"}
{"id": "t1", "input": "again", "criteria": "y"}
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_jsonl_dataset_checked_alone_is_checked_line_by_line(tmp_path: Path, capsys) -> None:
    cases = _write(tmp_path / "data" / "cases.jsonl", CASES)
    analysis = analyze_file(cases)
    assert analysis.kind is FileKind.AGENTV
    found = {(f.span.start_line + 1, f.code) for f in analysis.findings}
    assert found == {(2, "unknown-assertion-type"), (3, "invalid-jsonl"), (4, "incomplete-test"),
                     (5, "duplicate-test-id")}
    assert main(["check", str(cases)]) == 1
    out = capsys.readouterr()
    assert f"{cases}:3:1: error[invalid-jsonl]: Line 3 is not valid JSON" in out.out
    assert "1 eval file(s) checked" in out.err


@pytest.mark.parametrize("line", ['{"id": "t1", "input": "Hello", "criteria": "says hello"',
                                  '{"input": "Hello", "assert": [{"type": "contains", "value": "x"}]]}'])
def test_a_jsonl_dataset_whose_only_line_is_broken_is_still_checked(tmp_path: Path, capsys, line: str) -> None:
    cases = _write(tmp_path / "cases.jsonl", line + "\n")
    analysis = analyze_file(cases)
    assert analysis.kind is FileKind.AGENTV
    assert [(f.span.start_line + 1, f.code) for f in analysis.findings] == [(1, "invalid-jsonl")]
    assert main(["check", str(cases)]) == 1
    out = capsys.readouterr()
    assert "error[invalid-jsonl]" in out.out and "1 eval file(s) checked" in out.err


def test_a_csv_dataset_checked_alone(tmp_path: Path) -> None:
    rows = _write(tmp_path / "rows.csv", "id,input,criteria\na,hello,says hi\n,x,\n")
    analysis = analyze_file(rows)
    assert analysis.kind is FileKind.AGENTV
    assert [(f.span.start_line + 1, f.code) for f in analysis.findings] == [(3, "incomplete-test")]


@pytest.mark.parametrize("text", ['{"name": "x"}\n{"a": 1}\n', "a,b\n1,2\n", '{"input": "x"\n', '{"id": 1, "a"\n'])
def test_other_jsonl_and_csv_files_are_not_eval_files(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path / ("x.csv" if "," in text.split("\n")[0] and "{" not in text else "x.jsonl"), text)
    assert analyze_file(path).kind is FileKind.NONE


def test_running_a_dataset_names_the_suite_that_includes_it(tmp_path: Path, capsys, monkeypatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cases = _write(repo / "evals" / "data" / "cases.jsonl", CASES)
    _write(repo / "evals" / "suite.eval.yaml", "name: suite\ndescription: d\ntests: ./data/cases.jsonl\n")
    _write(repo / "other" / "glob.eval.yaml", "name: g\ndescription: d\ntests:\n  - file://../evals/data/*.jsonl\n")
    _write(repo / "other" / "unrelated.eval.yaml", "name: u\ndescription: d\ntests:\n  - id: a\n    input: x\n"
                                                   "    criteria: y\n")
    monkeypatch.chdir(repo)
    assert main(["run", str(cases), "-m", "echo"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == (f"evalspec run: {cases} is an AgentV tests file (a dataset), not a suite: it has no targets or "
                    "judges. Run the suite that includes it instead: evalspec run evals/suite.eval.yaml "
                    "(also included by other/glob.eval.yaml)")
    assert not (repo / "evalspec-results").exists()


def test_running_a_dataset_no_suite_includes(tmp_path: Path, capsys) -> None:
    cases = _write(tmp_path / "lone" / "cases.jsonl", CASES)
    assert main(["run", str(cases)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "is an AgentV tests file (a dataset), not a suite" in last
    assert "no suite under" in last and "(`tests: ./cases.jsonl`)" in last
