"""`check` and `run` analyse a blueprint streamed (`analyze(streamed=True)`, what `analyze_file` does): the
prompts of a column-0 list are parsed, checked and dropped one at a time, so the located tree of a
100,000-prompt file never exists at once. Findings (codes, messages, ranges, fixes, related ranges) and the
model must be exactly those of the full analysis the language server makes, on every real and test file and
on broken ones; and the streamed analysis must hold less memory."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from evalspec import source
from evalspec.analysis import Analysis, analyze
from evalspec.source import LazyItems, parse_yaml
from evalspec.text_lines import Lines

from .conftest import CORPUS

HERE = Path(__file__).parent
FILES = sorted(p for root in (CORPUS, HERE / "fixtures") for p in root.rglob("*")
               if p.is_file() and p.suffix in (".yml", ".yaml", ".json"))


def _same(full: Analysis, streamed: Analysis) -> None:
    assert streamed.kind == full.kind
    assert [repr(f) for f in streamed.findings] == [repr(f) for f in full.findings]
    if full.blueprint is not None:
        assert streamed.blueprint is not None
        assert streamed.blueprint.to_dict() == full.blueprint.to_dict()
        assert streamed.weval is not None and streamed.weval.prompt_nodes == []
    else:
        assert streamed.blueprint is None
    if full.suite is not None:
        assert streamed.suite is not None and streamed.suite.to_dict() == full.suite.to_dict()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_files_analyse_the_same_streamed(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    _same(analyze(text, path, env={}), analyze(text, path, env={}, streamed=True))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_files_analyse_the_same_with_lines_as_offsets(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed parse of a big file keeps its lines as offsets into the text (text_lines.Lines): with the
    size from which it does so at 0, every file's streamed analysis is still the full one."""
    monkeypatch.setattr(source, "LINES_AS_OFFSETS_FROM", 0)
    text = path.read_text(encoding="utf-8", errors="replace")
    streamed = analyze(text, path, env={}, streamed=True)
    assert isinstance(streamed.parsed.lines, Lines) and streamed.parsed.lines == text.split("\n")
    _same(analyze(text, path, env={}), streamed)


BROKEN = [
    # a syntax error in the middle item, a duplicate id, a prompt that is not a mapping, a bad point
    "title: t\nmodels: [echo]\n---\n- id: a\n  prompt: one\n- id: b\n  prompt: [unclosed\n- id: a\n  prompt: x\n"
    "- just text\n- id: c\n  prompt: c\n  should:\n    - $contians: x\n",
    # the last item broken (the list's span comes from it), and a tab
    "models: [echo]\n---\n- id: a\n  prompt: one\n- id: z\n\tprompt: two\n",
    # prompts in several documents, a list then a lone mapping
    "title: t\n---\n- prompt: one\n- prompt: two\n---\nprompt: three\n---\n- id: x\n  prompt: four\n",
    # a list with no header, and an empty item
    "- prompt: one\n-\n- id: q\n  prompt: two\n  should_not: [$contains: x]\n",
    # anchors: parsed whole (an alias may point from one item into another)
    "title: t\n---\n- id: a\n  prompt: &p one\n- id: b\n  prompt: *p\n",
    # a header-only file, an empty list document
    "title: only a header\nmodels: [echo]\n",
    "title: t\n---\n",
]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_findings_only_gives_the_same_findings_and_keeps_no_prompt(path: Path) -> None:
    """`evalspec check` reads only the findings (`findings_only`): a blueprint's prompts are checked and
    dropped, none stored, and every finding is the one the full analysis gives."""
    text = path.read_text(encoding="utf-8", errors="replace")
    full, only = analyze(text, path, env={}, streamed=True), analyze(text, path, env={}, streamed=True,
                                                                      findings_only=True)
    assert only.kind == full.kind
    assert [repr(f) for f in only.findings] == [repr(f) for f in full.findings]
    assert [repr(f) for f in only.omitted] == [repr(f) for f in full.omitted]
    if full.blueprint is not None:
        assert only.blueprint is not None and list(only.blueprint.prompts) == []
    if full.suite is not None:
        assert only.suite is not None and list(only.suite.tests) == []


AGENTV_MORE = sorted({*(p for root in (CORPUS, HERE / "fixtures") for p in root.rglob("*")
                        if p.is_file() and p.suffix in (".jsonl", ".csv")),
                      *(p for p in (HERE.parent / "examples").rglob("*") if p.is_file())})


@pytest.mark.parametrize("path", AGENTV_MORE, ids=lambda p: p.name)
def test_findings_only_on_tests_files_and_examples(path: Path) -> None:
    """`evalspec check` of an AgentV tests file (JSON lines, CSV) or an example: the findings of the full
    analysis, no test kept."""
    from evalspec.analysis import analyze_file

    full, only = analyze_file(path, env={}), analyze_file(path, env={}, findings_only=True)
    assert only.kind == full.kind
    assert [repr(f) for f in only.findings] == [repr(f) for f in full.findings]
    if full.suite is not None:
        assert only.suite is not None and list(only.suite.tests) == []


