"""Regression rows found by a differential run against AgentV v2.19.0 (8d0f735f): each row of
data/differential.jsonl is a minimal case and AgentV's own answer, in the vectors' format
(../shared/vectors/README.md, `agentv/tests.jsonl`), walked through the same code paths
(reference_vectors.compare_scoring). A `note` says what the row pins.

How the rows were made: AgentV's `loadTestSuite` and `runEvaluation` run under bun 1.3.3 with `TZ=UTC` and
no environment variables, the target and judge replaced by providers answering the row's `response` and
`judge_reply` (a harness outside this repository, as scripts/weval_parser_vectors.py describes for Weval);
its answers are copied as they came.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.findings import Severity

from .helpers import check
from .reference_vectors import compare_scoring

ROWS = [json.loads(line) for line in (Path(__file__).parent / "data" / "differential.jsonl").open(encoding="utf-8")]


@pytest.mark.parametrize("row", ROWS, ids=[f"{n}:{r['note'][:40]}" for n, r in enumerate(ROWS)])
def test_scores_as_agentv_does(row: dict) -> None:
    assert compare_scoring(row) == []


# --- differences kept on purpose (docs/reference-differences.md, AgentV) ------------------------------

def _suite(assertion: str, extra: str = "") -> str:
    return f"description: d\ntests:\n  - id: t\n    input: Q\n{extra}    assert:\n      - {assertion}\n"


def _errors(text: str) -> list[str]:
    return sorted(f.code for f in check(text).findings if f.severity == Severity.ERROR)


def test_a_null_limit_is_refused() -> None:
    """AgentV reads `max_input: null` as not set and checks only the other limits: a check not made."""
    assert _errors(_suite("{type: token-usage, max_total: 10, max_input: null}")) == ["wrong-type"]
    assert _errors(_suite("{type: execution-metrics, max_tool_calls: 5, max_tokens: }")) == ["wrong-type"]
    assert _errors(_suite("{type: token-usage, max_total: 10}")) == []


@pytest.mark.parametrize("expected", ["5", "true", "[{role: assistant}]", "{role: assistant, content: 5}"])
def test_an_expected_output_agentv_cannot_read_is_refused(expected: str) -> None:
    """AgentV drops these silently and runs the test without an expected output."""
    assert _errors(_suite("{type: contains, value: x}", f"    expected_output: {expected}\n"))


def test_criteria_that_are_not_text_are_refused() -> None:
    """AgentV reads `criteria: 5` as no criteria (asString) and runs the test: judges grade without them."""
    assert _errors(_suite("{type: llm-judge, name: j}", "    criteria: 5\n")) == ["wrong-type"]


def test_an_empty_name_is_read_as_no_name() -> None:
    """AgentV skips an assertion named '' ("missing name"); evalspec scores it under the auto-name."""
    result = check(_suite("{type: contains, value: x, name: ''}"))
    assert not [f for f in result.findings if f.severity == Severity.ERROR]
    assert result.suite is not None
    assert [a.name for a in result.suite.tests[0].assertions] == ["contains-x"]


def test_a_repeated_test_id_is_refused() -> None:
    """AgentV v2.19.0 runs both tests of one id (`hello world` answered: `a` scores 1 on Q1, `a` scores 0 on Q2)
    and writes two rows with `test_id: a`; `agentv compare` keeps the last row of an id, so the first test is
    never compared. evalspec refuses the file (docs/reference-differences.md)."""
    text = ("description: d\ntests:\n  - id: a\n    input: Q1\n    assert:\n      - {type: contains, value: hello}\n"
            "  - id: a\n    input: Q2\n    assert:\n      - {type: contains, value: nope}\n")
    assert _errors(text) == ["duplicate-test-id"]
    assert _errors(text.replace("id: a\n    input: Q2", "id: b\n    input: Q2")) == []


def test_a_negated_trajectory_that_throws_stays_a_failure() -> None:
    """A call whose `input` is null under `args_match: superset` (with keys) or `subset`: AgentV's evaluator
    throws and reports the assertion failed (score 0, rows above); `negate` turns that into a pass (score 1),
    a check not made. evalspec keeps the failure, as for a regex that does not compile."""
    row = next(r for r in ROWS if r["note"].startswith("input null under superset with keys"))
    assert row["reference"]["score"] == 0 and compare_scoring(row) == []
    thrown = "null is not an object (evaluating 'Object.hasOwn(actual, key)')"
    agentv = {"score": 1, "verdict": "pass", "execution_status": "ok", "assertions": [  # AgentV v2.19.0's answer
        {"name": "t", "type": "tool-trajectory", "score": 1, "verdict": "pass", "weight": 1,
         "hits": [f"Evaluator 't' failed: {thrown}"], "misses": [],
         "reasoning": f"[Negated] {thrown} (original score: 0.00)"}]}
    said = compare_scoring({**row, "assert": [{**row["assert"][0], "negate": True}], "reference": agentv})
    assert "score: reference 1, evalspec 0.0" in said
    assert any(line.startswith("assertions[0].misses:") and "Evaluator 't' failed: null is not an object" in line
               for line in said)


# --- loading -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["description: 5", "version: 1.0", "author: 5", "license: 5", "tags: x", "tags: [1]"])
def test_metadata_of_another_type_is_refused_only_with_a_name(field: str) -> None:
    """AgentV's loader reads the metadata (metadata.ts, zod) only when `name` is a string: without one it runs
    the file whatever `description`, `version`, `author`, `license` and `tags` hold (a warning here); with
    one it refuses the file (an error). Both as AgentV v2.19's loadTestSuite answered."""
    body = "tests:\n  - id: t\n    input: Q\n    criteria: c\n"
    assert _errors(f"{field}\n{body}") == []
    assert [f.code for f in check(f"{field}\n{body}").findings] == ["wrong-type"]
    assert _errors(f"name: n\ndescription: d\n{field}\n{body}".replace("description: d\ndescription: 5\n",
                                                                       "description: 5\n")) == ["wrong-type"]


