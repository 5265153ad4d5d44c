"""Refactorings: the edits, applied to the text, give the expected file (and a file that checks)."""

from __future__ import annotations

import textwrap

import pytest

from evalspec.findings import Span
from evalspec.ide.refactor import ADD_ID, CONVERT_RUBRICS, refactorings

from .helpers import apply, load


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def run(text: str, fmt: str, line: int, title: str) -> str:
    analysis = load(text, fmt)
    fixes = [f for f in refactorings(analysis, Span(line, 0, line, 0)) if f.title.startswith(title[:20])]
    assert len(fixes) == 1, [f.title for f in refactorings(analysis, Span(line, 0, line, 0))]
    return apply(text, fixes[0].edits)


WEVAL_CASES = [
    ("list item", """
        title: T
        ---
        - prompt: This prompt needs an ID.  # keep this comment
          ideal: An ideal response.
        - id: p2
          prompt: Hi
        """, 2, """
        title: T
        ---
        - id: hash-d35001ad5740
          prompt: This prompt needs an ID.  # keep this comment
          ideal: An ideal response.
        - id: p2
          prompt: Hi
        """),
    ("first key on the next line", """
        - # a comment first
          prompt: Hi
        """, 1, """
        - # a comment first
          id: hash-d9bb90fa28f1
          prompt: Hi
        """),
    ("stream document", """
        prompt: Hi
        ---
        prompt: Hi
        should: [x, {$contains: y}]
        """, 3, """
        prompt: Hi
        ---
        id: hash-d67d89b2253d
        prompt: Hi
        should: [x, {$contains: y}]
        """),
    ("flow mapping", """
        - {prompt: Hi}
        """, 0, """
        - {id: hash-d9bb90fa28f1, prompt: Hi}
        """),
    ("under prompts:", """
        title: T
        prompts:
          - prompt: Hi
        """, 2, """
        title: T
        prompts:
          - id: hash-d9bb90fa28f1
            prompt: Hi
        """),
]


@pytest.mark.parametrize("name,before,line,after", WEVAL_CASES, ids=[c[0] for c in WEVAL_CASES])
def test_add_prompt_id(name: str, before: str, line: int, after: str) -> None:
    result = run(dedent(before), "weval", line, ADD_ID)
    assert result == dedent(after)
    analysis = load(result, "weval")
    assert not analysis.errors
    # The id written is the id the prompt had: adding it changes no id, and makes one explicit.
    old = load(dedent(before), "weval").blueprint.prompts
    new = analysis.blueprint.prompts
    assert [p.id for p in new] == [p.id for p in old]
    assert sum(p.id_generated for p in new) == sum(p.id_generated for p in old) - 1


def test_add_all_ids_and_nothing_for_prompts_with_ids() -> None:
    text = dedent("""
        - prompt: One
        - id: two
          prompt: Two
        - prompt: Three
        """)
    analysis = load(text, "weval")
    assert refactorings(analysis, Span(1, 0, 1, 0)) == []  # on the prompt with an id
    fixes = refactorings(analysis, Span(0, 3, 0, 3))
    assert [f.title for f in fixes] == [ADD_ID, "Add explicit ids to all 2 prompts without one"]
    result = apply(text, fixes[1].edits)
    assert [p.id_generated for p in load(result, "weval").blueprint.prompts] == [False, False, False]


AGENTV_CASES = [
    ("merge into an existing assert list", """
        tests:
          - id: a
            input: hi
            criteria: c
            rubrics:
              # the first criterion
              - Mentions the refund policy
              - id: tone
                outcome: |
                  Stays polite,
                  even when refusing.
            assert:
              - type: contains
                value: refund
          - id: b
            input: hello
            criteria: x
        """, 1, """
        tests:
          - id: a
            input: hi
            criteria: c
            assert:
              - type: contains
                value: refund
              - type: rubrics
                criteria:
                  # the first criterion
                  - Mentions the refund policy
                  - id: tone
                    outcome: |
                      Stays polite,
                      even when refusing.
          - id: b
            input: hello
            criteria: x
        """),
    ("no assert yet", """
        tests:
          - id: a
            input: hi
            criteria: c
            rubrics:
            - One
            - Two
            metadata: {k: v}
        """, 4, """
        tests:
          - id: a
            input: hi
            criteria: c
            assert:
              - type: rubrics
                criteria:
                  - One
                  - Two
            metadata: {k: v}
        """),
    ("flow rubrics", """
        tests:
          - id: a
            input: hi
            criteria: c
            rubrics: [One, Two]
        """, 4, """
        tests:
          - id: a
            input: hi
            criteria: c
            assert:
              - type: rubrics
                criteria: [One, Two]
        """),
    ("flow assert list", """
        tests:
          - id: a
            input: hi
            criteria: c
            assert: [{type: is-json}]
            rubrics:
              - One
        """, 1, """
        tests:
          - id: a
            input: hi
            criteria: c
            assert: [{type: is-json}, {type: rubrics, criteria: [One]}]
        """),
    ("deprecated evaluators list", """
        tests:
          - id: a
            input: hi
            criteria: c
            evaluators:
              - type: is-json
            rubrics:
              - One
        """, 1, """
        tests:
          - id: a
            input: hi
            criteria: c
            evaluators:
              - type: is-json
              - type: rubrics
                criteria:
                  - One
        """),
]


@pytest.mark.parametrize("name,before,line,after", AGENTV_CASES, ids=[c[0] for c in AGENTV_CASES])
def test_convert_rubrics(name: str, before: str, line: int, after: str) -> None:
    result = run(dedent(before), "agentv", line, CONVERT_RUBRICS)
    assert result == dedent(after)
    analysis = load(result, "agentv")
    assert analysis.suite is not None and not analysis.errors, [f.message for f in analysis.errors]
    kinds = [a.type for a in analysis.suite.tests[0].assertions]
    assert "rubrics" in kinds
    # The criteria are the same after the move.
    before_suite = load(dedent(before), "agentv").suite
    old = next(a for a in before_suite.tests[0].assertions if a.type == "rubrics")
    new = next(a for a in analysis.suite.tests[0].assertions if a.type == "rubrics")
    assert new.config["criteria"] == old.config["criteria"]


def test_no_conversion_without_test_rubrics() -> None:
    text = dedent("""
        tests:
          - id: a
            input: hi
            assert:
              - type: rubrics
                criteria: [One]
        """)
    assert refactorings(load(text, "agentv"), Span(1, 0, 5, 0)) == []
