"""The bounded fuzz run of the suite (issue 15): mutated corpus documents and random YAML-ish text
through `analyze()` and every editor feature. No exception, every range well-formed, and no range the
engine's last guard had to pull back inside the text (that would be a check computing a wrong one).

Deterministic (derandomized, no example database) and bounded by example counts; the long run that
measures documents/s and the slowest cases is bench/fuzz.py.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalspec.analysis as analysis_module

from . import fuzzing

CORPUS = fuzzing.seeds()
BOUNDED = settings(derandomize=True, database=None, deadline=None, print_blob=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def repaired(span, lines):  # type: ignore[no-untyped-def]
    raise AssertionError(f"a finding's range {tuple(span)} had to be pulled inside the text")


def check(path: str, text: str, rnd: random.Random, kind, every_way: bool = False) -> None:  # type: ignore[no-untyped-def]
    with mock.patch.object(analysis_module, "_pulled_in", repaired):
        outcome = fuzzing.check(path, text, rnd, kind=kind, at=4, every_way=every_way)
    assert outcome.problems == [], f"{path} ({kind}):\n{text[:2000]!r}"


def test_the_corpus_and_the_reproducers_as_they_are() -> None:
    rnd = random.Random(0)
    for path, text in CORPUS:
        check(path, text, rnd, None)


@settings(BOUNDED, max_examples=150)
@given(seed=st.integers(0, len(CORPUS) - 1), mutations=st.lists(st.sampled_from(fuzzing.MUTATIONS), min_size=1,
                                                               max_size=3),
       rnd=st.randoms(use_true_random=False), kind=st.sampled_from(fuzzing.KINDS))
def test_mutated_corpus_documents(seed: int, mutations: list[fuzzing.Mutation], rnd: random.Random,
                                  kind) -> None:  # type: ignore[no-untyped-def]
    path, text = CORPUS[seed]
    text = fuzzing.window(rnd, text)
    for mutation in mutations:
        text = mutation(rnd, text)
    check(path, text, rnd, kind, every_way=True)


NEW = fuzzing.MUTATIONS[fuzzing.MUTATIONS.index(fuzzing.tags):fuzzing.MUTATIONS.index(fuzzing.EIGHTH[0])]


@settings(BOUNDED, max_examples=20)
@given(seed=st.integers(0, len(CORPUS) - 1), rnd=st.randoms(use_true_random=False), kind=st.sampled_from(fuzzing.KINDS))
@pytest.mark.parametrize("mutation", NEW, ids=lambda m: m.__name__)
def test_each_new_mutation(mutation: fuzzing.Mutation, seed: int, rnd: random.Random, kind) -> None:  # type: ignore[no-untyped-def]
    """Each of the mutations added for the judged round, alone, then with one of any kind."""
    path, text = CORPUS[seed]
    text = mutation(rnd, fuzzing.window(rnd, text))
    check(path, text, rnd, kind, every_way=True)
    check(path, fuzzing.mutate(rnd, text, 1), rnd, kind)


@settings(BOUNDED, max_examples=8)
@given(seed=st.integers(0, len(CORPUS) - 1), rnd=st.randoms(use_true_random=False), kind=st.sampled_from(fuzzing.KINDS))
@pytest.mark.parametrize("mutation", fuzzing.EIGHTH, ids=lambda m: m.__name__)
def test_each_eighth_round_mutation(mutation: fuzzing.Mutation, seed: int, rnd: random.Random, kind) -> None:  # type: ignore[no-untyped-def]
    """Each of the eighth round's mutations alone (fewer examples: several make documents of a megabyte)."""
    path, text = CORPUS[seed]
    text = mutation(rnd, fuzzing.window(rnd, text))
    check(path, text, rnd, kind, every_way=True)


def test_the_check_sees_a_read_outside_the_project_and_a_process(tmp_path: Path) -> None:
    """The fuzzer's watch on files and processes: a read outside the document's project, a folder listed
    outside it and a process started while checking are problems; the project's own files are not."""
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "inside.txt").write_text("i")
    doc = str(project / "suite.eval.yaml")
    real = fuzzing.analyze

    def reading(what):  # type: ignore[no-untyped-def]
        def analyze(text, path, **kw):  # type: ignore[no-untyped-def]
            what()
            return real(text, path, **kw)
        return analyze

    for what, expected in ((lambda: secret.read_text(), "open outside the project"),
                           (lambda: os.listdir(tmp_path), "os.listdir outside the project"),
                           (lambda: subprocess.run(["true"], check=True), "a process started"),
                           (lambda: (project / "inside.txt").read_text(), None)):
        with mock.patch.object(fuzzing, "analyze", reading(what)):
            problems = fuzzing.check(doc, "tests: []\n", random.Random(0)).problems
        assert [p for p in problems if expected and p.startswith(expected)] if expected else problems == [], problems
    assert fuzzing.check(doc, "tests: []\n", random.Random(0)).problems == []  # the watch ends with the check
    secret.read_text()


PIECES = [*"ab:-#'\"[]{},&*!|>%@`? \t\n\r$\\.0", "\u2028", "\x85", "\ufeff", "\x00", "\ud800", "é", "😀", "title",
          "prompt", "should", "tests", "models", "- id: ", "<<: ", "---\n", "  ", "input", "assert", "type: ",
          "${{ X }}", "file://"]
YAMLISH = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@settings(BOUNDED, max_examples=400)
@given(text=YAMLISH, rnd=st.randoms(use_true_random=False), kind=st.sampled_from(fuzzing.KINDS),
       name=st.sampled_from(("b.yml", "s.eval.yaml", ".agentv/targets.yaml")))
def test_random_yamlish_text(text: str, rnd: random.Random, kind, name: str) -> None:  # type: ignore[no-untyped-def]
    check(f"/nonexistent/{name}", text, rnd, kind)
