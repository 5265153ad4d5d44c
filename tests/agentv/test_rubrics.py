"""Rubric criteria and score ranges (agentv-compat-notes.md §5)."""

from __future__ import annotations

from .helpers import at, check, codes, one


def _rubric(criteria: str) -> str:
    return ("tests:\n  - id: t\n    input: hi\n    criteria: ok\n    assert:\n      - type: rubrics\n"
            "        criteria:\n" + criteria)


def _criteria(result):  # type: ignore[no-untyped-def]
    return result.suite.tests[0].assertions[0].config["criteria"]


def test_string_criteria_become_numbered_ids() -> None:
    result = check(_rubric("          - Mentions divide-and-conquer\n          - States the complexity\n"))
    assert result.findings == []
    assert _criteria(result) == [
        {"id": "rubric-1", "outcome": "Mentions divide-and-conquer", "weight": 1.0, "required": True},
        {"id": "rubric-2", "outcome": "States the complexity", "weight": 1.0, "required": True}]


def test_object_criteria_defaults() -> None:
    result = check(_rubric("          - {id: a, outcome: x, weight: 5, required: false}\n          - {outcome: y}\n"))
    assert _criteria(result) == [{"id": "a", "outcome": "x", "weight": 5.0, "required": False},
                                 {"id": "rubric-2", "outcome": "y", "weight": 1.0, "required": True}]


def test_criteria_must_be_a_non_empty_list() -> None:
    f = one(check(_rubric("          []\n").replace("criteria:\n          []", "criteria: []")), "missing-criteria")
    assert f.message == "Assertion type 'rubrics' requires a non-empty 'criteria' list."
    f = one(check("tests:\n  - id: t\n    input: hi\n    assert:\n      - type: rubrics\n"), "missing-criteria")
    assert at(f) == (5, 9)


def test_a_criterion_needs_an_outcome_or_score_ranges() -> None:
    f = one(check(_rubric("          - id: a\n            weight: 2\n")), "missing-outcome")
    assert at(f) == (8, 13)
    assert check(_rubric("          - id: a\n            score_ranges: {0: bad, 5: ok, 10: great}\n")).findings == []


def test_duplicate_criterion_ids() -> None:
    f = one(check(_rubric("          - {id: a, outcome: x}\n          - {id: a, outcome: y}\n")), "duplicate-rubric-id")
    assert at(f) == (9, 18) and f.related


def test_outcome_has_no_aliases() -> None:
    # AgentV v2.19 reads only `outcome`: it skips `{id: a, expected_outcome: x}` ("missing outcome")
    result = check(_rubric("          - {id: a, expected_outcome: x}\n"))
    assert codes(result) == ["missing-outcome", "unknown-key"]


def test_shorthand_score_ranges_expand() -> None:
    result = check(_rubric("          - id: a\n            required_min_score: 7\n            score_ranges:\n"
                           "              0: Bad\n              3: OK\n              7: Good\n              10: Top\n"))
    assert result.findings == []
    crit = _criteria(result)[0]
    assert crit["required_min_score"] == 7
    assert crit["score_ranges"] == [
        {"score_range": [0, 2], "outcome": "Bad"}, {"score_range": [3, 6], "outcome": "OK"},
        {"score_range": [7, 9], "outcome": "Good"}, {"score_range": [10, 10], "outcome": "Top"}]


def test_shorthand_must_start_at_zero() -> None:
    f = one(check(_rubric("          - id: a\n            score_ranges: {3: Poor, 10: Top}\n")), "invalid-score-range")
    assert f.message == ("score_ranges must start at 0; the lowest key is 3, so scores 0–2 have no description.")


def test_shorthand_keys_are_integers_from_0_to_10() -> None:
    result = check(_rubric("          - id: a\n            score_ranges: {0: Bad, 11: Top, 2.5: Meh, x: y}\n"))
    messages = [f.message for f in result.findings if f.code == "invalid-score-range"]
    assert messages == ["score_ranges keys must be integers from 0 to 10; found '11'.",
                        "score_ranges keys must be integers from 0 to 10; found '2.5'.",
                        "score_ranges keys must be integers from 0 to 10; found 'x'."]


def test_shorthand_needs_descriptions() -> None:
    f = one(check(_rubric("          - id: a\n            score_ranges: {0: Bad, 5: ''}\n")), "missing-outcome")
    assert f.message == "Score 5 needs a description (its outcome)."


def test_list_ranges_rules() -> None:
    result = check(_rubric("""          - id: a
            score_ranges:
              - score_range: [0, 4]
                outcome: Weak
              - score_range: [3, 8]
                outcome: Fine
              - score_range: [7, 6]
                outcome: Inverted
              - score_range: [0, 11]
                outcome: Out
              - score_range: [9, 9]
"""))
    assert codes(result) == ["invalid-score-range", "invalid-score-range", "missing-outcome",
                             "score-ranges-gap", "score-ranges-overlap"]
    assert one(result, "score-ranges-overlap").message == "Score range [3, 8] overlaps [0, 4]."
    assert one(result, "score-ranges-gap").message == (
        "score_ranges must cover every score from 0 to 10; not covered: 10.")
    assert one(result, "missing-outcome").message == "A score range needs an 'outcome'."
    inverted = [f for f in result.findings if f.code == "invalid-score-range"]
    assert inverted[0].message == "Score range [7, 6]: min must not exceed max."
    assert inverted[1].message == "Score range bounds must be integers from 0 to 10; found 11."


def test_list_ranges_that_cover_everything() -> None:
    result = check(_rubric("""          - id: a
            score_ranges:
              - {score_range: [0, 5], outcome: Low}
              - {score_range: [6, 10], outcome: High}
"""))
    assert result.findings == []


def test_gaps_are_reported_as_runs() -> None:
    f = one(check(_rubric("          - id: a\n            score_ranges:\n"
                          "              - {score_range: [2, 3], outcome: x}\n"
                          "              - {score_range: [7, 7], outcome: y}\n")), "score-ranges-gap")
    assert f.message.endswith("not covered: 0–1, 4–6, 8–10.")


def test_test_level_rubrics_become_a_rubrics_assertion_first() -> None:
    result = check("""
        assert:
          - {type: latency, max_ms: 100}
        tests:
          - id: t
            input: hi
            rubrics:
              - Mentions Alice
            assert:
              - {type: contains, value: Alice}
    """)
    assert codes(result) == ["deprecated-field"]
    a = result.suite.tests[0].assertions  # type: ignore[union-attr]
    assert [x.type for x in a] == ["rubrics", "contains", "latency"]
    assert a[0].config["criteria"][0] == {"id": "rubric-1", "outcome": "Mentions Alice", "weight": 1.0,
                                          "required": True}


def test_empty_string_criterion_is_ignored() -> None:
    result = check(_rubric("          - ''\n          - Real one\n"))
    f = one(result, "empty-criterion")
    assert f.severity == "warning" and [c["id"] for c in _criteria(result)] == ["rubric-2"]
