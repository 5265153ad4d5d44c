"""A big file's items read in several processes (engine/item_processes.py, `analyze(processes=N)`), as
`check` and `run` read a big file: the findings, the model and what a run's check notes for its plan are
exactly those of one process, on every real and test file, on broken ones (read again in one process), past
the bound where prompts are kept as records; no forked process outlives the read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalspec import item_processes
from evalspec.analysis import Analysis, analyze
from evalspec.run.plan.weval import PromptPass
from evalspec.weval import prompt_store

from .test_streamed_analysis import BROKEN, FILES

FORKED: list[int] = []  # the processes item_processes forked in this module's tests


@pytest.fixture(autouse=True)
def _forks_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            FORKED.append(pid)
        return pid

    monkeypatch.setattr(item_processes.os, "fork", fork)


def _no_children() -> None:
    """Every process the reads forked is gone and reaped (none left to this one)."""
    while FORKED:
        with pytest.raises(ChildProcessError):
            os.waitpid(FORKED.pop(), os.WNOHANG)


def _notes(a: Analysis) -> tuple[object, ...]:
    n = a.weval.notes if a.weval is not None else None
    if n is None:
        return ()
    assert isinstance(n, PromptPass)
    return (list(n.generated), list(n.chars), list(n.judged), n.settings, list(n.lines),
            [n.entry_json(k) for k in range(len(n))])


def _same(one: Analysis, shared: Analysis) -> None:
    assert shared.kind == one.kind
    assert [repr(f) for f in shared.findings] == [repr(f) for f in one.findings]
    assert [repr(f) for f in shared.omitted] == [repr(f) for f in one.omitted]
    if one.blueprint is not None:
        assert shared.blueprint is not None
        assert shared.blueprint.to_dict() == one.blueprint.to_dict()
        assert [p.to_dict() for p in shared.blueprint.prompts] == [p.to_dict() for p in one.blueprint.prompts]
    if one.suite is not None:
        assert shared.suite is not None and shared.suite.to_dict() == one.suite.to_dict()
    assert _notes(shared) == _notes(one)
    assert shared.dependencies == one.dependencies
    _no_children()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_files_read_in_three_processes(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    _same(analyze(text, path, env={}, streamed=True, note_prompts=PromptPass),
          analyze(text, path, env={}, streamed=True, note_prompts=PromptPass, processes=3))


@pytest.mark.parametrize("text", BROKEN)
def test_broken_files_read_in_three_processes(text: str) -> None:
    """A syntax error in any part is read again in one process: the findings a serial read gives."""
    _same(analyze(text, "b.weval.yml", streamed=True), analyze(text, "b.weval.yml", streamed=True, processes=3))


def _blueprint(n: int, extra: str = "") -> str:
    items = "".join(f"- id: p{k}\n  prompt: \"q{k}\"\n  should: [$contains: a{k}, {{$word_count_between: [1, 9]}}]\n"
                    + ("  system: s\n  temperature: 0.5\n" if k % 7 == 0 else "") for k in range(n))
    return f"title: t\nmodels: [echo]\n---\n{items}{extra}"


@pytest.mark.parametrize("bound", [3, 4096])
@pytest.mark.parametrize("processes", [2, 4])
def test_a_blueprint_past_the_bound_of_kept_prompts(bound: int, processes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prompts kept as records (the bound at 3) or as objects; ids repeated across the parts (the finding and
    its Related name the first, in another process's part), a refused prompt, the notes of a run's check."""
    monkeypatch.setattr(prompt_store, "DEFAULT_BOUND", bound)
    text = _blueprint(300, "- id: p3\n  prompt: again\n- id: x\n  prompt: ''\n- id: p299\n  prompt: last\n")
    one = analyze(text, "b.weval.yml", streamed=True, note_prompts=PromptPass)
    shared = analyze(text, "b.weval.yml", streamed=True, note_prompts=PromptPass, processes=processes)
    assert [f.code for f in one.findings].count("duplicate-prompt-id") == 2
    _same(one, shared)
    only = analyze(text, "b.weval.yml", streamed=True, findings_only=True, processes=processes)
    assert [repr(f) for f in only.findings] == [repr(f) for f in one.findings]


