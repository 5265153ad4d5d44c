"""`check` and `run` read an AgentV suite streamed: the block list under a column-0 `tests:` key is parsed
item by item as it is read (source.LazyItems), each test is checked and dropped, and past
test_store.DEFAULT_BOUND the checked tests wait on disk (agentv/test_store.py). The findings and the model
must be exactly the full analysis's (the editor's), on every shape of suite, broken ones included."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from evalspec import source
from evalspec.agentv import test_store
from evalspec.agentv.model import AgentvTest
from evalspec.analysis import analyze, analyze_file
from evalspec.source import is_lazy

from ..test_streamed_analysis import _same

TESTS = "".join(f"  - id: t{i}\n    input: hello {i}\n    assert:\n      - {{type: contains, value: \"{i}\"}}\n"
                for i in range(5))
SUITES = [
    # the plain shape: tests last, a trailing newline
    f"name: s\ndescription: d\ntests:\n{TESTS}",
    # no trailing newline, a comment on the key, comments and blank lines between and inside items
    f"name: s\ndescription: d\ntests:   # the cases\n\n  # first\n{TESTS}\n# at column 0\n  - id: last\n    input: x",
    # tests at column 0, then more keys
    "name: s\ndescription: d\ntests:\n- id: a\n  input: one\n- id: b\n  input: two\nassert:\n  - {type: contains, value: o}\n"
    "execution:\n  target: default\n",
    # a duplicate id, an unknown key, a string that is not a reference, a wrong type, an unset variable
    "name: s\ndescription: d\ntests:\n  - id: a\n    input: one\n  - id: a\n    input: again\n  - id: c\n    inptu: x\n"
    "  - just text\n  - id: d\n    input: ${{ EVALSPEC_SURELY_UNSET }} and ${{ EVALSPEC_SURELY_UNSET }}\n"
    "    criteria: [1]\n",
    # a syntax error in one test (the whole parse loses the document; so must the streamed one)
    f"name: s\ndescription: d\ntests:\n{TESTS}  - id: broken\n    input: [unclosed\n  - id: after\n    input: x\n",
    # anchors and aliases: parsed whole
    "name: s\ndescription: d\ninput: &i hello\ntests:\n  - id: a\n    input: *i\n  - id: b\n    input: two\n",
    # a test's line less indented than its items, a tab: parsed whole
    "name: s\ndescription: d\ntests:\n  - id: a\n    input: \"one\n two\"\n  - id: b\n    input: x\n",
    "name: s\ndescription: d\ntests:\n  - id: a\n\t  input: one\n",
    # a tab after the indentation of a line inside a test, a comment and a blank line there
    "name: s\ndescription: d\ntests:\n  - id: a\n    input: one\n     \t# note\n\n    criteria: c\n  - id: b\n    input: x\n",
    # a flow list, an empty list, a reference, two `tests:` keys
    "name: s\ndescription: d\ntests: [{id: a, input: one}]\n",
    "name: s\ndescription: d\ntests:\n",
    "name: s\ndescription: d\ntests: ./none.jsonl\n",
    "name: s\ndescription: d\ntests:\n  - id: a\n    input: x\ntests:\n  - id: b\n    input: y\n",
    # a second document
    f"name: s\ndescription: d\ntests:\n{TESTS}---\nname: other\n",
]


@pytest.mark.parametrize("offsets", [False, True], ids=["lines", "offsets"])
@pytest.mark.parametrize("text", SUITES)
def test_suites_analyse_the_same_streamed(text: str, offsets: bool, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    if offsets:
        monkeypatch.setattr(source, "LINES_AS_OFFSETS_FROM", 0)
    path = tmp_path / "s.eval.yaml"
    _same(analyze(text, path, env={}), analyze(text, path, env={}, streamed=True))
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 1)  # every test on disk
    _same(analyze(text, path, env={}), analyze(text, path, env={}, streamed=True))


def test_a_suite_s_tests_are_parsed_as_they_are_read() -> None:
    parsed = source.parse_yaml(SUITES[0], streamed=True)
    root = parsed.documents[0].root
    assert isinstance(root, source.Mapping) and is_lazy(root.get("tests"))
    full = source.parse_yaml(SUITES[0]).documents[0].root
    assert isinstance(full, source.Mapping)
    assert root.span == full.span
    assert root.get("tests").span == full.get("tests").span  # type: ignore[union-attr]
    assert parsed.documents[0].span == source.parse_yaml(SUITES[0]).documents[0].span


def _live_tests() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is AgentvTest)


def test_tests_files_are_read_streamed_and_kept_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inline tests, a JSONL file and a YAML tests file (a list, and a mapping with `tests:`), all past the
    bound: the suite's tests are a TestStore equal to the full analysis's list, and no test is alive
    but those decoded last (beyond those an earlier test in the same process left alive)."""
    alive_before = _live_tests()
    jsonl = "".join(f'{{"id": "j{i}", "input": "json {i}", "criteria": "c"}}\n' for i in range(6))
    (tmp_path / "cases.jsonl").write_text(jsonl + "not json\n", encoding="utf-8")
    (tmp_path / "more.yaml").write_text("".join(f"- id: y{i}\n  input: yaml {i}\n  criteria: c\n" for i in range(4)), encoding="utf-8")
    (tmp_path / "keyed.yaml").write_text("tests:\n" + "".join(f"  - id: k{i}\n    input: k {i}\n    criteria: c\n" for i in range(3))
                                         + "  - id: j1\n    input: a repeat\n    criteria: c\n", encoding="utf-8")
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(f"name: s\ndescription: d\ntests:\n{TESTS}  - file://cases.jsonl\n  - file://more.yaml\n"
                     "  - file://keyed.yaml\n  - id: end\n    input: the end\n    criteria: c\n", encoding="utf-8")
    full = analyze(suite.read_text(encoding="utf-8"), suite)
    assert full.suite is not None
    ids = [t.id for t in full.suite.tests]
    assert ids[:7] == ["t0", "t1", "t2", "t3", "t4", "j0", "j1"] and ids[-2:] == ["k2", "end"] and len(ids) == 19
    assert {f.code for f in full.findings} >= {"invalid-jsonl", "duplicate-test-id"}
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 2)
    monkeypatch.setattr(test_store, "RECENT", 1)
    streamed = analyze_file(suite)
    _same(full, streamed)
    tests = streamed.suite.tests  # type: ignore[union-attr]
    assert isinstance(tests, test_store.TestStore) and tests.ids() == ids
    del full
    assert _live_tests() - alive_before <= 1
    assert tests[7] == tests[7] and _live_tests() - alive_before <= 2
    # the store's file has no name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl", "keyed.yaml", "more.yaml", "s.eval.yaml"]


