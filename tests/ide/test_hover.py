"""Hover texts: keys, aliases, deprecations, point functions, assertion types, enums, models, ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.findings import Span
from evalspec.ide.hover import hover

from .helpers import cursor

HEADER = "title: T\nmodels:\n  - openai:gpt-4o-mini\n---\n"

# (name, format, text, fragments the markdown must contain, the hovered span's columns)
CASES = [
    ("prompt key", "weval", HEADER + "- prompt: Hi\n  sh‸ould:\n    - x\n",
     ["**should**", "alternative paths", "`points`"], (2, 8)),
    ("alias names its canonical field", "weval", HEADER + "- prompt: Hi\n  ex‸pect:\n    - x\n",
     ["**expect**", "Alias of **`should`**"], (2, 8)),
    ("deprecated header id", "weval", "i‸d: old\ntitle: T\n---\n- prompt: x\n",
     ["*Deprecated:*", "file path"], (0, 2)),
    ("deprecated alias", "weval", "title: T\nde‸fs:\n  a: x\n---\n- prompt: x\n",
     ["*Deprecated* spelling of **`point_defs`**"], (0, 4)),
    ("default and enum", "weval", "title: T\nrende‸r_as: html\n---\n- prompt: x\n",
     ["Default: `markdown`", "`plaintext`"], (0, 9)),
    ("enum value", "weval", "title: T\nrender_as: pl‸aintext\n---\n- prompt: x\n",
     ["**`plaintext`**", "render_as"], (11, 20)),
    ("point function", "weval", HEADER + "- prompt: Hi\n  should:\n    - $contains_at_l‸east_n_of: [2, [a, b, c]]\n",
     ["**$contains_at_least_n_of**", "`[n, string[]]`", "graded", "```yaml"], (6, 29)),
    ("function alias", "weval", HEADER + "- prompt: Hi\n  should:\n    - $con‸tain: x\n",
     ["Alias of **`$contains`**", "binary"], (6, 14)),
    ("negated function", "weval", HEADER + "- prompt: Hi\n  should_not:\n    - $not_ic‸ontains: x\n",
     ["Negates `$icontains`"], (6, 20)),
    ("fn value", "weval", HEADER + "- prompt: Hi\n  should:\n    - fn: word_cou‸nt_between\n      arg: [1, 5]\n",
     ["**$word_count_between**", "`[min, max]`"], (10, 28)),
    ("js runs only in a run", "weval", HEADER + "- prompt: Hi\n  should:\n    - $j‸s: r.length > 3\n",
     ["never while editing"], (6, 9)),
    ("model id", "weval", "title: T\nmodels:\n  - anthropic:claude-3-5-ha‸iku\n---\n- prompt: x\n",
     ["Anthropic", "`$ANTHROPIC_API_KEY`"], (4, 30)),
    ("model id in a flow list", "weval", "title: T\nmodels: [openai:gpt-4o, anthropic:claude-3-5-ha‸iku]\n---\n- prompt: x\n",
     ["Anthropic", "`$ANTHROPIC_API_KEY`"], (24, 50)),
    ("quoted model id in a flow list", "weval", 'title: T\nmodels: ["openai:gpt‸-4o", x:y]\n---\n- prompt: x\n',
     ["OpenAI", "`$OPENAI_API_KEY`"], (9, 24)),
    ("judge model", "weval", "evaluationConfig:\n  llm-coverage:\n    judges:\n      - model: openrouter:google/gemini-2.5-fl‸ash\n"
     "---\n- prompt: x\n", ["OpenRouter", "OPENROUTER_API_KEY"], (15, 49)),
    ("unknown provider", "weval", "models:\n  - acme:m‸1\n---\n- prompt: x\n", ["not one evalspec can call"], (4, 11)),
    ("message shorthand", "weval", HEADER + "- messages:\n    - us‸er: Hi\n", ["Shorthand message"], (6, 10)),
    ("assertion type", "agentv", "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: tool-traj‸ectory\n",
     ["**tool-trajectory**", "**Score:**", "`mode` (required)", "```yaml"], (14, 29)),
    ("snake-case assertion type", "agentv", "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: llm_ju‸dge\n",
     ["Same type as **`llm-judge`**"], (14, 23)),
    ("custom assertion type", "agentv", "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: word-co‸unt\n",
     [".agentv/assertions/word-count.ts"], (14, 24)),
    ("assertion field by type", "agentv", "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: latency\n"
     "        max‸_ms: 100\n", ["**max_ms**", "'latency' assertion", "`threshold`"], (8, 14)),
    ("test field alias", "agentv", "tests:\n  - id: a\n    inp‸ut: hi\n",
     ["Alias of **`input_messages`**"], (4, 9)),
    ("deprecated test field", "agentv", "tests:\n  - id: a\n    input: hi\n    rub‸rics: [x]\n",
     ["*Deprecated:*", "type: rubrics"], (4, 11)),
    ("trials strategy value", "agentv", "execution:\n  trials:\n    count: 2\n    strategy: me‸an\ntests: []\n",
     ["**`mean`**", "pass_at_k"], (14, 18)),
]


@pytest.mark.parametrize("name,fmt,text,fragments,cols", CASES, ids=[c[0] for c in CASES])
def test_hover(name: str, fmt: str, text: str, fragments: list[str], cols: tuple[int, int]) -> None:
    analysis, line, col = cursor(text, fmt)
    info = hover(analysis, line, col)
    assert info is not None
    for fragment in fragments:
        assert fragment in info.markdown, info.markdown
    assert (info.span.start_line, info.span.start_col, info.span.end_col) == (line, *cols)


def test_generated_id_on_the_dash_and_the_first_key() -> None:
    text = HEADER + "- ‸prompt: This prompt needs an ID.\n  ideal: An ideal response.\n- id: p2\n  prompt: Hi\n"
    analysis, line, col = cursor(text, "weval")
    on_key = hover(analysis, line, col)
    assert on_key is not None and on_key.markdown.startswith("Generated id: `hash-d35001ad5740`")
    assert "**prompt**" in on_key.markdown  # the key's own documentation follows
    on_dash = hover(analysis, line, 0)
    assert on_dash is not None and on_dash.span == Span(line, 0, line, 1)
    assert on_dash.markdown.startswith("Generated id: `hash-d35001ad5740`")
    assert hover(analysis, line + 2, 0) is None  # a prompt with an id
    second_key = hover(analysis, line + 1, 3)  # `ideal` is not the first key
    assert second_key is not None and "Generated id" not in second_key.markdown


def test_generated_id_in_a_stream_document() -> None:
    analysis, line, col = cursor("pro‸mpt: Hi\n---\nprompt: Second\n", "weval")
    info = hover(analysis, line, col)
    assert info is not None and info.markdown.startswith("Generated id: `hash-d9bb90fa28f1`")


def test_collection_lists_its_models(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "QUICK.json").write_text(json.dumps(["openai:gpt-4.1-mini", "google:gemini-2.5-flash"]))
    (tmp_path / ".git").mkdir()
    text = "models:\n  - QU‸ICK\n---\n- prompt: x\n"
    analysis, line, col = cursor(text, "weval", tmp_path / "blueprints" / "b.yml")
    info = hover(analysis, line, col)
    assert info is not None and "(2 models)" in info.markdown and "`google:gemini-2.5-flash`" in info.markdown
    flow = "models: [openai:gpt-4o, QU‸ICK]\n---\n- prompt: x\n"  # the same inside `[…]`
    analysis, line, col = cursor(flow, "weval", tmp_path / "blueprints" / "b.yml")
    info = hover(analysis, line, col)
    assert info is not None and "(2 models)" in info.markdown and info.span == Span(0, 24, 0, 29)


def test_ref_value_shows_the_definition() -> None:
    text = "point_defs:\n  polite: {$icontains: please}\n---\n- prompt: x\n  should:\n    - $ref: pol‸ite\n"
    analysis, line, col = cursor(text, "weval")
    info = hover(analysis, line, col)
    assert info is not None and "from `point_defs`" in info.markdown and "$icontains" in info.markdown


def test_nothing_on_plain_text() -> None:
    analysis, line, col = cursor(HEADER + "- prompt: Hel‸lo there\n", "weval")
    assert hover(analysis, line, col) is None
    analysis, line, col = cursor(HEADER + "- prompt: Hi\n  should:\n    - is po‸lite\n", "weval")
    assert hover(analysis, line, col) is None


def test_hover_in_a_broken_document() -> None:
    text = HEADER + "- prompt: Hi\n  shou\n  should:\n    - $icon‸tains: x\n"
    analysis, line, col = cursor(text, "weval")
    assert not analysis.parsed.ok
    info = hover(analysis, line, col)
    assert info is not None and "**$icontains**" in info.markdown


def test_custom_assertion_found(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv" / "assertions").mkdir(parents=True)
    (tmp_path / ".agentv" / "assertions" / "word-count.ts").write_text("export default {}")
    text = "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: word-co‸unt\n"
    analysis, line, col = cursor(text, "agentv", tmp_path / "evals" / "x.eval.yaml")
    info = hover(analysis, line, col)
    assert info is not None and "custom assertion" in info.markdown and "word-count.ts" in info.markdown


def test_a_value_longer_than_any_name_has_no_hover() -> None:
    """No model id, assertion type or point name is 1,000 characters long: such a value (a prompt on
    a 4 MB line) is not unquoted and looked up, and its hover is not megabytes of markdown."""
    from .helpers import load

    def model_hover(model: str) -> object:
        return hover(load(f"title: T\nmodels: [{model}]\n---\n- id: a\n  prompt: Hi\n", "weval"), 1, 12)

    assert model_hover("openai:" + "x" * 900) is not None  # an unknown model still says what it would be
    assert model_hover("openai:" + "x" * 2000) is None
