"""What `analyze()` does per item of a big file, counted rather than timed (issue 15: nothing a file sends
can hang; bench/analyze_worst.py times the worst 4 MB inputs).

A 4 MB file can hold 1.4 million tiny prompts (`[{},{},…]`). Each was checked from scratch (~12 µs);
an item whose text was checked before in the file now gets that check moved to its place. These tests
hold the two halves of that promise: the copy is exactly what checking the item again gives, and the
check runs once per distinct text, not once per item.
"""

from __future__ import annotations

import dataclasses
import random
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


# --- documents: one parser for documents in a row ---------------------------------------------------

def _tree(node: object) -> object:
    from evalspec.source import Mapping, Scalar, Sequence

    if isinstance(node, Mapping):
        return ("map", node.span, node.flow, node.tag, node.anchor, [(_tree(k), _tree(v)) for k, v in node.pairs])
    if isinstance(node, Sequence):
        return ("seq", node.span, node.flow, node.tag, node.anchor, [_tree(i) for i in node.items])
    if isinstance(node, Scalar):
        return ("scalar", type(node).__name__, node.span, node.value, node.raw, node.style, node.tag, node.anchor)
    return node


def _parsed(text: str) -> tuple[object, ...]:
    from evalspec.source import parse_yaml

    p = parse_yaml(text)
    return ([(d.index, d.span, _tree(d.root)) for d in p.documents],
            [(f.code, f.message, f.span) for f in p.findings])