def test_a_name_that_is_not_text_is_ignored_as_agentv_ignores_it() -> None:
    """`name: 5`: AgentV's loader reads no metadata (the name is not a string) and runs the file."""
    result = check("name: 5\ndescription: 5\ntests:\n  - id: t\n    input: Q\n    criteria: c\n")
    assert [(f.code, f.severity) for f in result.findings] == [("wrong-type", Severity.WARNING)] * 2


@pytest.mark.parametrize("key", ["description", "expected_outcome"])
def test_a_rubric_criterion_without_outcome_is_refused(key: str) -> None:
    """AgentV v2.19 reads only `outcome` (asString(rawRubric.outcome)): a criterion written with another key has
    none, and AgentV skips it ("missing outcome") and scores the rubric on the rest, a check left out; evalspec
    refuses it (evalspec read both keys as aliases of `outcome` before, a rubric AgentV never scores)."""
    text = _suite(f"{{type: rubrics, criteria: [{{id: a, {key}: o}}, {{id: b, outcome: p}}]}}")
    assert _errors(text) == ["missing-outcome"]


def test_a_composite_member_agentv_skips_is_refused() -> None:
    """AgentV takes a composite member only with a type it knows as written (isEvaluatorKind: no snake_case,
    no custom type) and skips the rest ("Skipping member evaluator with invalid name/type"), scoring the
    composite on the others: a check left out."""
    def composite(member: str) -> str:
        return _suite("{type: composite, name: c, aggregator: {type: weighted_average}, assert: ["
                      + member + ", {type: contains, value: x, name: k}]}")
    assert _errors(composite("{type: is_json, name: i}")) == ["invalid-member-type"]
    assert _errors(composite("{type: is-json, name: i}")) == []


def test_skip_defaults_that_is_not_true_applies_the_defaults() -> None:
    """AgentV applies the suite's defaults unless `skip_defaults === true`: "yes" is a warning, not an error."""
    result = check("description: d\nassert: [{type: is-json}]\ntests:\n  - id: t\n    input: Q\n    criteria: c\n"
                   "    execution: {skip_defaults: 'yes'}\n")
    assert [(f.code, f.severity) for f in result.findings] == [("wrong-type", Severity.WARNING)]
    assert result.suite is not None
    assert [a.name for a in result.suite.tests[0].assertions] == ["is-json"]


@pytest.mark.parametrize("assertion", ["{type: llm-judge, name: j, rubrics: [a, {id: b, outcome: o}]}",
                                       "{type: rubric, name: r, rubrics: [a, {id: b, outcome: o}]}"])
def test_a_string_in_a_judges_rubrics_is_refused(assertion: str) -> None:
    """AgentV's parseRubricItems skips a string in an llm-judge's (or `type: rubric`'s) `rubrics` ("invalid rubric
    entry … (expected object)") and judges without it; only a `rubrics` assertion's `criteria` and a test's
    `rubrics` take strings."""
    assert _errors(_suite(assertion)) == ["wrong-type"]
    assert _errors(_suite("{type: rubrics, criteria: [a, {id: b, outcome: o}]}")) == []


def test_a_prompt_script_agentv_cannot_find_is_refused(tmp_path: Path) -> None:
    """AgentV resolves the last word of a judge's prompt `command` next to the eval file or in a parent folder
    and skips the test when it is not there ("prompt command file not found"); a string `command` makes its
    loader throw (asStringArray) and skip the test too."""
    def errors(command: str) -> list[str]:
        text = _suite("{type: llm-judge, name: j, prompt: {command: " + command + "}}", "    criteria: c\n")
        result = check(text, tmp_path, files={"prompts/p.ts": "export {}\n"})
        return sorted(f.code for f in result.findings if f.severity == Severity.ERROR)
    assert errors("[bun, run, prompts/p.ts]") == []
    assert errors("[bun, run, prompts/missing.ts]") == ["missing-prompt-script"]
    assert errors("'bun run prompts/p.ts'") == ["invalid-command"]


def test_camelcase_settings_agentv_reads_are_read() -> None:
    """AgentV reads `x_y ?? xY` for these: totalBudgetUsd, failOnError, cachePath (execution), maxSteps
    (agent-judge); evalspec ignored them as unknown keys."""
    result = check("description: d\nexecution: {totalBudgetUsd: 1, failOnError: true, cachePath: x}\ntests:\n"
                   "  - id: t\n    input: Q\n    criteria: c\n    assert: [{type: agent-judge, name: a, maxSteps: 3}]\n")
    assert sorted({f.code for f in result.findings}) == ["deprecated-alias"]
    assert result.suite is not None
    assert result.suite.tests[0].assertions[0].config == {"max_steps": 3}