def test_findings_only_on_the_agentv_load_vectors(tmp_path: Path) -> None:
    """Each of AgentV's load vectors (its own suites and their files, tests/agentv/reference_vectors.py) as
    `evalspec check` reads it: the findings of the full analysis, no test kept."""
    from evalspec.analysis import analyze_file
    from evalspec.file_source import DiskSource

    from .agentv.reference_vectors import load_vector, vectors

    checked = 0
    for n, vector in enumerate(vectors("load.jsonl")):
        full = load_vector(vector, tmp_path / str(n))
        only = analyze_file(tmp_path / str(n) / "evals" / "dataset.eval.yaml", source=DiskSource({}),
                            findings_only=True)
        assert [repr(f) for f in only.findings] == [repr(f) for f in full.findings], vector["suite"]
        if full.suite is not None:
            assert only.suite is not None and list(only.suite.tests) == []
            checked += bool(full.suite.tests)
    assert checked > 500


def test_findings_only_stores_no_test_of_a_big_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound where a run's check keeps its tests as records (test_store.py), `evalspec check`'s
    keeps none, with the same findings: repeated ids among the last tests, whose first is in the eval file
    or in a tests file (the finding names that file)."""
    from evalspec.agentv import test_store
    from evalspec.analysis import analyze_file

    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 3)
    stored: list[object] = []
    real = test_store.TestStore.of_tests
    monkeypatch.setattr(test_store.TestStore, "of_tests",
                        classmethod(lambda cls, ts, spill=None: stored.append(ts) or real.__func__(cls, ts, spill)))
    (tmp_path / ".git").mkdir()
    (tmp_path / "more.jsonl").write_text('{"id": "j1", "input": "x", "criteria": "c"}\n'
                                         '{"id": "j2", "input": "y", "criteria": "c"}\n')
    items = "".join(f"  - {{id: t{n}, input: q{n}, criteria: c}}\n" for n in range(8))
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(f"description: d\ntests:\n{items}  - file://more.jsonl\n  - {{id: t7, input: again, criteria: c}}\n"
                     "  - {input: no id, criteria: c}\n  - {id: j2, input: z, criteria: c}\n"
                     "  - {id: t2, input: third, criteria: c}\n")
    full = analyze_file(suite, env={})
    assert stored and full.suite is not None and len(full.suite.tests) == 10
    stored.clear()
    only = analyze_file(suite, env={}, findings_only=True)
    assert not stored and only.suite is not None and list(only.suite.tests) == []
    dupes = [f for f in full.findings if f.code == "duplicate-test-id"]
    assert len(dupes) == 3 and any("(in more.jsonl)" in r.message for f in dupes for r in f.related)
    assert [repr(f) for f in only.findings] == [repr(f) for f in full.findings]


def test_findings_only_stores_no_prompt_of_a_big_blueprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound where a run's check keeps its prompts as records (prompt_store.py), `evalspec check`'s
    keeps none, with the same findings (a duplicate id and a refused prompt among the last ones)."""
    from evalspec.weval import prompt_store

    monkeypatch.setattr(prompt_store, "DEFAULT_BOUND", 3)
    stored: list[object] = []
    real = prompt_store.PromptStore.of_prompts
    monkeypatch.setattr(prompt_store.PromptStore, "of_prompts",
                        classmethod(lambda cls, ps: stored.append(ps) or real.__func__(cls, ps)))
    items = "".join(f"- id: p{n}\n  prompt: q{n}\n  should: [$contains: a{n}]\n" for n in range(8))
    text = f"title: t\nmodels: [echo]\n---\n{items}- id: p7\n  prompt: again\n- id: x\n  prompt: ''\n"
    full = analyze(text, "b.weval.yml", streamed=True)
    assert stored and full.blueprint is not None and len(full.blueprint.prompts) == 10
    stored.clear()
    only = analyze(text, "b.weval.yml", streamed=True, findings_only=True)
    assert not stored and only.blueprint is not None and list(only.blueprint.prompts) == []
    assert {f.code for f in full.findings} >= {"duplicate-prompt-id", "empty-prompt"}
    assert [repr(f) for f in only.findings] == [repr(f) for f in full.findings]


