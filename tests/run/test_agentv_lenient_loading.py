"""Issue 25: files AgentV's loader runs are run, not refused (load.jsonl vectors 21, 89, 181, 282, 321, 341,
813 …). Each class's minimal case is checked (warnings, no error) and run with a mock target, and the row
is what AgentV scores: a numeric-string `tolerance` is dropped (tolerance 0), numbers in a `contains-any`
list are dropped (the name still counts them), an id of spaces is the test's id, an empty or emptied
`input` is an empty user message, `expected_output: ''` or `[]` is kept as an expected message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.analysis import analyze_file
from evalspec.findings import Severity

from .conftest import options, run_events, write

SUITE = """description: lenient
execution:
  target: canned
tests:
  - id: tol
    input: hi
    expected_output: '{"a": 1}'
    assert:
      - name: f
        type: field-accuracy
        fields:
          - {path: a, match: numeric_tolerance, tolerance: '0.1'}
  - id: any
    input: hi
    assert:
      - type: contains-any
        value: [4, four]
  - id: '  '
    input: hi
    assert:
      - {type: contains, value: ok}
  - id: empty
    input: ''
    assert:
      - {type: contains, value: ok}
  - id: unset
    input: '${{ EVALSPEC_TEST_UNSET_VARIABLE }}'
    assert:
      - {type: contains, value: ok}
  - id: nothing-expected
    input: hi
    expected_output: []
    assert:
      - {type: contains, value: ok}
"""


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def test_files_agentv_runs_are_checked_with_warnings_and_run(tmp_path: Path) -> None:
    write(tmp_path / ".agentv" / "targets.yaml",
          "targets:\n  - name: canned\n    provider: mock\n    response: '{\"a\": 1.05} ok 4'\n")
    suite = write(tmp_path / "evals" / "lenient.eval.yaml", SUITE)

    analysis = analyze_file(suite)
    assert [f for f in analysis.findings if f.severity == Severity.ERROR] == []
    warned = {(f.code, f.span.start_line + 1) for f in analysis.findings if f.severity == Severity.WARNING}
    assert warned >= {("wrong-type", 12), ("wrong-type", 17), ("blank-test-id", 18), ("empty-input", 23),
                      ("empty-input", 27)}
    assert analysis.agentv is not None and analysis.agentv.suite is not None
    tests = {t.id: t for t in analysis.agentv.suite.tests}
    assert list(tests) == ["tol", "any", "  ", "empty", "unset", "nothing-expected"]
    assert [(m.role, m.content) for m in tests["empty"].input_messages] == [("user", "")]
    assert [(m.role, m.content) for m in tests["unset"].input_messages] == [("user", "")]
    assert [(m.role, m.content) for m in tests["nothing-expected"].expected_messages] == [("assistant", [])]

    run_events(suite, options(tmp_path, {"PATH": "/usr/bin:/bin"}))
    rows = _rows(tmp_path / "out")
    assert set(rows) == set(tests)
    # the string tolerance is dropped: 1.05 against 1 with tolerance 0
    assert rows["tol"]["scores"][0]["misses"] == ["a (outside tolerance: diff=0.05, tolerance=0)"]
    assert rows["tol"]["score"] == 0
    # only "four" is looked for (the answer has "4"); AgentV names it after both items
    (any_score,) = rows["any"]["scores"]
    assert (any_score["name"], any_score["score"]) == ("contains-any-2", 0)
    for test_id in ("  ", "empty", "unset", "nothing-expected"):
        assert (rows[test_id]["score"], rows[test_id]["execution_status"]) == (1, "ok"), test_id


def test_an_empty_expected_output_counts_as_something_to_grade_against(tmp_path: Path) -> None:
    """AgentV's completeness rule: `expected_output: ''` or `[]` is an expected message, so a test with only
    that runs (with the default judge) instead of being skipped as incomplete."""
    for value in ("''", "[]"):
        suite = write(tmp_path / f"e{len(value)}.eval.yaml",
                      f"description: d\ntests:\n  - id: t\n    input: hi\n    expected_output: {value}\n")
        analysis = analyze_file(suite)
        assert [f.code for f in analysis.findings if f.severity == Severity.ERROR] == [], value
        assert analysis.agentv is not None and analysis.agentv.suite is not None
        (test,) = analysis.agentv.suite.tests
        assert test.uses_default_judge and len(test.expected_messages) == 1, value
