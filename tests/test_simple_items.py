"""simple_items.py reads a list item (or a header) without libyaml only where it reads it as libyaml does:
whenever it gives nodes for a text, libyaml's parse of that text (source.py's composer) says nothing and gives
the same nodes — types, spans, values, raw texts, styles — and, for a header, a document of the same span, on
every list item and first document of the corpus, the fixtures and the examples, on groups of items, on
thousands of seeded mutations of them, and on hand-picked edge cases."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from evalspec import source
from evalspec.simple_items import simple_items, simple_mapping

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def _files() -> list[Path]:
    found = [p for base in (SHARED / "corpus", ROOT / "tests" / "fixtures", ROOT / "examples")
             for p in sorted(base.rglob("*")) if p.suffix in (".yml", ".yaml") and p.is_file()]
    assert len(found) > 100
    return found


def _differs(a: Any, b: Any, at: str = "") -> str | None:
    """Where two node trees differ, or None."""
    if type(a) is not type(b):
        return f"{at}: {type(a).__name__} against {type(b).__name__}"
    if tuple(a.span) != tuple(b.span) or a.tag != b.tag or a.anchor != b.anchor:
        return f"{at}: span {tuple(a.span)} against {tuple(b.span)}, or tag/anchor"
    if isinstance(a, source.Scalar):
        same_value = type(a.value) is type(b.value) and (a.value == b.value or a.value != a.value)
        if a.raw != b.raw or a.style != b.style or not same_value:
            return f"{at}: {a.raw!r} ({a.value!r}, {a.style}) against {b.raw!r} ({b.value!r}, {b.style})"
        return None
    if a.flow != b.flow:
        return f"{at}: flow"
    children_a = a.items if isinstance(a, source.Sequence) else [x for pair in a.pairs for x in pair]
    children_b = b.items if isinstance(b, source.Sequence) else [x for pair in b.pairs for x in pair]
    if len(children_a) != len(children_b):
        return f"{at}: {len(children_a)} children against {len(children_b)}"
    for i, (x, y) in enumerate(zip(children_a, children_b, strict=True)):
        d = _differs(x, y, f"{at}/{i}")
        if d:
            return d
    return None


def agrees(text: str, first_line: int = 0) -> bool | None:
    """None when simple_items leaves `text` to libyaml; else True, having asserted both read it alike."""
    got = simple_items(text, first_line)
    if got is None:
        return None
    lines = [""] * first_line + text.split("\n")
    nodes, found = source._libyaml_chunk(lines, first_line, len(lines), text)
    assert not found, (text, [f.message for f in found])
    assert len(got) == len(nodes), text
    for x, y in zip(got, nodes, strict=True):
        d = _differs(x, y)
        assert d is None, (text, d)
    return True


def _chunks(text: str) -> list[tuple[int, int, list[str]]]:
    """Every run of one to four items of each block list in `text`, at any column: (first line, items, lines)."""
    lines = text.split("\n")
    out = []
    for column in range(0, 9, 2):
        starts = [i for i, line in enumerate(lines) if line[:column] == " " * column and line[column:column + 2] == "- "]
        for k, a in enumerate(starts):
            for n in (1, 2, 4):
                if k + n < len(starts):
                    out.append((a, n, lines[a:starts[k + n]]))
                elif k + n == len(starts):
                    out.append((a, n, lines[a:]))
    return out


def test_every_item_of_the_corpus_reads_alike() -> None:
    read = left = 0
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for first, _, chunk in _chunks(text):
            if agrees("\n".join(chunk), first):
                read += 1
            else:
                left += 1
    # most items of real files are of the subset; some are not (comments, block scalars, anchors)
    assert read > 2000 and left > 200, (read, left)


_INSERTS = ["#", " #x", ":", ": ", " ", "  ", "-", "- ", '"', "'", "[", "]", "{", "}", ",", "\t", "\n", "\n  ",
            "&a ", "*a", "!", "!!str ", "|", ">", "?", "\\", "%", "@", "`", "\r", "\x85", "\u2028", "\ufeff",
            "\x07", "é", "~", "null", "0x1F", "1e3", ".inf", "yes", ": x", "\n- ", "\n    - ", "'it''s'"]


def _mutated(chunk: str, rng: random.Random) -> str:
    lines = chunk.split("\n")
    kind = rng.randrange(6)
    if kind == 0:
        at = rng.randrange(len(chunk) + 1)
        return chunk[:at] + rng.choice(_INSERTS) + chunk[at:]
    if kind == 1 and chunk:
        at = rng.randrange(len(chunk))
        return chunk[:at] + chunk[at + 1:]
    i = rng.randrange(len(lines))
    if kind == 2:
        lines[i] = " " * rng.choice((1, 2, 4)) + lines[i]
    elif kind == 3:
        lines[i] = lines[i][rng.choice((1, 2)):] if lines[i].startswith(" ") else lines[i]
    elif kind == 4:
        lines.insert(i, lines[rng.randrange(len(lines))])
    else:
        lines[i] = lines[i] + rng.choice(_INSERTS)
    return "\n".join(lines)


def test_mutated_items_read_alike_or_are_left_to_libyaml() -> None:
    rng = random.Random(27)
    chunks = [(first, "\n".join(chunk)) for path in _files()
              for first, n, chunk in _chunks(path.read_text(encoding="utf-8", errors="replace")) if n <= 2]
    chunks = [c for c in chunks if simple_items(c[1], c[0]) is not None]
    read = left = 0
    for _ in range(6000):
        first, chunk = rng.choice(chunks)
        text = chunk
        for _ in range(rng.choice((1, 1, 2, 3))):
            text = _mutated(text, rng)
        if agrees(text, first):
            read += 1
        else:
            left += 1
    assert read > 1000 and left > 1000, (read, left)


@pytest.mark.parametrize("text", [
    "- id: p0\n  prompt: \"Question 0: what?\"\n  should:\n    - $contains: \"answer 0\"\n    - $word_count_between: [3, 60]\n",
    "- a\n- b\n\n- c",
    "---\n- a\n- b: c",  # a list document's first part
    "- - a\n  - b\n- - c",
    "- key:\n    value\n  other: 'x'",
    "- key:\n    - a\n    - b\n  k2: [ ]",
    "- key:\n    nested: 1\n    more: [1, 2.5, 3-, +4, .5, 0x1f, 0o17, true, null, 1e3, .inf]",
    "- a:b\n- http://x.y/z?q=1\n- a - b\n- (x) y.z",
    "- ké: ü\n- \"日本\"\n- 'x: y # z'\n- \"a 'b' c\"",
    "  - indented: 1\n    two: 2\n  - 3",
    "- x: 1\n  x: 2",
    "- k1: one\n  true: yes\n  null: ~\n  Null: 0o7",
    # one-line flow mappings of words and quoted scalars (an AgentV suite's assertions)
    "- key: {a: 1}",
    "  - {type: contains, value: \"0\", required: true}\n  - {type: regex, value: '[a-z]+, {x}'}\n  - { }",
    "- a: {x: 1.5, true: null, y: \"\", z: ''}\n  b: {}\n  c: { k: v }",
    "- - {a: b}\n  - {c: 0x1f, d: 2001-12-14, e: 1_000, f: .inf}",
])
def test_read_alike(text: str) -> None:
    assert agrees(text, 3)


@pytest.mark.parametrize("text", [
    "- key:\n- a",  # a list at its key's column
    "- key:\n  other: 1",  # a key with no value
    "- key: value\n    more",  # a plain scalar over two lines
    "- key: \"a\n  b\"",  # a quoted scalar over two lines
    "- key: value # comment",
    "# comment\n- a",
    "- &a x\n- *a",
    "- !tag x",
    "- |\n  block",
    "- key: \"a \\\" b\"",
    "- 'it''s'",
    "- a\tb",
    "- a: b: c",
    "--- \n- a",
    "---\n\n- a",
    "--- # c\n- a",
    "- a\n b",
    "- key: [a, [b]]",
    "- key: {a: 1, b: [2]}",  # a flow mapping holding a collection
    "- {a: 1,}",  # a trailing comma
    "- {a:1}",  # `a:1` a plain key (with a null value) in flow
    "- {\"a\": 1}",  # a quoted key
    "- {a: b} # c",
    "- {a: b, a: }",
    "- {a: b c}",  # a plain value of two words
    "- {a: b}x",
    "- {a: \"x\\\"\"}",
    "- ? a\n  : b",
    "-\n  - a",
    "- a \n- b",
    "- a: 1\n  " + "k" * 1100 + ": 2",  # longer than a simple key may be
    "- " + "k" * 1100 + ": 2",
])
def test_left_to_libyaml(text: str) -> None:
    assert simple_items(text, 0) is None


def mapping_agrees(text: str, first_line: int = 0) -> bool | None:
    """As `agrees`, for a document that is a block mapping (simple_mapping): its root and its document's span."""
    got = simple_mapping(text, first_line)
    if got is None:
        return None
    lines = [""] * first_line + text.split("\n")
    scratch = source.ParsedFile(text="", lines=lines)
    stopped = source._parse_stream(text, first_line, scratch)
    assert stopped is None and not scratch.findings and len(scratch.documents) == 1, text
    document = scratch.documents[0]
    d = _differs(got, document.root)
    assert d is None, (text, d)
    assert tuple(document.span) == tuple(got.span), text
    return True


