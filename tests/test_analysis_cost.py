"""What `analyze()` does per item of a big file, counted rather than timed (issue 15: nothing a file sends
can hang; bench/analyze_worst.py times the worst 4 MB inputs).

A 4 MB file can hold 1.4 million tiny prompts (`[{},{},…]`). Each was checked from scratch (~12 µs);
an item whose text was checked before in the file now gets that check moved to its place. These tests
hold the two halves of that promise: the copy is exactly what checking the item again gives, and the
check runs once per distinct text, not once per item.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evalspec.analysis import Analysis, analyze
from evalspec.weval import check as weval_check
from evalspec.weval.check import reference_prompt, reference_prompt_json
from evalspec.weval.ids import stable_json

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
W = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n"


def _findings(a: Analysis) -> list[tuple[object, ...]]:
    return [(f.code, f.severity, f.message, f.span, f.fixes, f.related, f.tags, f.path, f.extra)
            for f in a.findings + a.omitted]


def _prompts(a: Analysis) -> list[dict[str, object]]:
    assert a.blueprint is not None
    return [p.to_dict() for p in a.blueprint.prompts]


def _checked_afresh(monkeypatch: pytest.MonkeyPatch, text: str, name: str = "b.yml") -> Analysis:
    with monkeypatch.context() as m:
        m.setattr(weval_check._Context, "SAME_ITEMS", 0)
        return analyze(text, name)


# Items that repeat, at other lines and columns, in flow and block lists, several documents, with
# findings that carry fixes and related places, on the first line of an item and on later ones.
REPEATED = [
    W + "[" + "{}," * 50 + "{prompt: hi}, {prompt: hi},{ prompt: hi }]\n",
    W + "- {}\n" * 20 + "-   {}\n" + "- {prompt: hi, idealResponse: x, ideal: y}\n" * 5,
    W + "- prompt: hi\n  idealResponse: x\n  shuld: [a]\n" * 4
    + "-   prompt: hi\n    idealResponse: x\n    shuld: [a]\n" * 3,
    W + "- prompt: hi\n  should: [$contain: x, $nope: 1, [a], [[b]], {fn: $contains, fnArgs: x}]\n" * 3
    + "---\n" + "- prompt: hi\n  should: [$contain: x, $nope: 1, [a], [[b]], {fn: $contains, fnArgs: x}]\n" * 2,
    W + "- id: a\n  prompt: hi\n" * 3 + "- {id: a, prompt: hi}\n" * 3 + "- {id: 3.0, prompt: hi}\n" * 2,
    W + "- messages: [{user: hi}, {ai: x}, {user: y}]\n  should_not: [{point: a, weight: 20}]\n" * 3
    + "[{messages: [{role: user, content: hi}], system: [x]}, {messages: [{role: user, content: hi}], system: [x]}]\n",
    W + "- prompt: 'line one\n    line two'\n  weight: 2\n" * 3 + "- prompt: 'line one\n    line two'\n  weight: 2\n",
    W + "- 12\n- 12\n- [a]\n- [a]\n- null\n- null\n",
]


@pytest.mark.parametrize("text", REPEATED)
def test_a_repeated_item_gets_what_checking_it_again_gives(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    a = analyze(text, "b.yml")
    fresh = _checked_afresh(monkeypatch, text)
    assert _findings(a) == _findings(fresh)
    assert _prompts(a) == _prompts(fresh)


def test_corpus_blueprints_repeated_give_what_checking_each_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus blueprint's list items, each written three times (another document, other lines;
    single-line items in a flow list too, at other columns)."""
    compared = 0
    for path in sorted(CORPUS.rglob("*.y*ml")):
        a = analyze(path.read_text(encoding="utf-8"), path)
        if a.blueprint is None or a.weval is None:
            continue
        starts = [0] + [i + 1 for i, c in enumerate(a.text) if c == "\n"]
        items = [a.text[starts[s.start_line] + s.start_col:starts[s.end_line] + s.end_col]
                 for s in (n.span for n in a.weval.prompt_nodes if n.span.start_col == 2)]
        if not items:
            continue
        flows = [t for t in items if "\n" not in t]
        text = (W + "".join(f"- {t}\n" for t in items * 2) + "---\n" + "".join(f"- {t}\n" for t in items)
                + ("---\n[" + ", ".join(flows) + ",  " + ",".join(flows) + "]\n" if flows else ""))
        got, fresh = analyze(text, "b.yml"), _checked_afresh(monkeypatch, text)
        assert got.blueprint is not None and len(got.blueprint.prompts) >= 3 * len(items), path
        assert _findings(got) == _findings(fresh), path
        assert _prompts(got) == _prompts(fresh), path
        compared += 1
    assert compared >= 5


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = weval_check._Context._prompt

    def counted(self: object, *args: object) -> object:
        calls[0] += 1
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(weval_check._Context, "_prompt", counted)
    return calls


