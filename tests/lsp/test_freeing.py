"""server/freeing.py: a large analysis is freed a slice at a time, and nothing another object still
reaches is touched."""

from __future__ import annotations

import gc
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from evalspec.incremental import DocumentAnalyzer
from evalspec_lsp import freeing


@dataclass
class Holder:
    items: list = field(default_factory=list)
    table: dict = field(default_factory=dict)
    pair: tuple = ()


@dataclass(frozen=True, slots=True)
class Slotted:
    items: list


class Leaf:
    pass


def big_list() -> list:
    return [[i, str(i)] for i in range(freeing.BIG * 3)]


def test_only_the_containers_nothing_else_reaches_are_emptied():
    shared = big_list()
    table = {i: [i] for i in range(freeing.BIG * 2)}
    # Its own list, a dict, a list in a slotted frozen dataclass and one in a tuple: emptied a slice at
    # a time. A list another object holds too (here, `also` and this test): left alone.
    root = Holder(big_list(), table, (Slotted(big_list()), big_list(), Holder(shared)))
    also = Holder(shared)  # a newer analysis sharing a list with the old one
    del table  # the test's own reference would make it shared
    assert freeing.dismantle(root) == 4
    assert len(shared) == freeing.BIG * 3 and also.items is shared and shared[5] == [5, "5"]


def test_everything_is_freed():
    leaf = Leaf()
    seen = weakref.ref(leaf)
    root = Holder([[leaf], *big_list()])
    del leaf
    freeing.dismantle(root)
    gc.collect()
    assert seen() is None


def test_an_object_still_used_elsewhere_is_left_alone_until_it_is_not():
    leaf = Leaf()
    seen = weakref.ref(leaf)
    held = Holder([[leaf], *big_list()])
    del leaf
    freeing.free_later(held)
    time.sleep(freeing.POLL_S * 4)
    assert seen() is not None and held.items[0][0] is seen()  # `held` is still referenced here
    del held
    deadline = time.monotonic() + 20
    while seen() is not None and time.monotonic() < deadline:
        time.sleep(freeing.POLL_S)
    assert seen() is None  # freed once the thread held the last reference


def test_an_analysis_shares_nothing_it_frees_with_the_next_one(tmp_path: Path):
    text = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: q{i}\n  should: [a{i}, b]\n" for i in range(3000))
    analyzer = DocumentAnalyzer(tmp_path / "t.yml")
    old = analyzer.analyze(text)
    new = analyzer.analyze(text + "- id: last\n  prompt: x\n")  # reuses the old one's parsed prompts
    def shown(analysis) -> list:
        return [(p.id, [m.content for m in p.messages], [pt.text for pt in p.should]) for p in analysis.blueprint.prompts]

    before = shown(new)
    assert freeing.dismantle(old) >= 1
    assert shown(new) == before
    assert len(new.blueprint.prompts) == 3001 and not new.errors