def _first_documents() -> list[str]:
    out = []
    for path in _files():
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        end = next((i for i, line in enumerate(lines) if line.startswith("---")), len(lines))
        if end:
            out.append("\n".join(lines[:end]) + ("\n" if end < len(lines) else ""))
    return out


def test_every_first_document_of_the_corpus_reads_alike() -> None:
    results = [mapping_agrees(text) for text in _first_documents()]
    assert results.count(True) > 5 and results.count(None) > 100, (results.count(True), results.count(None))


def test_mutated_first_documents_read_alike_or_are_left_to_libyaml() -> None:
    rng = random.Random(28)
    texts = [t for t in _first_documents() if simple_mapping(t, 0) is not None]
    read = left = 0
    for _ in range(3000):
        text = rng.choice(texts)
        for _ in range(rng.choice((1, 1, 2, 3))):
            text = _mutated(text, rng)
        if mapping_agrees(text):
            read += 1
        else:
            left += 1
    assert read > 500 and left > 500, (read, left)


@pytest.mark.parametrize("text", [
    "title: T\nmodels:\n  - openai:gpt-4o\n",
    "title: T\n\nmodels: [a, b]\nsystem: \"Be brief.\"\n",
    "a: 1\nb:\n  c: 2\n  d:\n    - x\n    - y: z\n",
    "title: T",
])
def test_headers_read_alike(text: str) -> None:
    assert mapping_agrees(text, 2)


