"""--prompt / --test selection (and the run lens's one-item runs): globs, and exact ids that look like globs."""

from __future__ import annotations

from evalspec.run.plan.selection import selected, unmatched


def test_globs_select_by_pattern() -> None:
    assert selected("safety-1", ["safety-*"]) and not selected("other", ["safety-*"])
    assert selected("anything", [])


def test_an_exact_id_selects_itself_even_with_glob_characters() -> None:
    # As a glob, `case[1]` would match only "case1".
    assert selected("case[1]", ["case[1]"])
    assert selected("case1", ["case[1]"])
    assert unmatched(["case[1]", "nope-*"], ["case[1]"]) == ["nope-*"]
