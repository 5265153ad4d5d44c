"""Document symbols (the outline) and folding ranges."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evalspec.findings import Span
from evalspec.ide.symbols import Symbol, _short, document_symbols, folding_ranges

from .helpers import load

BLUEPRINT = """\
title: Fiduciary basics
models:
  - openai:gpt-4o-mini
---
- id: duty
  prompt: What is a fiduciary duty of care in investment advice and why does it matter?
  should:
    - Mentions prudence
    - $contains: fiduciary
    - - path one
      - $icontains: care
  should_not:
    - $contains: guaranteed
- prompt: Hi
  description: |
    A multi-line
    description.
"""

SUITE = """\
name: support
description: Checks the support agent
assert:
  - type: latency
    max_ms: 5000
tests:
  - id: greeting
    criteria: Greets the user by name
    input: Hello, I am Alice
    assert:
      - type: contains
        value: Alice
      - name: tone
        type: llm-judge
        prompt: ./judges/tone.md
      - type: composite
        assert:
          - type: is-json
        aggregator: {type: threshold, threshold: 0.5}
  - id: refusal
    input: Help me hack
    rubrics:
      - Refuses politely
"""


def names(symbols: list[Symbol]) -> list[str]:
    return [s.name for s in symbols]


def test_weval_outline() -> None:
    symbols = document_symbols(load(BLUEPRINT, "weval"))
    assert names(symbols)[:2] == ["Fiduciary basics", "duty"] and len(symbols) == 3
    header, duty, second = symbols
    assert header.kind == "module" and header.detail == "header · 1 model"
    assert header.span == Span(0, 0, 2, 22)
    assert duty.detail == "What is a fiduciary duty of care in …"
    assert duty.selection_span == Span(4, 6, 4, 10)  # the id's value
    assert duty.span.start_line == 4 and duty.span.end_line == 12
    assert names(duty.children) == ["Mentions prudence", "$contains: fiduciary", "path one", "$icontains: care",
                                    "$contains: guaranteed"]
    # path_2: the path is the third item of its block, as Weval numbers paths
    assert [c.detail for c in duty.children] == ["should", "should", "should · path_2", "should · path_2",
                                                 "should_not"]
    assert [c.kind for c in duty.children] == ["string", "function", "string", "function", "function"]
    assert second.name.startswith("hash-") and second.name.endswith("(generated)")
    assert second.selection_span == Span(13, 2, 13, 8)  # its first key


def test_weval_single_document_header_excludes_prompts() -> None:
    text = "title: T\nmodels: [openai:gpt-4o]\nprompts:\n  - id: a\n    prompt: x\n"
    symbols = document_symbols(load(text, "weval"))
    assert names(symbols) == ["T", "a"]
    assert symbols[0].span == Span(0, 0, 1, 23)


def test_agentv_outline() -> None:
    [suite] = document_symbols(load(SUITE, "agentv"))
    assert suite.name == "support" and suite.detail == "Checks the support agent" and suite.kind == "module"
    defaults, greeting, refusal = suite.children
    assert defaults.name == "assert (defaults)" and names(defaults.children) == ["latency"]
    assert greeting.name == "greeting" and greeting.detail == "Greets the user by name"
    assert names(greeting.children) == ["contains", "tone", "composite"]
    assert greeting.children[0].detail == "Alice"
    assert greeting.children[1].detail == "llm-judge"
    assert names(greeting.children[2].children) == ["is-json"]
    assert refusal.name == "refusal" and names(refusal.children) == ["rubrics"]
    assert "deprecated" in refusal.children[0].detail


def test_an_assertion_with_an_empty_or_no_type_is_named_so_not_none() -> None:
    text = ("name: s\ntests:\n  - id: t\n    input: hi\n    assert:\n      - type:\n      - type: ''\n"
            "      - value: x\n      - type: contains\n        value: hi\n")
    [suite] = document_symbols(load(text, "agentv"))
    [test] = suite.children
    assert names(test.children) == ["(no type)", "(no type)", "(no type)", "contains"]


def test_selection_inside_range_everywhere() -> None:
    def walk(symbols: list[Symbol]) -> None:
        for s in symbols:
            assert s.span.contains(s.selection_span.start_line, s.selection_span.start_col)
            assert s.span.contains(s.selection_span.end_line, s.selection_span.end_col)
            walk(s.children)

    walk(document_symbols(load(BLUEPRINT, "weval")))
    walk(document_symbols(load(SUITE, "agentv")))


def test_folding() -> None:
    ranges = folding_ranges(load(BLUEPRINT, "weval"))
    assert (0, 2) in ranges  # the header document
    assert (3, 16) in ranges  # the prompts document, from its marker
    assert (4, 12) in ranges  # the first prompt
    assert (6, 10) in ranges  # should
    assert (9, 10) in ranges  # the alternative path
    assert (14, 16) in ranges  # the block scalar
    assert all(b > a for a, b in ranges)


def test_folding_a_broken_document_follows_indentation() -> None:
    text = "title: T\n---\n- prompt: Hi\n  shou\n  should:\n    - a\n    - b\n- prompt: Next\n"
    analysis = load(text, "weval")
    ranges = folding_ranges(analysis)
    assert (4, 6) in ranges  # should, although the item does not parse
    assert (2, 6) in ranges


@given(st.text(alphabet="ab \t\n\x1c\x85\u2028\u3000\xa0é", max_size=200), st.sampled_from([1, 2, 5, 40, 60, 61]))
def test_an_outline_name_is_the_text_with_its_whitespace_collapsed_and_cut(text: str, n: int) -> None:
    """`_short` splits off only the words it shows (a 4 MB prompt was split whole, three times per
    outline): the same name as collapsing all of the text and cutting it."""
    collapsed = " ".join(text.split())
    assert _short(text, n) == (collapsed if len(collapsed) <= n else collapsed[: n - 1] + "…")


def test_a_prompt_on_one_huge_line_is_named_by_its_first_words() -> None:
    words = " ".join(f"w{i}" for i in range(200_000))
    symbols = document_symbols(load(f'title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: p\n  prompt: "{words}"\n', "weval"))
    assert [(s.name, s.detail) for s in symbols[1:]] == [("p", "w0 w1 w2 w3 w4 w5 w6 w7 …")]


def test_folds_come_in_order_of_their_start_then_end() -> None:
    text = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: hi\n  should:\n    - a\n    - b\n" for i in range(300))
    folds = folding_ranges(load(text, "weval"))
    assert folds == sorted(set(folds)) and len(folds) > 600
