"""Suite-level rules (agentv-compat-notes.md §1–§2): metadata, tests, legacy names, execution."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from evalspec.analysis import analyze
from evalspec.detect import FileKind
from evalspec.source import parse_yaml

from .helpers import apply, at, check, codes, one

MINIMAL_TESTS = """
tests:
  - id: t
    input: hi
    criteria: says hi
"""


def test_a_clean_suite_has_no_findings() -> None:
    result = check("""
        $schema: agentv-eval-v2
        name: export-screening
        description: Screens exports
        version: "1.0"
        author: acme
        license: Apache-2.0
        tags: [compliance]
        requires: {agentv: ">=0.6.0"}
        execution:
          target: default
          trials: {count: 3, strategy: mean, cost_limit_usd: 1.5}
          cache: true
          total_budget_usd: 5
        tests:
          - id: t
            input: hi
            criteria: says hi
    """)
    assert result.findings == []
    assert result.suite is not None and result.suite.name == "export-screening"


def test_name_must_be_lowercase_with_hyphens() -> None:
    text = "name: Multi-Model Benchmark\ndescription: d\n" + MINIMAL_TESTS
    f = one(check(text), "invalid-name")
    assert f.severity == "error" and at(f) == (1, 7)  # AgentV's loader refuses the file
    assert f.message == ("Invalid 'name' format 'Multi-Model Benchmark'. Must match pattern /^[a-z0-9-]+$/ "
                         "(lowercase alphanumeric with hyphens). AgentV's loader refuses the file.")
    assert apply(text, f.fixes[0]).startswith("name: multi-model-benchmark\n")


def test_name_is_at_most_64_characters() -> None:
    f = one(check("name: " + "a" * 65 + "\ndescription: d\n" + MINIMAL_TESTS), "invalid-name")
    assert "65 characters" in f.message and "limit is 64" in f.message


def test_name_wants_a_description() -> None:
    f = one(check("name: pack\n" + MINIMAL_TESTS), "missing-description")
    assert at(f) == (1, 1) and f.severity == "warning"
    assert f.message == "When 'name' is present, 'description' should also be provided."


def test_description_length() -> None:
    f = one(check("description: " + "x" * 1025 + "\n" + MINIMAL_TESTS), "invalid-description")
    assert "1025 characters" in f.message


def test_missing_tests() -> None:
    f = one(check("description: no tests\n"), "missing-tests")
    assert f.severity == "error" and at(f) == (1, 1)
    assert f.message == "Missing or invalid 'tests' field (must be an array or a file path string)."


def test_tests_of_the_wrong_type() -> None:
    f = one(check("tests: 3\n"), "missing-tests")
    assert at(f) == (1, 8) and "found a number" in f.message


def test_unsupported_tests_extension_lists_the_supported_ones(tmp_path: Path) -> None:
    f = one(check("tests: ./cases.txt\n", tmp_path), "unsupported-tests-extension")
    assert at(f) == (1, 8)
    assert f.message == ("Unsupported file extension '.txt' for tests path './cases.txt'. "
                         "Supported extensions: .yaml, .yml, .jsonl, .csv")


def test_missing_tests_file(tmp_path: Path) -> None:
    f = one(check("tests: ./cases.jsonl\n", tmp_path), "missing-tests-file")
    assert f.severity == "error" and at(f) == (1, 8)
    assert "'./cases.jsonl' not found" in f.message


def test_unsaved_buffer_does_not_resolve_files() -> None:
    assert check("tests: ./cases.jsonl\n").findings == []


def test_eval_cases_and_evalcases_are_deprecated_aliases_of_tests() -> None:
    for old in ("eval_cases", "evalcases"):
        text = MINIMAL_TESTS.replace("tests:", f"{old}:")
        result = check(text)
        f = one(result, "deprecated-alias")
        assert at(f) == (1, 1) and f.message == f"'{old}' is deprecated; use 'tests'."
        assert "tests:" in apply(text, f.fixes[0])
        assert result.suite is not None and [t.id for t in result.suite.tests] == ["t"]


def test_legacy_target_moves_into_execution() -> None:
    text = "target: azure-base\n" + MINIMAL_TESTS
    result = check(text)
    f = one(result, "deprecated-field")
    assert at(f) == (1, 1) and f.message == "'target' is deprecated: use 'execution.target'."
    assert result.suite is not None and result.suite.target == "azure-base"
    fixed = apply(text, f.fixes[0])
    assert fixed.startswith("execution:\n  target: azure-base\n")
    assert check(fixed).findings == []


def test_legacy_target_moves_into_an_existing_execution_block() -> None:
    text = "target: default\nexecution:\n  cache: true\n" + MINIMAL_TESTS
    fixed = apply(text, one(check(text), "deprecated-field").fixes[0])
    assert fixed.startswith("execution:\n  target: default\n  cache: true\n")
    assert check(fixed).findings == []


def test_unknown_key_with_did_you_mean() -> None:
    text = "descripton: x\n" + MINIMAL_TESTS
    f = one(check(text), "unknown-key")
    assert f.severity == "warning" and "did you mean 'description'" in f.message
    assert apply(text, f.fixes[0]).startswith("description: x")


def test_assertions_is_not_a_v2_19_field() -> None:
    text = "assertions:\n  - type: is-json\n" + MINIMAL_TESTS
    f = one(check(text), "unknown-key")
    assert "use 'assert'" in f.message
    assert apply(text, f.fixes[0]).startswith("assert:")


def test_schema_identifier() -> None:
    f = one(check("$schema: agentv-eval-v1\n" + MINIMAL_TESTS), "invalid-value")
    assert at(f) == (1, 10) and "agentv-eval-v2" in f.message


def test_trials_rules() -> None:
    result = check(textwrap.dedent("""
        execution:
          trials:
            count: 0
            strategy: best
            costLimitUsd: 2
          total_budget_usd: 0
    """) + MINIMAL_TESTS)
    assert codes(result) == ["deprecated-alias", "invalid-value", "out-of-range", "out-of-range"]
    assert one(result, "invalid-value").message.startswith(
        "'strategy' must be one of pass_at_k, mean, confidence_interval")


def test_execution_evaluators_is_deprecated_and_loses_to_assert() -> None:
    text = textwrap.dedent("""
        execution:
          evaluators:
            - type: contains
              value: a
        assert:
          - type: contains
            value: b
    """).lstrip() + MINIMAL_TESTS
    result = check(text)
    assert codes(result) == ["deprecated-alias", "ignored-field"]
    assert one(result, "ignored-field").message == (
        "'execution.evaluators' is ignored because the file sets a top-level 'assert'.")
    assert apply(text, one(result, "deprecated-alias").fixes[0]).count("assert:") == 2
    suite = result.suite
    assert suite is not None and [a.config["value"] for a in suite.assert_defaults] == ["b"]


def test_a_second_yaml_document_is_not_read() -> None:
    f = one(check(MINIMAL_TESTS + "---\nfoo: 1\n"), "multiple-documents")
    assert f.severity == "error" and at(f) == (5, 1)


@pytest.mark.parametrize("between", ["  \n%YAML 1.2\n", "\n# a comment\n\n", ""])
def test_the_second_document_s_finding_is_on_its_marker(between: str) -> None:
    # From the fuzz run: after a directive the finding ended 3 columns into a 2-character line.
    text = MINIMAL_TESTS + ("...\n" if "%" in between else "") + between + "---\nfoo: 1\n"
    f = one(check(text), "multiple-documents")
    line = textwrap.dedent(text).lstrip("\n").split("\n")[f.span.start_line]  # the text check() reads
    assert line == "---" and (f.span.start_col, f.span.end_line, f.span.end_col) == (0, f.span.start_line, 3)


@pytest.mark.parametrize("text", [
    "title: x\r---\r",  # the three cases of the seed-23 long fuzz run: a bare CR before and after `---`
    "- prompt" + " " * 333 + "\r---\r" + " " * 40 + "\r",
    "\rid: x\rprompt: |\r  hi\r\r---\r",
    "tests: []\r---\rfoo: 1\r",
])
def test_the_second_document_s_finding_after_a_bare_cr(text: str) -> None:
    # A bare CR was a line break to YAML, not to the lines spans counted: the second document's `---` was
    # inside the line, and its empty root started after the line's last character, so the range started past
    # its end. Now analyze reads a bare CR as "\n" (line_breaks.py): the finding is on the `---` line.
    analysis = analyze(text, "s.eval.yaml", kind=FileKind.AGENTV, env={})
    f = one(analysis.findings, "multiple-documents")  # type: ignore[arg-type]  # a list of findings
    line = analysis.text.split("\n")[f.span.start_line]
    assert analysis.text == text.replace("\r", "\n")
    assert f.span.start_line == f.span.end_line and f.span.start_col <= f.span.end_col <= len(line)
    assert line[f.span.start_col:f.span.end_col] == "---"


def test_a_scalar_file_is_not_an_eval_file() -> None:
    result = check("just text\n")
    assert result.suite is None and codes(result) == ["not-an-eval-file"]


def test_yaml_syntax_errors_stay_with_the_parser() -> None:
    parsed = parse_yaml("tests: [\n")
    from evalspec.agentv import check_agentv

    result = check_agentv(parsed, None, env={})
    assert parsed.findings and result.findings == []


def test_with_a_name_an_empty_description_or_a_number_version_is_refused_as_agentv_refuses_it() -> None:
    # AgentV's parseMetadata holds the metadata to its schema once `name` is a string.
    f = one(check("name: pack\ndescription: ''\n" + MINIMAL_TESTS), "invalid-description")
    assert f.severity == "error" and "AgentV's loader refuses the file" in f.message
    assert one(check("name: pack\ndescription: d\nversion: 1.0\n" + MINIMAL_TESTS), "wrong-type").severity == "error"
    # Without a name, AgentV reads no metadata: an empty description is only a warning.
    assert one(check("description: ''\n" + MINIMAL_TESTS), "invalid-description").severity == "warning"