def test_a_big_tests_file_is_read_outside_the_editor_s_limit(tmp_path: Path) -> None:
    """The editor reads a suite's tests files up to 10 MB in all; `check` and `run` up to the CLI's 32 MB."""
    line = '{"id": "x%d", "input": "%s", "criteria": "c"}\n'
    (tmp_path / "big.jsonl").write_text("".join(line % (i, "a" * 200) for i in range(60_000)), encoding="utf-8")
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("name: s\ndescription: d\ntests: ./big.jsonl\n", encoding="utf-8")
    editor = analyze(suite.read_text(encoding="utf-8"), suite)
    assert [f.code for f in editor.findings] == ["tests-limit"] and "10 MB" in editor.findings[0].message
    cli = analyze_file(suite)
    assert not cli.findings and cli.suite is not None and len(cli.suite.tests) == 60_000


@pytest.mark.parametrize("body", [
    "tests:\n  - id: a\n    input: one\n    criteria: c\n  - id: b\n    input: [unclosed\n  - id: c\n    input: x\n    criteria: c\n",
    "- id: a\n  input: one\n  criteria: c\n- id: b\n  input: [unclosed\n- id: c\n  input: x\n  criteria: c\n",
])
def test_a_broken_tests_file_reads_the_same_streamed(body: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A syntax error inside a tests file: as a `tests:` mapping the whole parse loses the document (so the
    streamed check reads such a file whole), as a list only the broken test."""
    (tmp_path / "cases.yaml").write_text(body, encoding="utf-8")
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("name: s\ndescription: d\ntests:\n  - file://cases.yaml\n  - id: z\n    input: z\n    criteria: c\n",
                     encoding="utf-8")
    full = analyze(suite.read_text(encoding="utf-8"), suite)
    assert any(f.code == "yaml-syntax" for f in full.findings)
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 1)
    _same(full, analyze_file(suite))


def test_a_store_s_records_are_deflated_a_block_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's file is written to the disk: its records are deflated a block at a time (a suite's
    tests share their keys and assertions), each read back equal to the test it was."""
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("name: s\ndescription: d\ntests:\n" + "".join(
        f"  - id: t{i}\n    input: \"Question {i}: what is the answer number {i}?\"\n    criteria: c\n    assert:\n"
        f"      - {{type: contains, value: \"{i}\", required: true}}\n      - {{type: regex, value: \"[a-z]+\"}}\n"
        for i in range(60)), encoding="utf-8")
    full = analyze(suite.read_text(encoding="utf-8"), suite)
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 2)
    tests = analyze_file(suite).suite.tests  # type: ignore[union-attr]
    assert isinstance(tests, test_store.TestStore) and full.suite is not None
    assert list(tests) == list(full.suite.tests)
    plain = sum(len(test_store._encode(t)) for t in full.suite.tests)
    tests.flush()
    assert tests._file.stored_bytes() * 3 < plain  # ~100 bytes a test where its plain record is ~700