DOCUMENTS = [
    "a: 1\n---\nb: [2, 3]\n\n# c\n---\n# only a comment\n---\nx\n   \n---\n",
    "---\n" * 50,
    "--- 1\n--- two\n--- {a: b}\n---\n- x\n---\nk: &a v\nl: *a\n---\nm: *b\n---\nn: 1\n",  # an error: each alone
    "k: v\n---   \n---  # c\n  \n---\n[a,\n b]\n---\n'x'\n\n",
    "title: t\n---\n- prompt: a\n---\nk: v\n---\n- prompt: b\n---\n" + "---\nz: 1\n" * 5,
    "# only comments\n\n---\na: 1\n---\n[b,\n---\nc: |\n  x\n",
    "a: |\n  x\n---\nb: >\n  y\n  \n---\nc: |+\n  z\n\n---\n" + "c: [" * 250 + "]" * 250 + "\n---\nd: 1\n",  # too deep: each alone
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_documents_in_a_row_parse_as_each_alone(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec import source

    together = _parsed(text)

    def alone(parsed: object, ranges: list[tuple[int, int]]) -> None:
        for start, end in ranges:
            source._parse_resuming(parsed, source._lines_text(parsed.lines, start, end), start, end)  # type: ignore[attr-defined]

    monkeypatch.setattr(source, "_parse_documents", alone)
    assert together == _parsed(text)


def test_corpus_documents_parse_as_each_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec import source

    texts = [p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.y*ml"))]
    texts = [t for t in texts if "\n---" in t]
    assert texts
    together = [_parsed(t) for t in texts]
    monkeypatch.setattr(source, "_parse_documents", lambda parsed, ranges: [
        source._parse_resuming(parsed, source._lines_text(parsed.lines, a, b), a, b) for a, b in ranges])
    assert together == [_parsed(t) for t in texts]


def _count_parsers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from evalspec import source

    made = [0]
    real = source._Parser

    def counted(text: str) -> object:
        made[0] += 1
        return real(text)

    monkeypatch.setattr(source, "_Parser", counted)
    return made


def test_a_parser_per_run_of_documents_not_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _count_parsers(monkeypatch)
    a = analyze(W + "---\n#c\n" * 20_000 + "--- x\n", "b.yml")
    assert len(a.parsed.documents) == 20_003  # the header, the empty one W ends with, 20,000, `--- x`
    assert made[0] == 2  # the header (no `---` of its own), then the rest in one stream


def test_a_broken_document_is_parsed_alone_and_hides_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _count_parsers(monkeypatch)
    a = analyze("k: v\n---\n[a, b\n---\nc: 1\n---\nd: [\n", "x.yaml")
    assert [f.code for f in a.parsed.findings] == ["yaml-syntax", "yaml-syntax"]
    assert [type(d.root).__name__ for d in a.parsed.documents] == ["Mapping", "Mapping"]
    # `k: v` alone (no `---` of its own); the rest together up to `[a, b`, which is parsed alone; the
    # rest together again up to `d: [`, parsed alone
    assert made[0] == 5


# --- fixes that look at the text before a node on a long line --------------------------------------

def test_space_before_is_strip_of_the_start() -> None:
    from evalspec.validation.yaml_text import dash_before, space_before

    for line in ["", "   ", " \t x", "- a", "  -  b", "\u00a0\u2003k", "-", " - - c", "x", "  \r", "--a"]:
        for col in range(len(line) + 3):
            assert space_before(line, col) == (not line[:col].strip()), (line, col)
            assert dash_before(line, col) == (line[:col].strip() in ("", "-")), (line, col)


def test_unwrap_paths_fix_offered_where_the_item_starts_its_line() -> None:
    """`_unwrap_paths_fix` finds the item's `- ` from the line's start, once per line; it offers the fix
    exactly where the search back from the item did (`line.rfind("- ", 0, col)` with only blanks before)."""
    texts = [
        W + "- prompt: hi\n  should:\n    - [[a], [b]]\n    -   [[c], [d]]\n    - - [[e]]\n",
        W + "- prompt: hi\n  should: [[[a], [b]], [[c]]]\n",
        W + "- prompt: hi\n  should:\n  - [[[a]], [[b]], [[c]]]\n  - x - [[[d]]]\n",
        W + "- {prompt: hi, should: [[[a], [b]]]}\n- - [[a]]\n",
    ]
    seen = 0
    for text in texts:
        lines = text.split("\n")
        for f in analyze(text, "b.yml").findings:
            if f.code != "nested-paths":
                continue
            line, col = lines[f.span.start_line], f.span.start_col
            dash = line.rfind("- ", 0, col)
            assert bool(f.fixes) == (dash >= 0 and not line[:dash].strip()), (text, f.span)
            seen += 1
    assert seen >= 6


def test_a_long_flow_line_is_read_once_per_line_not_per_item(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each of these prompts gets a fix that reads its line (prompt-and-messages: entry_span); a file
    past 1 MB keeps its lines as offsets (text_lines.Lines), where a read copies the line."""
    from evalspec import text_lines
    from evalspec.analysis import analyze_file

    n = 40_000
    path = tmp_path / "b.yml"
    path.write_text(W + "[" + "{prompt: a, messages: [{user: b}]}," * n + "]\n", encoding="utf-8")
    copies = [0]
    real = text_lines.Lines._end

    def counted(self: text_lines.Lines, index: int) -> int:
        copies[0] += 1
        return real(self, index)

    monkeypatch.setattr(text_lines.Lines, "_end", counted)
    a = analyze_file(path)
    assert isinstance(a.parsed.lines, text_lines.Lines)
    assert len(a.errors) == n + n - 1  # prompt-and-messages on each, duplicate ids after the first
    assert copies[0] < 100


def test_a_block_scalar_ending_a_part_keeps_its_line_break(tmp_path: Path) -> None:
    """A list item or document is parsed from its lines; the line break after its last line is part of
    a block scalar ending there (`|` keeps one). The 32nd prompt of every group a streamed check parses
    together, an item the editor parsed alone and a document before `---` read "hello" instead of
    "hello\\n": another text and prompt id than the whole file gives, and than the reference computes."""
    from evalspec.analysis import Caches, analyze_file

    text = W + "".join(f"- prompt: |\n    hello {i}\n" for i in range(70)) + "---\nprompt: |\n  doc\n---\nprompt: >\n  last\n"
    path = tmp_path / "b.yml"
    path.write_text(text, encoding="utf-8")
    for a in (analyze(text, "b.yml"), analyze(text, "b.yml", caches=Caches()), analyze_file(path)):
        assert a.blueprint is not None
        contents = [p.messages[0].content for p in a.blueprint.prompts]
        assert contents == [f"hello {i}\n" for i in range(70)] + ["doc\n", "last\n"]


# --- run --skip-invalid: which prompt an error belongs to ---------------------------------------------

def _laminar(rng: random.Random, lo: int, hi: int, depth: int) -> list[tuple[int, int]]:
    """Random intervals in [lo, hi], each two nested or disjoint (touching at an end sometimes), as YAML
    nodes' spans are."""
    out = []
    pos = lo
    while pos < hi and rng.random() < 0.8:
        a = rng.randint(pos, min(hi, pos + 6))
        b = rng.randint(a, min(hi, a + 12))
        out.append((a, b))
        if depth < 4 and b > a:
            out += _laminar(rng, a, b, depth + 1)
        pos = b if rng.random() < 0.3 else b + 1
    return out


def test_first_containing_is_the_scan_it_replaces() -> None:
    from evalspec.findings import Span
    from evalspec.run.plan.skip_invalid import FirstContaining, _inside

    rng = random.Random(7)
    for _ in range(2000):
        width = rng.choice((20, 100))
        spans = [Span(a // width, a % width, b // width, b % width) for a, b in _laminar(rng, 0, 60, 0)]
        spans += [rng.choice(spans) for _ in range(rng.randint(0, 3))] if spans else []  # aliases: the same span
        rng.shuffle(spans)
        first = FirstContaining(spans)
        for line in range(4):
            for col in range(width + 1):
                assert first(line, col) == next((i for i, s in enumerate(spans) if _inside(s, line, col)), None)


def test_skip_invalid_asks_each_error_once_not_each_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every error was looked for in every prompt's span: 20,000 broken prompts were 200 million steps."""
    from evalspec.run.plan import skip_invalid

    n = 20_000
    a = analyze(W + "- {id: good, prompt: hi}\n" + "".join(f"- {{id: p{i}}}\n" for i in range(n)), "b.yml")
    calls = [0]
    real = skip_invalid._inside

    def counted(span: object, line: int, col: int) -> bool:
        calls[0] += 1
        return real(span, line, col)  # type: ignore[arg-type]

    monkeypatch.setattr(skip_invalid, "_inside", counted)
    part = skip_invalid.valid_part(a)
    assert len(part.skipped) == n and part.blueprint is not None
    assert [p.id for p in part.blueprint.prompts] == ["good"]
    assert calls[0] <= 4 * len(a.errors)


def test_a_repeated_test_id_gets_the_first_free_name_without_a_search_from_2_each_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`a-2` … `a-k` then k repeats of `a`: each repeat searched `a-2`, `a-3`, … again (8,000 of each
    took 13 s; a 4 MB file minutes)."""
    from evalspec.agentv import suite

    class Counted:
        def __init__(self, seen: dict[str, object]) -> None:
            self.seen, self.asked = seen, 0

        def __contains__(self, key: str) -> bool:
            self.asked += 1
            return key in self.seen

    asked = [0]
    real = suite._rename_id_fix

    def counted(pid: str, id_span: object, seen: dict[str, object], free: dict[str, int]) -> object:
        view = Counted(seen)
        fix = real(pid, id_span, view, free)  # type: ignore[arg-type]
        asked[0] += view.asked
        return fix

    monkeypatch.setattr(suite, "_rename_id_fix", counted)
    k = 1_200
    a = analyze("tests:\n" + "".join(f"- {{id: a-{i}, input: x, criteria: y}}\n" for i in range(2, k + 2))
                + "- {id: a, input: x, criteria: y}\n" * (k + 1) + "- {id: a-3, input: x, criteria: y}\n", "s.eval.yaml")
    dups = [f for f in a.findings + a.omitted if f.code == "duplicate-test-id"]
    assert len(dups) == k + 1
    assert {f.fixes[0].title for f in dups[:-1]} == {f"Rename to 'a-{k + 2}'"}  # the first name no test has
    assert dups[-1].fixes[0].title == "Rename to 'a-3-2'"
    assert asked[0] <= 3 * (k + 1)


# --- AgentV: tests that come again with the same text -----------------------------------------------

A = "description: d\nexecution:\n  target: default\ntests:\n"

# Tests that repeat, at other lines and columns: incomplete ones (their check is moved to the repeat),
# complete ones and those whose check reads around them or depends on more than their text (checked
# again), with fixes and related places.
REPEATED_TESTS = [
    A + "- {}\n" * 20 + "-   {}\n" + "- {id: a}\n" * 3 + "- {input: x}\n" * 3 + "- {id: 1, input: x}\n" * 3,
    "tests: [" + "{}," * 30 + "{id: a, input: x, criteria: y}, {id: a, input: x, criteria: y}, { }]\n",
    A + "- id: a\n  input: hi\n  criterias: x\n" * 3 + "-   id: a\n    input: hi\n    criterias: x\n" * 2,
    A + "- id: r\n  input: hi\n  rubrics:\n    - a\n" * 3 + "- input: hi\n  rubrics: [a]\n" * 3,
    A + "- {id: t, input: hi, assert: [{type: regex, value: '(?i)x'}], criteria: 1}\n" * 3
    + "- id: t\n  input: hi\n  assert:\n    - type: regex\n      value: '(?i)x'\n      flags: q\n" * 3,
    A + "- {id: '${{ NOPE }}'}\n" * 3 + "- &a {id: x}\n- *a\n- *a\n",
    A + "- {id: t, input: [{role: user, content: [{type: file, value: ./missing.txt}]}]}\n" * 3,
    A + "- 12\n- 12\n- [a]\n- [a]\n- null\n- null\n- {execution: {skip_defaults: yes}}\n" * 2,
]


def _agentv_afresh(monkeypatch: pytest.MonkeyPatch, text: str, name: str) -> Analysis:
    from evalspec.agentv.testcase import RepeatedTests

    with monkeypatch.context() as m:
        m.setattr(RepeatedTests, "SAME_ITEMS", 0)
        return analyze(text, name)


def _tests(a: Analysis) -> list[dict[str, object]]:
    assert a.suite is not None
    return [dataclasses.asdict(t) for t in a.suite.tests]


@pytest.mark.parametrize("text", REPEATED_TESTS)
def test_a_repeated_test_gets_what_checking_it_again_gives(text: str, monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "s.eval.yaml"
    a = analyze(text, path)
    fresh = _agentv_afresh(monkeypatch, text, str(path))
    assert a.findings and _findings(a) == _findings(fresh)
    assert _tests(a) == _tests(fresh)


def test_corpus_suites_repeated_give_what_checking_each_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus suite's tests, each written three times (other lines), and once more with its `id`
    dropped (an incomplete test, the kind whose check is reused)."""
    compared = 0
    for path in sorted(CORPUS.rglob("*.eval.y*ml")):
        a = analyze(path.read_text(encoding="utf-8"), path)
        tests = a.parsed.documents[0].root.get("tests") if a.parsed.documents and hasattr(
            a.parsed.documents[0].root, "get") else None
        if not hasattr(tests, "items"):
            continue
        starts = [0] + [i + 1 for i, c in enumerate(a.text) if c == "\n"]
        items = []
        for s in (n.span for n in tests.items if n.span.start_col >= 2):  # type: ignore[union-attr]
            first, *rest = a.text[starts[s.start_line] + s.start_col:starts[s.end_line] + s.end_col].split("\n")
            cut = " " * (s.start_col - 2)  # written again as `- item` at column 0
            if all(not line.strip() or line.startswith(cut) for line in rest):
                items.append("\n".join([first, *[line[len(cut):] for line in rest]]))
        if not items:
            continue
        body = "".join(f"- {item}\n" * 3 for item in items)
        body += "".join(f"- {item}\n" * 2 for item in (i.replace("id:", "idd:", 1) for i in items))
        text = A + body
        got = analyze(text, path.with_name("repeated.eval.yaml"))
        fresh = _agentv_afresh(monkeypatch, text, str(path.with_name("repeated.eval.yaml")))
        assert _findings(got) == _findings(fresh), path
        assert _tests(got) == _tests(fresh), path
        compared += 1
    assert compared >= 3


def _count_test_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from evalspec.agentv import testcase

    calls = [0]
    real = testcase.check_test

    def counted(*args: object, **kw: object) -> object:
        calls[0] += 1
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(testcase, "check_test", counted)
    return calls


def test_repeated_incomplete_tests_are_checked_once_each_text(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_test_checks(monkeypatch)
    n = 20_000
    a = analyze(A + "- {}\n" * n + "- {id: a}\n" * n, "s.eval.yaml")
    assert len(a.errors) == 2 * n  # each test: incomplete-test
    assert calls[0] == 2


def test_tests_that_differ_give_a_test_or_read_around_them_are_each_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_test_checks(monkeypatch)
    analyze(A + "".join(f"- {{id: t{i}}}\n" for i in range(50)), "s.eval.yaml")
    assert calls[0] == 50
    for text, n in ((A + "- {id: t, input: x, criteria: y}\n" * 10, 10),  # each gives a test
                    (A + "- input: hi\n  rubrics:\n    - a\n" * 10, 10),  # its fix reads the lines around it
                    (A + "- {id: '${{ X }}'}\n" * 10, 10),  # its value is the variable's
                    # an alias in a test (its anchor may be defined again between two of them)
                    (A.replace("description: d", "description: &v d") + "- {input: *v}\n" * 10, 10)):
        calls[0] = 0
        analyze(text, "s.eval.yaml")
        assert calls[0] == n, text


# --- what every analysis does once per finding ---------------------------------------------------------

def _capped_by_a_loop(findings: list, limit: int) -> tuple[list, list]:
    """`capped` as it was written first, one finding at a time: what the passes in C must give."""
    from collections import Counter

    keys = [(f.path, f.code) for f in findings]
    counts = Counter(keys)
    shown, omitted, seen = [], [], dict.fromkeys((k for k, n in counts.items() if n > limit + 1), 0)
    for f, key in zip(findings, keys, strict=True):
        if key not in seen:
            shown.append(f)
            continue
        k = seen[key] = seen[key] + 1
        if k <= limit:
            shown.append(f)
        elif k == limit + 1:
            more = counts[key] - k
            where = "this file" if f.path is None else "that file"
            shown.append(dataclasses.replace(
                f, message=f"{f.message} (and {more:,} more '{f.code}' finding{'s' if more > 1 else ''} after this one "
                           f"in {where}, not listed: only the first {k:,} of each kind are)", extra={**f.extra, "more": more}))
        elif f.severity == "error":
            omitted.append(f)
    return shown, omitted


@pytest.mark.parametrize("seed", range(6))
def test_capped_and_the_order_are_those_of_the_loops_they_replace(seed: int) -> None:
    from evalspec.analysis import capped, in_text_order
    from evalspec.findings import Finding, Severity, Span

    rng = random.Random(seed)
    paths = [None] if seed % 2 else [None, "a.jsonl", "b.yaml"]
    findings = [Finding(rng.choice("abcd"), rng.choice(list(Severity)), f"m{i}",
                        Span(rng.randrange(40), rng.randrange(5), 50, 0), path=rng.choice(paths))
                for i in range(rng.randrange(200, 400))]
    ordered = list(findings)
    in_text_order(ordered)
    assert ordered == sorted(findings, key=lambda f: (f.path or "", f.span.start_line, f.span.start_col, f.code))
    for limit in (3, 10, 1000):
        assert capped(ordered, limit) == _capped_by_a_loop(ordered, limit)


def test_the_error_count_is_the_length_of_the_errors_without_making_them() -> None:
    """The server asks how many errors a file has on its event loop (lenses, Plan, Run): `errors` makes a
    corrected copy of every omitted one (2.8 million for a 4 MB flow list of `{}`: seconds there)."""
    a = analyze(W + "- prompt: x\n  shuld: 1\n" + "- {}\n" * 3000, "b.yml")
    assert a.omitted and any(f.severity == "warning" for f in a.findings)
    assert a.error_count == 3000 + 2999  # each misses its prompt; all but one repeat an id
    assert "omitted errors" not in a.memo  # counted, not made
    assert a.error_count == len(a.errors)
    clean = analyze(W + "- prompt: hi\n", "c.yml")
    assert clean.error_count == len(clean.errors) == 0


def test_a_long_line_is_read_once_for_the_requests_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flow list on one 4 MB line took 0.7 s to read, and a hover read it 8 times: a long line's shape is
    kept (the last few), the same for every caller."""
    from evalspec.ide import lines as ide_lines
    from evalspec.ide.hover import hover

    line = "  should: [" + "{a: b}, " * 2000 + "x]"
    text = W + "- prompt: hi\n" + line + "\n"
    a = analyze(text, "b.yml")
    reads: list[int] = []
    real = ide_lines._value
    monkeypatch.setattr(ide_lines, "_value", lambda t: reads.append(len(t)) or real(t))
    monkeypatch.setattr(ide_lines, "_LONG_SHAPES", {})
    for _ in range(3):
        hover(a, 4, len(line) // 2)
    assert len([n for n in reads if n > ide_lines.LONG_LINE]) == 1
    assert ide_lines.shape(line) is ide_lines.shape(line) == ide_lines._shape(line)