def test_findings_only_does_not_apply_to_an_editors_analyses() -> None:
    """An editor's caches keep checked prompts for its next analysis: one asked for findings only still
    makes whole prompts, so the next, full analysis hands out no prompt without its reference form."""
    from evalspec.analysis import Caches

    text = "title: t\nmodels: [echo]\n---\n- id: a\n  prompt: q\n  should: [$contains: a]\n"
    caches = Caches()
    first = analyze(text, "b.weval.yml", caches=caches, findings_only=True)
    again = analyze(text, "b.weval.yml", caches=caches)
    for a in (first, again):
        assert a.blueprint is not None and [p.reference is not None for p in a.blueprint.prompts] == [True]
    suite = "description: d\ntests:\n  - id: a\n    input: q\n    criteria: c\n"
    caches = Caches()
    for a in (analyze(suite, "s.eval.yaml", caches=caches, findings_only=True), analyze(suite, "s.eval.yaml", caches=caches)):
        assert a.suite is not None and [t.id for t in a.suite.tests] == ["a"]


@pytest.mark.parametrize("offsets", [False, True], ids=["lines", "offsets"])
@pytest.mark.parametrize("text", BROKEN)
def test_broken_blueprints_analyse_the_same_streamed(text: str, offsets: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if offsets:
        monkeypatch.setattr(source, "LINES_AS_OFFSETS_FROM", 0)
    _same(analyze(text, "b.weval.yml"), analyze(text, "b.weval.yml", streamed=True))


def test_lazy_items_read_like_the_list(tmp_path: Path) -> None:
    text = "".join(f"- id: p{i}\n  prompt: q{i}\n" for i in range(7)) + "- [broken\n"
    full, streamed = parse_yaml(text), parse_yaml(text, streamed=True)
    items = streamed.documents[0].root.items  # type: ignore[union-attr]
    assert isinstance(items, LazyItems)
    expected = full.documents[0].root.items  # type: ignore[union-attr]
    assert streamed.documents[0].root.span == full.documents[0].root.span  # type: ignore[union-attr]
    assert len(items) == len(expected) == 8 and bool(items)
    assert [n.span for n in items[:3]] == [n.span for n in expected[:3]]
    assert items[5].span == expected[5].span and items[-1].span == expected[-1].span
    # each item's syntax findings once, however often it is read
    list(items)
    assert [repr(f) for f in streamed.findings] == [repr(f) for f in full.findings]


def _many(n: int, broken: dict[int, str]) -> str:
    """A blueprint of n prompts, with the prompts of `broken` replaced by the text given."""
    items = [broken.get(i, f"- id: p{i}\n  prompt: q{i}\n  should:\n    - $contains: q{i}\n") for i in range(n)]
    return "title: t\nmodels: [echo]\n---\n" + "".join(items)


@pytest.mark.parametrize("broken", [
    {},  # clean groups only, and a last partial group
    {40: "- id: p40\n  prompt: [unclosed\n", 77: "- id: p77\n\tprompt: tab\n"},  # two groups hold a broken item
    {0: "- [broken\n", 31: "- id: p31\n  prompt: a\n  prompt: dup\n", 32: "- {\n", 99: "- id: [x\n"},  # group edges
], ids=["clean", "broken-inside-groups", "broken-at-group-edges"])
def test_items_parsed_a_group_at_a_time_give_what_they_give_one_by_one(broken: dict[int, str]) -> None:
    """Streamed items are parsed LazyItems.GROUP at a time; a group holding a broken item is parsed again
    item by item, so findings, their order and every node are the full analysis's."""
    text = _many(100, broken)
    full, streamed = analyze(text, "b.weval.yml"), analyze(text, "b.weval.yml", streamed=True)
    _same(full, streamed)
    assert len([f for f in full.findings if f.code == "yaml-syntax"]) >= len(broken) - 1
    parsed = parse_yaml(text, streamed=True)
    items = parsed.documents[1].root.items  # type: ignore[union-attr]
    assert [n.span for n in items] == [n.span for n in parse_yaml(text).documents[1].root.items]  # type: ignore[union-attr]
    assert [repr(f) for f in parsed.findings] == [repr(f) for f in parse_yaml(text).findings]


def _blueprint(n: int) -> str:
    lines = ["title: Memory", "models: [echo]", "---"]
    for i in range(n):
        lines += [f"- id: p{i}", f"  prompt: \"Question {i}: what is the answer number {i}?\"",
                  "  should:", f"    - $contains: \"answer number {i}\"", "    - $word_count_between: [3, 60]"]
    return "\n".join(lines) + "\n"


def _peak(text: str, streamed: bool) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        analysis = analyze(text, "m.weval.yml", streamed=streamed)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert analysis.blueprint is not None and len(analysis.blueprint.prompts) == 3000
    return peak


def test_a_streamed_analysis_never_holds_the_whole_tree() -> None:
    text = _blueprint(3000)
    full, streamed = _peak(text, False), _peak(text, True)
    # The tree of every prompt was over half of the full analysis's peak; streamed, only the model and
    # the text's lines remain (measured: about 0.45 of it).
    assert streamed < 0.7 * full, (streamed, full)


def test_an_analysis_leaves_no_reference_cycles_behind() -> None:
    """The `evalspec` process runs with the cyclic collector off (cli.main): anything an analysis leaves in
    a reference cycle stays for the whole run. A point's value converted by a closure that called itself
    left 6 objects per point (~100 MB for a 100,000-prompt blueprint)."""
    text = "title: t\nmodels: [openai:m]\n---\n" + "".join(
        f'- id: p{i}\n  prompt: "q {i}"\n  should:\n    - $contains: "a {i}"\n    - $word_count_between: [3, 60]\n'
        for i in range(300))
    gc.collect()
    gc.disable()
    try:
        analysis = analyze(text, Path("b.weval.yml"), env={}, streamed=True)
        found = gc.collect()
    finally:
        gc.enable()
    assert analysis.blueprint is not None and len(analysis.blueprint.prompts) == 300 and not analysis.errors
    assert found < 100  # before: 3,600


def test_the_file_text_goes_with_the_analysis_without_the_collector(tmp_path: Path) -> None:
    """`evalspec run` drops its analysis once the plan is made: the file's text and lines (~60 MB for a
    100,000-prompt blueprint) must go then by reference counting alone, since the collector is off. The
    streamed list's items held the ParsedFile that held them (a cycle): the text lived for the whole run."""
    import weakref

    from evalspec.analysis import analyze_file
    from evalspec.run.options import RunOptions
    from evalspec.run.plan.plan_for import plan_for

    path = tmp_path / "b.weval.yml"
    path.write_text(_blueprint(50).replace("models: [echo]", "models: [openai:m]"), encoding="utf-8")
    gc.collect()
    gc.disable()
    try:
        analysis = analyze_file(path, env={})
        assert analysis.parsed.streamed or isinstance(analysis.parsed.documents[1].root.items, LazyItems)  # type: ignore[union-attr]
        parsed, whole = weakref.ref(analysis.parsed), weakref.ref(analysis)
        plan = plan_for(analysis, RunOptions(output=tmp_path / "out", env={}))
        del analysis
        assert whole() is None and parsed() is None
        assert len(plan.tasks) == 50
    finally:
        gc.enable()


SUITES = [
    # From the seed-24 long fuzz run. A syntax error in a test of a file named like no format: the detection
    # read the streamed tests (and their error) before the check, so `check` did not read the file whole
    # and called it a suite where the editor and a whole parse call it unrelated YAML.
    ("demo.yaml", "description: d\ntests:\n  - id: a\n    input: x\n    assert: 1\n      # c\n      - b\n"
                  "  - id: b\n    input: y\n    criteria: c\n"),
    # A list of tests at the root: its `${{ VAR }}` were scanned with the document and again as a tests
    # file's, so the full analysis said each unset variable twice.
    ("s.eval.yaml", '- id: a\n  input: "${{ NOPE_X }}"\n  criteria: c\n'),
    ("s.eval.yaml", 'a: *x\n%TAG !e! !\n---\n- id: a\n  input: "${{ NOPE_X }}"\n  criteria: c\n'),
    # A NUL in a comment before the first test: no test's part of the text held it, so `check` never read it
    # (a whole parse refuses the file there).
    ("s.eval.yaml", "tests:\n  # a comment\x00\n  - id: a\n    input: x\n    criteria: c\n"),
    ("b.weval.yml", "title: t\nmodels: [openai:gpt-4o-mini]\n--- # \x01\n# c\x00\n- id: a\n  prompt: x\n"),
]


@pytest.mark.parametrize(("name", "text", "at"), [
    ("s.eval.yaml", "tests:\n  # é comment\x00\n  - id: a\n    input: x\n    criteria: c\n", (1, 13)),
    ("b.weval.yml", "title: t\nmodels: [openai:gpt-4o-mini]\n---\n# c\n- id: a\n  prompt: x\n- id: b\n  prompt: é\x7f\n",
     (7, 11)),
])
def test_a_character_yaml_refuses_is_reported_where_it_is(name: str, text: str, at: tuple[int, int]) -> None:
    # libyaml's reader error has no mark, only an offset in UTF-8 bytes: it was reported at the part's start.
    for a in (analyze(text, name, env={}), analyze(text, name, env={}, streamed=True)):
        syntax = [f for f in a.findings if f.code == "yaml-syntax"]
        assert [(f.span.start_line, f.span.start_col) for f in syntax] == [at], a.findings


@pytest.mark.parametrize(("name", "text"), SUITES, ids=range(len(SUITES)))
def test_suites_analyse_the_same_streamed(name: str, text: str) -> None:
    full = analyze(text, name, env={})
    _same(full, analyze(text, name, env={}, streamed=True))
    assert [f.code for f in full.findings].count("unset-variable") <= 1
