"""`${{ VAR }}` interpolation over string values (agentv-compat-notes.md §1)."""

from __future__ import annotations

import pytest

from evalspec.agentv.interpolate import interpolate

from .helpers import at, check, codes, one

TEXT = """
tests:
  - id: t
    input: "Hello ${{ NAME }} and ${{NAME}}!"
    criteria: ${{ CRITERIA }}
    ${{ KEY }}: not interpolated
"""


def test_values_come_from_the_given_env() -> None:
    result = check(TEXT, env={"NAME": "Ada", "CRITERIA": "Greets Ada"})
    assert codes(result) == ["unknown-key"]  # the key is not interpolated
    t = result.suite.tests[0]  # type: ignore[union-attr]
    assert t.input_messages[0].content == "Hello Ada and Ada!" and t.criteria == "Greets Ada"


def test_unset_variables_are_empty_with_an_info_on_the_exact_range() -> None:
    result = check(TEXT)
    infos = [f for f in result.findings if f.code == "unset-variable"]
    assert [(at(f), f.span.end_col) for f in infos] == [((3, 19), 29), ((3, 35), 43), ((4, 15), 29)]
    assert infos[0].severity == "info"
    assert infos[0].message == ("Environment variable 'NAME' is not set; AgentV replaces '${{ NAME }}' with an "
                                "empty string.")
    # criteria became empty: the test is incomplete in AgentV's eyes
    assert one(result, "incomplete-test")


def test_block_scalars_report_on_the_right_line() -> None:
    result = check("tests:\n  - id: t\n    input: |\n      line one\n      uses ${{ TOKEN }}\n    criteria: ok\n")
    f = one(result, "unset-variable")
    assert at(f) == (5, 12)


def test_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec.agentv import check_agentv
    from evalspec.source import parse_yaml

    monkeypatch.setenv("EVALSPEC_TEST_VAR", "from-env")
    text = "tests:\n  - {id: t, input: '${{ EVALSPEC_TEST_VAR }}', criteria: ok}\n"
    result = check_agentv(parse_yaml(text), None)
    assert result.findings == [] and result.suite.tests[0].input_messages[0].content == "from-env"  # type: ignore[union-attr]


def test_interpolate_function() -> None:
    assert interpolate("a ${{X}} b ${{ Y }} ${{ 1bad }}", {"X": "1"}) == "a 1 b  ${{ 1bad }}"
