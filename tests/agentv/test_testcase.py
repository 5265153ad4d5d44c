"""Test-level rules (agentv-compat-notes.md §3): ids, completeness, aliases and defaults."""

from __future__ import annotations

from .helpers import apply, at, check, codes, one

SKIP = ("Skipping incomplete test: {}. Missing required fields: id, input, and at least one of "
        "criteria/expected_output/assert")


def test_a_test_needs_criteria_expected_output_or_assert() -> None:
    result = check("""
        tests:
          - id: bare
            input: What is 2+2?
    """)
    f = one(result, "incomplete-test")
    assert f.severity == "error" and at(f) == (2, 9)
    assert f.message.startswith(SKIP.format("bare"))
    assert "(no criteria, expected_output or assert)" in f.message
    assert result.suite is not None and result.suite.tests == []  # AgentV would not run it


def test_each_of_criteria_expected_output_and_assert_completes_a_test() -> None:
    result = check("""
        tests:
          - {id: a, input: hi, criteria: greets}
          - {id: b, input: hi, expected_output: hello}
          - {id: c, input: hi, assert: [{type: contains, value: hello}]}
    """)
    assert result.findings == []
    assert [t.id for t in result.suite.tests] == ["a", "b", "c"]  # type: ignore[union-attr]


def test_only_the_assert_key_counts_not_evaluators_or_rubrics() -> None:
    """AgentV v2.19 checks `testCaseConfig.assert !== undefined`; the old names do not complete a test."""
    result = check("""
        tests:
          - id: old
            input: hi
            evaluators:
              - type: contains
                value: hello
    """)
    assert codes(result) == ["deprecated-alias", "incomplete-test"]


def test_missing_input_and_empty_input() -> None:
    result = check("""
        tests:
          - id: no-input
            criteria: anything
          - id: empty-input
            input: ""
            criteria: anything
    """)
    # AgentV skips a test without input, but runs one whose input is "" (one user message with no text)
    (skipped,) = [f.message for f in result.findings if f.code == "incomplete-test"]
    assert skipped.startswith(SKIP.format("no-input")) and "(no input)" in skipped
    empty = one(result, "empty-input")
    assert empty.severity == "warning" and at(empty) == (5, 12)
    assert result.suite is not None and [t.id for t in result.suite.tests] == ["empty-input"]


def test_missing_id() -> None:
    f = one(check("tests:\n  - input: hi\n    criteria: ok\n"), "incomplete-test")
    assert at(f) == (2, 5) and f.message.startswith(SKIP.format("unknown")) and "(no id)" in f.message


def test_a_number_id_is_invalid_with_a_quote_fix() -> None:
    text = "tests:\n  - id: 7\n    input: hi\n    criteria: ok\n"
    result = check(text)
    f = one(result, "invalid-test-id")
    assert at(f) == (2, 9) and f.message.startswith("Missing or invalid 'id' field (must be a non-empty string)")
    assert codes(result) == ["invalid-test-id"]
    assert check(apply(text, f.fixes[0])).findings == []


def test_duplicate_ids_point_at_the_first() -> None:
    text = """
        tests:
          - id: same
            input: a
            criteria: x
          - id: same
            input: b
            criteria: y
    """
    result = check(text)
    f = one(result, "duplicate-test-id")
    assert f.severity == "error" and at(f) == (5, 9)
    assert f.message == "Duplicate test id 'same'; test ids must be unique in the file."
    assert (f.related[0].span.start_line, f.related[0].span.start_col) == (1, 8)
    assert "id: same-2" in apply(text, f.fixes[0])
    assert [t.criteria for t in result.suite.tests] == ["x"]  # type: ignore[union-attr]


def test_empty_criteria() -> None:
    f = one(check("tests:\n  - id: a\n    input: hi\n    criteria: ''\n    expected_output: x\n"), "invalid-criteria")
    assert f.message == ("Invalid 'criteria' field (must be a non-empty string if provided); AgentV reads it as "
                         "no criteria.")
    assert f.severity == "warning"  # AgentV runs the test (load.jsonl 530)


def test_expected_outcome_is_a_deprecated_alias_of_criteria() -> None:
    text = "tests:\n  - id: a\n    input: hi\n    expected_outcome: greets\n"
    result = check(text)
    f = one(result, "deprecated-alias")
    assert at(f) == (4, 5) and f.message == "'expected_outcome' is deprecated; use 'criteria'."
    assert "criteria: greets" in apply(text, f.fixes[0])
    assert result.suite.tests[0].criteria == "greets"  # type: ignore[union-attr]