def test_a_store_s_outline_is_its_tests_ids_spans_and_files_without_decoding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run/plan/items.entries (the fingerprints a run's database keeps) reads a store's outline: the same
    items as from the tests themselves, a subset's too, and no test decoded for it."""
    from evalspec.run.plan import items

    (tmp_path / "more.yaml").write_text("".join(f"- id: y{i}\n  input: yaml {i}\n  criteria: c\n" for i in range(3)),
                                        encoding="utf-8")
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(f"name: s\ndescription: d\ntests:\n{TESTS}  - file://more.yaml\n  - id: end\n    input: x\n"
                     "    criteria: c\n", encoding="utf-8")
    full = analyze(suite.read_text(encoding="utf-8"), suite)
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 2)
    streamed = analyze_file(suite)
    tests = streamed.suite.tests  # type: ignore[union-attr]
    assert isinstance(tests, test_store.TestStore) and full.suite is not None
    assert list(tests.outline()) == [(t.id, t.span, t.source_path) for t in full.suite.tests]
    subset = tests.subset(lambda n, tid: n % 2 == 1)
    assert list(subset.outline()) == [(t.id, t.span, t.source_path) for t in list(full.suite.tests)[1::2]]
    expected = list(items.entries(full))
    assert [e[1] for e in expected] == ["t0", "t1", "t2", "t3", "t4", "end"]  # the tests written in the file
    decoded = []
    real = test_store._TestCodec.decode
    monkeypatch.setattr(test_store._TestCodec, "decode", lambda self, data: decoded.append(1) or real(self, data))
    assert list(items.entries(streamed)) == expected and not decoded


@pytest.mark.parametrize("offsets", [False, True], ids=["lines", "offsets"])
def test_a_streamed_test_s_variables_are_found_however_they_are_written(tmp_path: Path, offsets: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed list's test is scanned for `${{ VAR }}` only when its lines hold a `$` or a `\\`
    (interpolate.Values.scan_item): one written through an escape, in a block scalar or on a plain
    scalar's continuation line is found as the whole analysis finds it; a test with neither has none."""
    text = ("name: s\ndescription: d\ntests:\n"
            "  - id: a\n    input: \"\\x24{{ EVALSPEC_SURELY_UNSET }}\"\n"
            "  - id: b\n    input: |\n      line\n      ${{ EVALSPEC_SURELY_UNSET }}\n"
            "  - id: c\n    input: one\n      ${{ EVALSPEC_SURELY_UNSET }}\n"
            "  - id: d\n    input: plain\n")
    path = tmp_path / "s.eval.yaml"
    full = analyze(text, path, env={})
    if offsets:
        monkeypatch.setattr(source, "LINES_AS_OFFSETS_FROM", 0)
    streamed = analyze(text, path, env={}, streamed=True)
    assert is_lazy(streamed.parsed.documents[0].root.get("tests"))  # type: ignore[union-attr]
    _same(full, streamed)
    lines = sorted(f.span.start_line for f in streamed.findings if "EVALSPEC_SURELY_UNSET" in f.message)
    assert lines == [4, 8, 11]


def test_what_a_report_shows_of_a_stored_test_is_read_without_its_assertions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`TestStore.shown` (the report's items) gives a stored test's criteria, input and expected messages
    and reference answer as the test has them, on every shape of content, without decoding the rest."""
    (tmp_path / "doc.txt").write_text("a file", encoding="utf-8")
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "name: s\ndescription: d\ninput: you are terse\ntests:\n"
        "  - id: text\n    input: hello\n    criteria: says hi\n    expected_output: hi\n"
        "  - id: blocks\n    input:\n      - role: user\n        content:\n          - {type: text, value: look}\n"
        "          - {type: file, value: ./doc.txt}\n    expected_output: {answer: 1.0, items: [1, 2]}\n"
        "  - id: listed\n    input: x\n    expected_output:\n      - {role: assistant, content: [1, 2.0]}\n"
        "    assert:\n      - {type: contains, value: x}\n"
        "  - id: empty\n    input: \"\"\n    expected_output: \"\"\n    criteria: c\n", encoding="utf-8")
    full = analyze(suite.read_text(encoding="utf-8"), suite)
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 1)
    tests = analyze_file(suite).suite.tests  # type: ignore[union-attr]
    assert isinstance(tests, test_store.TestStore) and full.suite is not None and len(tests) == 4
    decoded: list[int] = []
    real = test_store._TestCodec.decode
    monkeypatch.setattr(test_store._TestCodec, "decode", lambda self, data: decoded.append(1) or real(self, data))
    for k, t in enumerate(full.suite.tests):
        shown = tests.shown(k)
        assert (shown.criteria, shown.input_messages, shown.expected_messages) == (
            t.criteria, t.input_messages, t.expected_messages)
        assert shown.reference_answer == t.reference_answer
    assert decoded == []
    assert list(tests) == list(full.suite.tests)  # the whole test still decodes as it was
    # a test kept by pickle (a value marshal refuses) shows the same
    import pickle

    t = full.suite.tests[1]
    assert test_store._TestCodec().shown(test_store._PICKLE + pickle.dumps(t)) == test_store.Shown.of(t)