def test_a_part_that_cannot_be_read_apart_is_read_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A syntax error in the last part (another process's) and a line in an item's quoted scalar that looks
    like an item: both read as one process reads them."""
    broken = _blueprint(200, "- id: bad\n  prompt: [unclosed\n")
    _same(analyze(broken, "b.weval.yml", streamed=True), analyze(broken, "b.weval.yml", streamed=True, processes=2))
    looks = _blueprint(100) + "- id: q\n  prompt: \"one\n- two\"\n" + _blueprint(100).split("---\n")[1].replace("id: p", "id: r")
    one = analyze(looks, "b.weval.yml", streamed=True)
    assert one.blueprint is not None and any(p.id == "q" for p in one.blueprint.prompts)
    _same(one, analyze(looks, "b.weval.yml", streamed=True, processes=2))


def test_a_process_that_dies_is_read_again_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked reader that ends without its results (killed, out of memory): the file is read again here."""
    real = item_processes._child

    def dying(work, start, end, out):  # type: ignore[no-untyped-def]
        os._exit(3)

    monkeypatch.setattr(item_processes, "_child", dying)
    text = _blueprint(50)
    _same(analyze(text, "b.weval.yml", streamed=True), analyze(text, "b.weval.yml", streamed=True, processes=2))
    monkeypatch.setattr(item_processes, "_child", real)


def test_how_many_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(item_processes.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7})
    assert item_processes.parts(None, 999) == 1  # too few to share unless asked
    assert item_processes.parts(None, 1_000) == 3  # MIN_PART items a process at least
    assert item_processes.parts(None, 100_000) == item_processes.AUTO_MOST
    assert item_processes.parts(1, 100_000) == 1
    assert item_processes.parts(3, 2) == 2  # one an item at most
    monkeypatch.setattr(item_processes, "other_threads", lambda: True)
    assert item_processes.parts(4, 100_000) == 1  # a fork would leave another thread's locks behind


def _suite(n: int, extra: str = "") -> str:
    items = "".join(f"  - id: t{k}\n    input: \"q{k}\"\n    criteria: c\n    assert:\n"
                    f"      - {{type: contains, value: \"{k}\", required: true}}\n" for k in range(n))
    return f"description: d\nexecution:\n  target: default\ntests:\n{items}{extra}"


@pytest.mark.parametrize("bound", [3, 4096])
def test_an_agentv_suite_past_the_bound_of_kept_tests(bound: int, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests kept as records (the bound at 3) or as objects, in three processes; a repeated id across the
    parts (its fix's new id, its Related), an invalid test: what one process reads."""
    from evalspec.agentv import test_store

    monkeypatch.setattr(test_store, "DEFAULT_BOUND", bound)
    path = tmp_path / "s.eval.yaml"
    text = _suite(300, "  - id: t3\n    input: again\n    criteria: c\n  - {id: bad}\n")
    one = analyze(text, path, env={}, streamed=True)
    assert [f.code for f in one.findings].count("duplicate-test-id") == 1
    _same(one, analyze(text, path, env={}, streamed=True, processes=3))
    assert one.suite is not None and one.suite.tests is not None
    if bound == 3:  # what a run's plan reads of each stored test without decoding it
        shared = analyze(text, path, env={}, streamed=True, processes=3)
        assert shared.suite is not None
        a, b = one.suite.tests, shared.suite.tests
        assert list(a.outline()) == list(b.outline()) and list(a.plain_inputs()) == list(b.plain_inputs())  # type: ignore[attr-defined]
    only = analyze(text, path, env={}, streamed=True, findings_only=True, processes=3)
    assert [repr(f) for f in only.findings] == [repr(f) for f in one.findings]


def test_a_suite_with_a_tests_file_or_a_secret_in_a_test(tmp_path: Path) -> None:
    """A `file://` reference among the tests is read in one process; a secret a test names
    (`${{ …_API_KEY }}`) is registered in this process too, and masked in what it prints."""
    from evalspec.providers.redact import redact

    (tmp_path / "more.jsonl").write_text('{"id": "j1", "input": "x", "criteria": "c"}\n')
    path = tmp_path / "s.eval.yaml"
    text = _suite(100, "  - file://more.jsonl\n")
    _same(analyze(text, path, env={}, streamed=True), analyze(text, path, env={}, streamed=True, processes=2))
    secret = "sk-shared-secret-0123456789"
    text = _suite(100, "  - id: s\n    input: \"${{ SHARED_API_KEY }}\"\n    criteria: c\n")
    env = {"SHARED_API_KEY": secret}
    shared = analyze(text, path, env=env, streamed=True, processes=2)  # (the secret is in the other part)
    assert redact(f"the key {secret}") == "the key ***"
    _same(analyze(text, path, env=env, streamed=True), shared)


def test_the_files_a_test_in_another_part_looks_for_are_the_analysis_dependencies(tmp_path: Path) -> None:
    """A custom assertion type (`.agentv/assertions/<type>.ts`) named by a test the forked process checks:
    the files looked for are what the analysis depends on (a shard's digest reads them), as in one process."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv" / "assertions").mkdir(parents=True)
    (tmp_path / ".agentv" / "assertions" / "tone.ts").write_text("export default () => ({score: 1})\n")
    path = tmp_path / "s.eval.yaml"
    text = _suite(100, "  - id: c\n    input: q\n    criteria: c\n    assert:\n      - {type: tone}\n"
                       "      - {type: nonesuch}\n")
    one = analyze(text, path, streamed=True)
    assert any(p.name == "tone.ts" for p in one.dependencies)
    assert [f.code for f in one.findings] == ["unknown-assertion-type"]
    _same(one, analyze(text, path, streamed=True, processes=2))