@pytest.mark.parametrize("text", ["- a", "a: 1\n- b", "a:\nb: 1", "\ntitle: T", "title: T # c", "a: 1\n b: 2", "a: |\n  x"])
def test_headers_left_to_libyaml(text: str) -> None:
    assert simple_mapping(text, 0) is None


_FLOW_MAPPING_ITEMS = [
    "  - id: t0\n    input: \"Question 0?\"\n    assert:\n      - {type: contains, value: \"0\", required: true}\n"
    "      - {type: regex, value: \"[a-z]+\"}\n      - {type: latency, max_ms: 60000}",
    "- name: t\n  parameters: { type: object, properties: {q: 'x, y'} }\n  more: {a: b, c: 'd'}",
]


def test_mutated_flow_mappings_read_alike_or_are_left_to_libyaml() -> None:
    """The corpus has few flow mappings of the subset: mutations of an AgentV suite's assertions."""
    rng = random.Random(29)
    read = left = 0
    for _ in range(1000):
        text = rng.choice(_FLOW_MAPPING_ITEMS)
        for _ in range(rng.choice((1, 1, 2))):
            text = _mutated(text, rng)
        if agrees(text, 2):
            read += 1
        else:
            left += 1
    assert read > 50 and left > 500, (read, left)


def test_the_memos_of_read_lines_stay_bounded() -> None:
    """Lines and flows are memoised by their text (simple_items._READ_LINES, _READ_FLOWS): short texts only,
    and never more than _KEPT_LINES of each, however many distinct lines are read."""
    from evalspec import simple_items as module

    long_line = "- " + "x" * (module._KEPT_LENGTH + 1)
    assert simple_items(long_line, 0) is not None and long_line not in module._READ_LINES
    text = "\n".join(f"- k{i}: [{i}, 2]\n  m: {{a: {i}}}" for i in range(module._KEPT_LINES + 10))
    assert simple_items(text, 0) is not None
    assert 0 < len(module._READ_LINES) <= module._KEPT_LINES and 0 < len(module._READ_FLOWS) <= module._KEPT_LINES
    assert agrees("- k1: [1, 2]\n  m: {a: 1}")  # read again from the memos: the same nodes as libyaml's


