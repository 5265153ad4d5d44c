"""Semantic tokens (engine/ide/semantic_tokens.py): deterministic points, judged points, should_not, $refs."""

from __future__ import annotations

import textwrap

from evalspec.ide.semantic_tokens import semantic_tokens

from .helpers import load

BP = textwrap.dedent("""\
    title: T
    models: [echo]
    point_defs:
      greets: {$icontains: hello}
      kind: {text: is kind}
    ---
    - id: p
      prompt: hi
      should:
        - Mentions the capital
        - $contains: Paris
        - $ref: greets
        - - $word_count_between: [1, 9]
          - text: |
              judged over
              two lines
        - {$ref: kind, weight: 2}
      should_not:
        - is rude
        - $call: {url: "http://127.0.0.1:1/x"}
    """)


def _tokens(text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    lines = text.split("\n")
    return [(lines[t.line][t.col:t.col + t.length], t.type, t.modifiers) for t in semantic_tokens(load(text, "weval"))]


def test_each_kind_of_point_has_its_token() -> None:
    assert _tokens(BP) == [
        ("greets", "variable", ("declaration", "deterministic")),
        ("kind", "variable", ("declaration", "judged")),
        ("Mentions the capital", "string", ("judged",)),
        ("$contains", "function", ("deterministic",)),
        ("greets", "variable", ("deterministic",)),
        ("$word_count_between", "function", ("deterministic",)),
        ("judged over", "string", ("judged",)),
        ("two lines", "string", ("judged",)),
        ("kind", "variable", ("judged",)),
        ("should_not", "keyword", ("negated",)),
        ("is rude", "string", ("judged", "negated")),
        ("$call", "function", ("defaultLibrary", "negated")),  # a service answers: not deterministic
    ]


def test_agentv_files_and_broken_text_have_no_tokens() -> None:
    assert semantic_tokens(load("tests:\n  - id: a\n    input: hi\n    criteria: c\n", "agentv")) == []
    assert semantic_tokens(load("title: [unclosed\n", "weval")) == []