def test_repeated_items_are_checked_once_each_text(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_checks(monkeypatch)
    n = 20_000
    a = analyze(W + "[" + "{}," * n + "{prompt: hi}]\n" + "---\n" + "- {}\n" * n, "b.yml")
    assert a.blueprint is not None and len(a.blueprint.prompts) == 2 * n + 1
    assert len(a.errors) == 2 * n + 2 * n - 1  # each: missing-prompt, and all but the first a duplicate id
    assert calls[0] == 2  # `{}` and `{prompt: hi}`


def test_items_that_differ_or_may_read_around_them_are_each_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_checks(monkeypatch)
    # distinct texts; aliases (an anchor may be defined again between them); block scalars (their value
    # reaches past their span); a fix that reads the lines around the key (prompt with messages)
    analyze(W + "".join(f"- {{id: p{i}}}\n" for i in range(50)), "b.yml")
    assert calls[0] == 50
    calls[0] = 0
    analyze(W + "- &a {prompt: x}\n" + "- {prompt: *a}\n" * 10, "b.yml")
    assert calls[0] == 11
    calls[0] = 0
    analyze(W + "- prompt: |\n    hi\n" * 10, "b.yml")
    assert calls[0] == 10
    calls[0] = 0
    analyze(W + "- {prompt: x, messages: [{user: y}]}\n" * 10, "b.yml")
    assert calls[0] == 10


def test_prompt_id_json_is_the_generic_stable_json() -> None:
    """`reference_prompt_json` writes what `stable_json(reference_prompt(p))` does, the input of the
    prompt id hash (tests/test_core.py checks the hashes against the reference's)."""
    seen = 0
    texts = [path.read_text(encoding="utf-8") for path in sorted(CORPUS.rglob("*.y*ml"))] + [
        W + "- prompt: hi\n  should: [a, $contains: x, [b, c], [d], {text: e, weight: 2, citation: f}]\n"
            "  should_not: [{fn: imatch, fnArgs: '^x'}, {$js: 'true', weight: 0.5}]\n"
            "  system: null\n  temperature: 0.3\n  weight: 2.5\n  noCache: true\n  citation: {title: t, url: u}\n"
            "  description: d\n  ideal: 'é \"quoted\" \\u2028'\n",
        W + "- messages: [{user: hi}, {assistant: null}, {user: 'x'}]\n  render_as: html\n  system: s\n",
        "title: t\nmodels: [openai:gpt-4o-mini]\nnoCache: 1\nrender_as: plain\n---\n- prompt: hi\n",
    ]
    for text in texts:
        a = analyze(text, "b.yml")
        for p in a.blueprint.prompts if a.blueprint else []:
            body = {k: v for k, v in reference_prompt(p).items() if k != "id"}
            assert reference_prompt_json(p) == stable_json(body)
            seen += 1
    assert seen > 100


def test_a_copied_finding_is_its_own_value() -> None:
    a = analyze(W + "- {prompt: hi, shuld: [x]}\n" * 3, "b.yml")
    found = [f for f in a.findings if f.code == "unknown-key"]
    assert len(found) == 3 and len({f.span for f in found}) == 3
    assert all(f.extra is not g.extra for f in found for g in found if f is not g)
    assert [(f.span.start_line, f.fixes[0].edits[0].span.start_line) for f in found] == [(3, 3), (4, 4), (5, 5)]
    assert [dataclasses.replace(f, span=found[0].span, fixes=found[0].fixes) for f in found] == [found[0]] * 3
