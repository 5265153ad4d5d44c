"""Where the cursor is, in valid and (mostly) half-typed documents of both formats."""

from __future__ import annotations

import pytest

from evalspec.ide.context import KEY, NONE, VALUE, cursor_context

from .helpers import cursor

HEADER = "title: T\nmodels:\n  - openai:gpt-4o-mini\n---\n"

# (name, format, text, path, position, spec name (None: no object), prefix, present keys)
CASES = [
    ("half-typed prompt key", "weval", HEADER + """
- id: p1
  prompt: Hi
  shou‸
""", ["<prompts>", 0, "should"][:2], KEY, "prompt", "shou", ["id", "prompt"]),
    ("dollar item with nothing after", "weval", HEADER + """
- id: p1
  prompt: Hi
- id: p2
  prompt: Hi
  should:
    - a point
    - $con‸
""", ["<prompts>", 1, "should", 1], KEY, "point", "$con", []),
    ("option of a function point", "weval", HEADER + """
- prompt: Hi
  should:
    - $contains: x
      wei‸
""", ["<prompts>", 0, "should", 0], KEY, "point_fn", "wei", ["$contains"]),
    ("inside an alternative path", "weval", HEADER + """
- prompt: Hi
  should:
    - required
    - - path one
      - $ma‸
""", ["<prompts>", 0, "should", 1, 1], KEY, "point", "$ma", []),
    ("indentless list", "weval", HEADER + """
- prompt: Hi
  should:
  - one
  - $i‸
""", ["<prompts>", 0, "should", 1], KEY, "point", "$i", []),
    ("header key", "weval", """
title: T
mod‸
---
- prompt: x
  should: [y]
""", ["<header>"], KEY, "header", "mod", ["title"]),
    ("header model item", "weval", """
title: T
models:
  - openai:gpt-4o
  - anth‸
---
- prompt: x
""", ["<header>", "models", 1], VALUE, None, "anth", []),
    ("model in a flow list", "weval", """
models: [openai:gpt-4o, goo‸]
---
- prompt: x
""", ["<header>", "models", 1], VALUE, None, "goo", []),
    ("enum value", "weval", """
title: T
render_as: ht‸
---
- prompt: x
""", ["<header>", "render_as"], VALUE, "header", "ht", ["title", "render_as"]),
    ("judge approach", "weval", """
evaluationConfig:
  llm-coverage:
    judges:
      - model: openai:gpt-4o
        approach: ‸
---
- prompt: x
""", ["<header>", "evaluationConfig", "llm-coverage", "judges", 0, "approach"], VALUE, "judge", "", ["model",
                                                                                               "approach"]),
    ("blank line under a rubric key", "weval", HEADER + """
- prompt: Hi
  should:
    ‸
""", ["<prompts>", 0, "should", 0], KEY, "point", "", []),
    ("inside a block scalar", "weval", HEADER + """
- prompt: |
    Explain this.
    note: not‸
""", None, NONE, None, None, None),
    ("single-document form", "weval", """
title: T
prompts:
  - id: a
    prompt: x
  - id: b
    sho‸
""", ["<prompts>", 1], KEY, "prompt", "sho", ["id"]),
    ("stream of prompt documents", "weval", """
prompt: First
should: [a]
---
prompt: Second
ide‸
""", ["<prompts>", 1], KEY, "prompt", "ide", ["prompt"]),
    ("message shorthand", "weval", HEADER + """
- messages:
    - user: Hi
    - ‸
""", ["<prompts>", 0, "messages", 1], KEY, "message", "", []),
    ("ref value", "weval", """
point_defs:
  polite: {$icontains: please}
---
- prompt: x
  should:
    - $ref: po‸
""", ["<prompts>", 0, "should", 0, "$ref"], VALUE, "point_fn", "po", ["$ref"]),
    ("assertion type value", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: ‸
""", ["tests", 0, "assert", 0, "type"], VALUE, "assertion", "", ["type"]),
    ("assertion fields by type", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - name: n
      - type: regex
        fl‸
""", ["tests", 0, "assert", 1], KEY, "assertion:regex", "fl", ["type"]),
    ("type below the cursor still picks the fields", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - fl‸
        type: regex
""", ["tests", 0, "assert", 0], KEY, "assertion:regex", "fl", ["type"]),
    ("second test", "agentv", """
tests:
  - id: a
    input: hi
    criteria: x
  - id: b
    inp‸
""", ["tests", 1], KEY, "test", "inp", ["id"]),
    ("rubric criterion", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: rubrics
        criteria:
          - id: c1
            out‸
""", ["tests", 0, "assert", 0, "criteria", 0], KEY, "rubric_criterion", "out", ["id"]),
    ("nested composite", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - type: composite
        assert:
          - type: latency
            ma‸
""", ["tests", 0, "assert", 0, "assert", 0], KEY, "assertion:latency", "ma", ["type"]),
    ("trials strategy", "agentv", """
execution:
  trials:
    count: 3
    strategy: me‸
tests: []
""", ["execution", "trials", "strategy"], VALUE, "trials", "me", ["count", "strategy"]),
    ("workspace isolation", "agentv", """
workspace:
  isolation: ‸
tests: []
""", ["workspace", "isolation"], VALUE, "workspace", "", ["isolation"]),
    ("message role", "agentv", """
tests:
  - id: a
    input:
      - role: ‸
""", ["tests", 0, "input", 0, "role"], VALUE, "message", "", ["role"]),
    ("flow assertion", "agentv", """
tests:
  - id: a
    input: hi
    assert:
      - {type: icon‸}
""", ["tests", 0, "assert", 0, "type"], VALUE, "assertion", "icon", []),
    ("top level of a suite", "agentv", """
description: d
‸
tests: []
""", [], KEY, "suite", "", ["description", "tests"]),
]


@pytest.mark.parametrize("name,fmt,text,path,position,spec,prefix,present", CASES, ids=[c[0] for c in CASES])
def test_context(name: str, fmt: str, text: str, path: list | None, position: str, spec: str | None,
                 prefix: str | None, present: list[str] | None) -> None:
    analysis, line, col = cursor(text, fmt)
    ctx = cursor_context(analysis, line, col)
    assert ctx.position == position
    if position == NONE:
        return
    assert ctx.path == path
    assert (ctx.spec.name if ctx.spec is not None else None) == spec
    assert ctx.prefix == prefix
    assert sorted(ctx.present) == sorted(present or [])


def test_replace_span_covers_the_word_and_stops_before_the_colon() -> None:
    analysis, line, col = cursor(HEADER + "- prompt: Hi\n  sh‸uold: [a]\n", "weval")
    ctx = cursor_context(analysis, line, col)
    assert ctx.position == KEY and ctx.has_colon
    assert (ctx.replace_span.start_col, ctx.replace_span.end_col) == (2, 8)
    assert ctx.prefix == "sh"


def test_quoted_value_prefix_excludes_the_quote() -> None:
    analysis, line, col = cursor('title: T\nrender_as: "pla‸"\n---\n- prompt: x\n', "weval")
    ctx = cursor_context(analysis, line, col)
    assert ctx.quote == '"' and ctx.prefix == "pla"
    assert (ctx.replace_span.start_col, ctx.replace_span.end_col) == (12, 15)


def test_blank_line_in_a_list_needs_a_dash() -> None:
    analysis, line, col = cursor(HEADER + "- prompt: Hi\n  should:\n    - a\n    ‸\n", "weval")
    ctx = cursor_context(analysis, line, col)
    assert ctx.needs_dash and ctx.path == ["<prompts>", 0, "should", 1]


def test_right_after_a_colon_needs_a_space() -> None:
    analysis, line, col = cursor("title: T\nrender_as:‸\n---\n- prompt: x\n", "weval")
    ctx = cursor_context(analysis, line, col)
    assert ctx.position == VALUE and ctx.needs_space


def test_documents_are_told_apart() -> None:
    text = "title: T\nmodels: [openai:gpt-4o]\n---\n- prompt: x\n  should: [a]\n"
    analysis, _, _ = cursor(text + "‸", "weval")
    header = cursor_context(analysis, 1, 3)
    prompt = cursor_context(analysis, 3, 4)
    assert (header.document, header.section) == (0, "header")
    assert (prompt.document, prompt.section) == (1, "prompt")


def test_prompt_index_in_a_large_list_comes_from_the_tree() -> None:
    prompts = "".join(f"- id: p{i}\n  prompt: Question {i}\n  should:\n    - answers {i}\n" for i in range(300))
    text = HEADER + prompts + "- id: last\n  prompt: Last\n  should:\n    - $con‸\n"
    analysis, line, col = cursor(text, "weval")
    ctx = cursor_context(analysis, line, col)
    assert ctx.path == ["<prompts>", 300, "should", 0]
    # The same prompt, with the document broken by a half-typed key above it.
    broken = text.replace("  prompt: Question 150\n", "  prompt: Question 150\n  shou\n")
    analysis, line, col = cursor(broken, "weval")
    assert not analysis.parsed.ok
    assert cursor_context(analysis, line, col).path == ["<prompts>", 300, "should", 0]


def test_cursor_inside_a_list_item_that_does_not_parse() -> None:
    prompts = "".join(f"- id: p{i}\n  prompt: Question {i}\n" for i in range(40))
    text = HEADER + prompts.replace("  prompt: Question 20\n", "  prompt: Question 20\n  shou‸\n")
    analysis, line, col = cursor(text, "weval")
    ctx = cursor_context(analysis, line, col)
    assert ctx.path == ["<prompts>", 20] and ctx.prefix == "shou"
    assert sorted(ctx.present) == ["id", "prompt"]
    later = cursor_context(analysis, line + 2, 14)  # `  prompt: Question 21`
    assert later.path == ["<prompts>", 21, "prompt"]
    assert cursor_context(analysis, line + 3, 4).path == ["<prompts>", 22]


def test_column_zero_of_a_late_item_in_a_long_list_with_findings() -> None:
    """At the `-` of an item deep in a long list (the file has findings elsewhere), the context is a new
    item at that index, found from the tree rather than by reading every line above."""
    prompts = "".join(f"- id: p{i}\n  prompt: Q{i}\n" for i in range(300))
    text = HEADER + prompts.replace("- id: p5\n", "- id: p5\n  shuld: []\n") + "‸"
    analysis, _, _ = cursor(text, "weval")
    line = analysis.parsed.lines.index("- id: p250")
    ctx = cursor_context(analysis, line, 0)
    assert ctx.path == ["<prompts>", 250] and ctx.needs_dash