def _streamed(text: str) -> list[tuple[Any, ...]]:
    parsed = source.parse_yaml(text, None, max_bytes=32 << 20, streamed=True)
    return [(tuple(d.span), d.index, d.root) for d in parsed.documents] + [(f.code, tuple(f.span)) for f in
                                                                           parsed.findings]


_SIMPLE_HEAD = source._simple_head


def _suites_read_alike(text: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    """A streamed parse of an AgentV suite gives the same documents whether its head (the lines before its
    `tests:` list) is read by simple_mapping (source._simple_head) or by libyaml; whether the former read it."""
    used: list[Any] = []
    monkeypatch.setattr(source, "_simple_head", lambda *a: used.append(_SIMPLE_HEAD(*a)) or used[-1])
    fast = _streamed(text)
    monkeypatch.setattr(source, "_simple_head", lambda *a: None)
    slow = _streamed(text)
    assert len(fast) == len(slow), text
    for x, y in zip(fast, slow, strict=True):
        assert x[:2] == y[:2], text
        if len(x) == 3 and x[2] is not None:
            d = _differs(x[2], y[2])
            assert d is None, (text, d)
    return any(u is not None for u in used)


def test_a_suites_head_reads_alike_without_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    tests = "tests:\n  - id: t1\n    input: hi\n    criteria: c\n  - {id: t2, input: x, criteria: c}\n"
    heads = ["name: s\n", "name: s\ndescription: d\nexecution:\n  target: mock\n", "a: [1, 2]\nb:\n  c: {x: y}\n",
             "name: s\n\ndescription: 'q d'\n", "name: s # c\n", "name: &a s\n", "---\nname: s\n"]
    read = [_suites_read_alike(h + tests + tail, monkeypatch) for h in heads for tail in ("", "\n", "  \n")]
    assert read.count(True) >= 12 and read.count(False) >= 6
    for text in ("name: s\ntests:  \n  - id: t\n", "name: s\ntests:\n  - id: t\nother: 1\n", "name: s\ntests:\n"):
        assert not _suites_read_alike(text, monkeypatch)  # left to libyaml: a space after the key, a key after it
    rng = random.Random(30)
    for _ in range(200):
        head = heads[1]
        for _ in range(rng.choice((1, 2))):
            head = _mutated(head, rng)
        _suites_read_alike(head.rstrip("\n") + "\n" + tests, monkeypatch)
    corpus = [p.read_text(encoding="utf-8", errors="replace") for p in _files()]
    assert sum(_suites_read_alike(t, monkeypatch) for t in corpus if "\ntests:\n" in t) >= 3
