"""plain_prompt.plain_reference gives, for every prompt it reads, exactly what the reference's steps give it
(reference_prompt on js_plain, validate_prompt, evaluator_points: none throws), the same values of the same
types with their keys in the same order: on every prompt of the corpus, the fixtures and the examples, under
headers that set render_as and noCache or not, and on seeded mutations of those prompts; and
persisted_plain makes of what it gives what reference_form.persisted makes of it."""

from __future__ import annotations

import random
from typing import Any

from evalspec.source import Mapping, Node, Sequence, parse_yaml
from evalspec.weval.js_values import ReferenceRejects, js_plain
from evalspec.weval.plain_prompt import persisted_plain, plain_reference
from evalspec.weval.reference_form import (
    evaluator_points,
    persisted,
    reference_header,
    reference_prompt,
    validate_prompt,
)

from ..test_simple_items import _files, _mutated

HEADERS = [reference_header(None), reference_header({"render_as": "html", "noCache": 0}),
           reference_header({"render_as": "", "noCache": "yes"}), reference_header({"render_as": ["x", 1.5]})]


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same types, dicts with their keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or a != a


def _reference_steps(node: Node, header: dict[str, Any]) -> Any:
    try:
        ref = reference_prompt(js_plain(node), header)
        validate_prompt(ref)
        read = evaluator_points(ref.get("points"), ref["id"], False)
        assert evaluator_points(ref.get("should_not"), ref["id"], True) == []
    except ReferenceRejects:
        return None
    return ref, read


def agrees(node: Node) -> bool:
    """Whether plain_reference read the prompt (having asserted it agrees under every header)."""
    read = False
    for header in HEADERS:
        fast = plain_reference(node, header)
        if fast is not None:
            read = True
            assert _same(fast, _reference_steps(node, header)), (node, fast)
            again = plain_reference(node, header)  # (persisted_plain changes what it is given)
            assert again is not None
            assert _same(persisted_plain(again[0]), persisted(fast[0])), (node, fast)
    return read


def _prompts(text: str) -> list[Node]:
    out: list[Node] = []
    for d in parse_yaml(text).documents:
        if isinstance(d.root, Sequence):
            out += d.root.items
        elif isinstance(d.root, Mapping):
            out.append(d.root)
    return out


def _blueprints() -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in _files() if "agentv" not in str(p).lower()]


def test_every_prompt_of_the_corpus_reads_alike() -> None:
    results = [agrees(node) for text in _blueprints() for node in _prompts(text)]
    assert results.count(True) > 100 and results.count(False) > 100, (results.count(True), results.count(False))


_PROMPT = ('- id: p1\n  prompt: "Question 1: what is it?"\n  should:\n    - $contains: "answer 1"\n'
           "    - $word_count_between: [3, 60]\n    - Says it plainly\n    - $match: '^a'")


def test_mutated_prompts_read_alike_or_are_left_to_the_reference_steps() -> None:
    rng = random.Random(30)
    read = left = 0
    for _ in range(700):
        text = _PROMPT
        for _ in range(rng.choice((1, 1, 2, 3))):
            text = _mutated(text, rng)
        for node in _prompts(text):
            if agrees(node):
                read += 1
            else:
                left += 1
    assert read > 100 and left > 300, (read, left)


def test_what_is_left_to_the_reference_steps() -> None:
    for text in ["- prompt: x\n  should: [a]\n  weight: 2", "- prompt: 2024-01-01\n  should: [a]",
                 "- prompt: x\n  should: [$ref: a]", "- prompt: x\n  should: [{$contains: a, weight: 2}]",
                 "- prompt: ' '\n  should: [a]", "- prompt: x\n  should: []", "- prompt: x\n  should: ['']",
                 "- prompt: x\n  should: [!!str a]", "- id: 1_0\n  prompt: x\n  should: [a]",
                 "- prompt: x\n  should: [$contains: {a: b}]", "- prompt: x\n  prompt: y\n  should: [a]"]:
        (node,) = _prompts(text)
        assert plain_reference(node, HEADERS[0]) is None, text


def test_persisted_plain_is_persisted() -> None:
    """The values persisted_plain makes as persisted does: a date, a list, NaN and null as a function's
    argument, a header's render_as that is not text."""
    for text in ["- prompt: x\n  should:\n    - $contains: 2024-01-01\n    - $word_count_between: [3, .nan]\n"
                 "    - $contains: ~\n    - $contains: .inf\n    - plain text",
                 "- id: a\n  prompt: x\n  should:\n    - $matches: [2024-01-01, 1]"]:
        (node,) = _prompts(text)
        for header in HEADERS:
            assert agrees(node), text
            ref = plain_reference(node, header)
            assert ref is not None
            assert "citation" not in str(persisted_plain(ref[0])), ref  # (no undefined member is left)
