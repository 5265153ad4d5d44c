"""Did-you-mean for point functions named as other tools name them (promptfoo's `regex`,
`contains-any`, `not-regex`…): the Weval function that makes that check, with a fix."""

from __future__ import annotations

import pytest

from evalspec.analysis import analyze


def finding_for(fn: str):
    text = f"title: T\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should:\n    - ${fn}: x\n"
    [finding] = [f for f in analyze(text, "t.weval.yml").findings if f.code == "unknown-function"]
    return finding


@pytest.mark.parametrize(("written", "meant"), [
    ("regex", "matches"), ("iregex", "imatches"), ("not-regex", "not_matches"), ("not_regex", "not_matches"),
    ("contains-any", "contains_any_of"), ("icontains-all", "icontains_all_of"),
    ("not-contains-any", "not_contains_any_of"), ("javascript", "js"), ("is-valid-json", "is_json"),
    ("word-count", "word_count_between"), ("startsWith", "starts_with"), ("not-icontains", "not_icontains"),
])
def test_names_from_other_tools_suggest_the_weval_function(written: str, meant: str) -> None:
    finding = finding_for(written)
    assert finding.message == f"Unknown point function '${written}'; did you mean '${meant}'?"
    [fix] = finding.fixes
    assert fix.edits[0].new_text == f"${meant}"


def test_weval_names_are_not_flagged() -> None:
    text = "title: T\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should:\n    - $not_contains: x\n    - $icontains: y\n"
    assert not [f for f in analyze(text, "t.weval.yml").findings if f.code == "unknown-function"]