def test_outcome_is_not_criteria() -> None:
    # AgentV v2.19 reads criteria ?? expected_outcome only: a test with just `outcome` is incomplete (skipped)
    result = check("tests:\n  - id: a\n    input: hi\n    outcome: greets\n")
    assert sorted(f.code for f in result.findings) == ["incomplete-test", "unknown-key"]


def test_canonical_input_messages_wins_over_input() -> None:
    result = check("""
        tests:
          - id: a
            input: Alias query
            input_messages:
              - role: user
                content: Canonical query
            criteria: ok
    """)
    f = one(result, "alias-conflict")
    assert at(f) == (3, 5) and "'input' is ignored" in f.message
    assert result.suite.tests[0].input_messages[0].content == "Canonical query"  # type: ignore[union-attr]


def test_canonical_expected_messages_wins_over_expected_output() -> None:
    result = check("""
        tests:
          - id: a
            input: hi
            expected_output: {riskLevel: High}
            expected_messages:
              - role: assistant
                content: Canonical answer
    """)
    assert codes(result) == ["alias-conflict"]
    assert result.suite.tests[0].expected_messages[0].content == "Canonical answer"  # type: ignore[union-attr]


def test_a_string_item_must_be_a_file_reference() -> None:
    text = "tests:\n  - cases.yaml\n"
    f = one(check(text), "invalid-test")
    assert f.message == "Test case string must be a file reference (file://...)."
    assert apply(text, f.fixes[0]) == "tests:\n  - file://cases.yaml\n"


def test_reference_answer_is_not_a_test_field() -> None:
    text = "tests:\n  - id: a\n    input: hi\n    reference_answer: Hello\n"
    f = one(check(text), "unknown-key")
    assert "AgentV takes the reference answer from the last expected message" in f.message
    assert "expected_output: Hello" in apply(text, f.fixes[0])


def test_unknown_test_key_with_did_you_mean() -> None:
    f = one(check("tests:\n  - id: a\n    input: hi\n    critera: ok\n"), "unknown-key")
    assert "did you mean 'criteria'" in f.message


def test_test_level_rubrics_are_deprecated() -> None:
    result = check("tests:\n  - id: a\n    input: hi\n    criteria: ok\n    rubrics: [Greets]\n")
    f = one(result, "deprecated-field")
    assert at(f) == (5, 5) and "use an `assert` item with `type: rubrics`" in f.message


def test_execution_evaluators_in_a_test_lose_to_assert() -> None:
    result = check("""
        tests:
          - id: a
            input: hi
            assert: [{type: contains, value: a}]
            execution:
              evaluators: [{type: contains, value: b}]
    """)
    assert codes(result) == ["deprecated-alias", "ignored-field"]
    assert [a.config["value"] for a in result.suite.tests[0].assertions] == ["a"]  # type: ignore[union-attr]


def test_per_test_execution_fields() -> None:
    result = check("""
        tests:
          - id: a
            input: hi
            criteria: ok
            execution:
              targets: [claude-only]
              timeout_seconds: 600
              skip_defaults: true
            metadata: {category: denial}
            conversation_id: flow
            note: European dates
    """)
    assert result.findings == []
    t = result.suite.tests[0]  # type: ignore[union-attr]
    assert t.execution == {"targets": ["claude-only"], "timeout_seconds": 600, "skip_defaults": True}
    assert t.skip_defaults and t.metadata == {"category": "denial"} and t.conversation_id == "flow"


def test_test_level_rubrics_fix_moves_them_into_assert() -> None:
    text = "tests:\n  - id: a\n    input: hi\n    rubrics:\n      - Mentions Alice\n      - id: x\n        outcome: y\n"
    result = check(text)
    fixed = apply(text, one(result, "deprecated-field").fixes[0])
    assert fixed.endswith("    assert:\n      - type: rubrics\n        criteria:\n          - Mentions Alice\n"
                          "          - id: x\n            outcome: y\n")
    after = check(fixed)
    assert codes(result) == ["deprecated-field", "incomplete-test"]  # rubrics alone do not complete a test
    assert after.findings == []  # `assert` does
    assert [c["id"] for c in after.suite.tests[0].assertions[0].config["criteria"]] == ["rubric-1", "x"]  # type: ignore[union-attr]
    flow = "tests:\n  - id: a\n    input: hi\n    rubrics: [Greets]\n"
    fixed = apply(flow, one(check(flow), "deprecated-field").fixes[0])
    assert check(fixed).findings == [] and "criteria: [Greets]" in fixed
