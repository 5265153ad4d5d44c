"""A flow collection on one line, read through the tree (ide/flow_walk.py): the state at every position is
the one the character walk gives, and a request in the middle of a long line reads only near the cursor."""

from __future__ import annotations

import random
from typing import Any

import pytest

from evalspec.analysis import analyze
from evalspec.findings import Severity
from evalspec.ide import flow_walk
from evalspec.ide.completion import complete
from evalspec.ide.context import cursor_context
from evalspec.ide.flow_walk import flow_node_at, flow_state
from evalspec.ide.hover import hover
from evalspec.ide.lines import LONG_LINE
from evalspec.ide.navigation import definition
from evalspec.source import parse_yaml

W = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n"

WORDS = ["a", "openai:gpt-4o-mini", "x y", "http://h/p", "1", "-1.5", "null", "a-b", "$contains", "k:v", "é", "😀"]


def _scalar(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return rng.choice(WORDS)
    if r < 0.65:
        return '"' + rng.choice(["", "q", 'a \\" b', "a, b]", "x: y", "\\\\"]) + '"'
    if r < 0.8:
        return "'" + rng.choice(["", "q", "it''s", "a, {b}", "x: y"]) + "'"
    if r < 0.87:
        return "&n" + str(rng.randrange(3)) + " " + rng.choice(WORDS)
    if r < 0.92:
        return "!!str " + rng.choice(WORDS)
    return ""


def _flow(rng: random.Random, depth: int) -> str:
    """A random flow collection: lists, mappings (keys with and without values), quotes, anchors, tags."""
    sep = rng.choice([",", ", ", " , ", ",  "])
    if rng.random() < 0.5:
        items = [_value(rng, depth + 1) for _ in range(rng.randrange(0, 6))]
        items = [i for i in items if i] if rng.random() < 0.7 else [i or "e" for i in items]
        return rng.choice(["[", "[ "]) + sep.join(items) + rng.choice(["]", " ]"])
    pairs = []
    for _ in range(rng.randrange(0, 5)):
        key = rng.choice(["k", "id", '"q k"', "'s'", "type", "k" + str(rng.randrange(9))])
        r = rng.random()
        pairs.append(key if r < 0.1 else key + ":" if r < 0.15 else key + rng.choice([": ", ":  "]) + _value(rng, depth + 1))
    return rng.choice(["{", "{ "]) + sep.join(pairs) + rng.choice(["}", " }"])


def _value(rng: random.Random, depth: int) -> str:
    if depth < 4 and rng.random() < 0.45:
        node = _flow(rng, depth)
        return ("&c" + str(rng.randrange(3)) + " " + node) if rng.random() < 0.05 else node
    return _scalar(rng) or ("*n0" if rng.random() < 0.3 else "")


def _lines(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        body = _flow(rng, 0)
        if rng.random() < 0.3:  # an alias to an anchor earlier on the line
            body = "[&n0 a, " + body + ", *n0, *n0]"
        out.append(rng.choice(["k: ", "- ", "key:  ", ""]) + body + rng.choice(["", " # c", "  "]))
    return out


def _compare_every_position(line: str) -> int:
    """Compares the two walks at every column of `line` (which must parse alone); returns how many
    positions went through the tree."""
    parsed = parse_yaml(line + "\n")
    if any(f.severity is Severity.ERROR for f in parsed.findings):
        return -1
    root = parsed.documents[0].root if parsed.documents else None
    start = next(i for i, c in enumerate(line) if c in "[{")
    node = flow_node_at(root, 0, start)
    if node is None:
        return 0
    for col in range(len(line) + 1):
        slow = flow_state(line, start, col)
        fast = flow_state(line, start, col, node)
        assert (fast.stack, fast.token_start, fast.quote) == (slow.stack, slow.token_start, slow.quote), \
            (line, col)
    return len(line) + 1


@pytest.mark.parametrize("seed", range(8))
def test_the_walk_through_the_tree_is_the_walk_at_every_position(seed: int) -> None:
    compared = [_compare_every_position(line) for line in _lines(seed, 60)]
    assert sum(1 for n in compared if n > 0) >= 20  # most lines parse and have their collection in the tree


@pytest.mark.parametrize("line", [
    "k: [a, b, c]",
    "k: {a: 1, b: [x, {c: d}], e}",
    "- [[[[x]]], [[y]]]",
    "k: [{id: a, input: b}, {id: c, input: d}]",
    'k: [{"id": "a", "in": "b\\"c"}, {"id": "c"}]',
    "k: [&a x, *a, [*a], {k: *a}]",
    "k: {? a : b, c: d}",
    "k: [a: b, c: d, e]",
    "k: [!!str 1, !!seq [a], &s {b: c}]",
    "k: {a: , b: c}",
    "k: [x]  [y]",
    "[{}, {}, {}, {a: [], b: {}}]",
])
def test_awkward_lines_give_what_the_walk_gives(line: str) -> None:
    assert _compare_every_position(line) != 0 or flow_node_at(parse_yaml(line + "\n").documents[0].root, 0,
                                                               next(i for i, c in enumerate(line) if c in "[{")) is None


def test_a_quote_inside_a_plain_word_is_read_as_the_parser_reads_it() -> None:
    """`don't` is a plain word: the walk alone took its quote for a string's start (and the items after it
    for that string); through the tree, the item after it is item 1."""
    line = "k: [don't, x]"
    node = flow_node_at(parse_yaml(line + "\n").documents[0].root, 0, 3)
    assert flow_state(line, 3, len(line) - 1).stack[0][1] == 0  # the walk's misreading
    assert flow_state(line, 3, len(line) - 1, node).stack == [["[", 1, False, 10]]


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    read: list[int] = []
    real = flow_walk._walk

    def walk(text: str, state: flow_walk.FlowState, i: int, stop: int, marks: Any = None) -> int:
        end = real(text, state, i, stop, marks)
        read.append(end - i)
        return end

    monkeypatch.setattr(flow_walk, "_walk", walk)
    return read


LONG = [
    ("models", "w.yml", "title: t\nmodels: [" + "a:b," * 40_000 + "openai:gpt-4o-mini]\n---\n- prompt: hi\n"),
    ("tests", "s.eval.yaml", "tests: [" + "{id: a, input: b, criteria: c}," * 5_000 + "{id: z, input: y}]\n"),
    ("json", "w.yml", W + "[" + ", ".join(f'{{"id": "p{i}", "prompt": "say \\"{i}\\""}}' for i in range(5_000)) + "]\n"),
    ("nested", "w.yml", W + "- prompt: hi\n  should: [" + ("[" * 40 + "x" + "]" * 40 + ",") * 1_200 + "y]\n"),
]


@pytest.mark.parametrize("name,path,text", LONG, ids=[c[0] for c in LONG])
def test_a_request_in_a_long_flow_line_reads_near_the_cursor(name: str, path: str, text: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Completion, hover and definition anywhere on a long flow line: what they find is what the walk from
    the line's start finds, and each reads at most a few items' worth of the line (it read all of it up
    to the cursor: 0.3 s in the middle of a 4 MB line, on every request)."""
    a = analyze(text, path)
    lines = text.split("\n")
    line = max(range(len(lines)), key=lambda i: len(lines[i]))
    long_line = lines[line]
    assert len(long_line) > 20 * LONG_LINE
    rng = random.Random(name)
    cols = [len(long_line) // 2, len(long_line) - 1, len(long_line), *rng.sample(range(len(long_line)), 12)]
    for col in cols:
        read = _counted(monkeypatch)
        ctx = cursor_context(a, line, col)
        assert read and sum(read) < 2_000, (col, sum(read))  # walked, and only near the cursor
        monkeypatch.undo()
        monkeypatch.setattr(flow_walk, "flow_node_at", lambda *_: None)  # the walk from the line's start
        from evalspec.ide import context

        monkeypatch.setattr(context, "flow_node_at", lambda *_: None)
        slow = cursor_context(a, line, col)
        monkeypatch.undo()
        assert ctx == slow, col
    middle = len(long_line) // 2
    read = _counted(monkeypatch)
    complete(a, line, middle, snippets=True)
    hover(a, line, middle)
    definition(a, line, middle)
    assert sum(read) < 6_000


def test_the_middle_model_of_a_long_list_has_its_hover() -> None:
    """The answer, not "nothing": the model id in the middle of a million-id line is hovered as a model."""
    ids = ["a:b"] * 30_000 + ["openai:gpt-4o-mini"] + ["a:b"] * 30_000
    line = "models: [" + ", ".join(ids) + "]"
    a = analyze("title: t\n" + line + "\n---\n- prompt: hi\n", "w.yml")
    col = line.index("openai:") + 3
    info = hover(a, 1, col)
    assert info is not None and "gpt-4o-mini" in info.markdown
    ctx = cursor_context(a, 1, col)
    assert ctx.path == ["<header>", "models", 30_000]


# --- other walks a request made over a whole list or mapping ------------------------------------------------

def _lines_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from evalspec.ide import context

    read: list[str] = []
    real = context.shape
    monkeypatch.setattr(context, "shape", lambda s: read.append(s) or real(s))
    return read


def test_before_a_dash_of_a_long_list_the_items_are_counted_from_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Right before a `- ` of a 20,000-point list: a new item there is item 19,999 (every line was read)."""
    text = W + "- prompt: hi\n  should:\n" + "    - x\n" * 20_000
    a = analyze(text, "w.yml")
    read = _lines_read(monkeypatch)
    ctx = cursor_context(a, 4 + 20_000, 4)
    assert ctx.needs_dash and ctx.path == ["<prompts>", 0, "should", 19_999]
    assert len(read) < 50


@pytest.mark.parametrize("line", ["    - x", "    -", "    -\r", "    -\t", "    -x", "    --", "    -\rx", "---",
                                  "    # -", "   - x", "     - x", "    -\r\r"])
def test_counting_items_without_reading_the_lines_counts_as_reading_them(line: str) -> None:
    from evalspec.ide import context
    from evalspec.ide.lines import shape

    lines = ["  k:", line, line, "    - y"]
    read = sum(1 for s in lines[:3] if (sh := shape(s)).dashes and sh.dashes[0] == 4)
    assert context._count_items(lines, 0, 3, 4) == read


class _CountingLines(list[str]):
    """The analysis's lines, counting the ones looked at."""

    looked = 0

    def __getitem__(self, i: Any) -> Any:
        self.looked += 1
        return super().__getitem__(i)


def test_a_key_among_thousands_in_the_tree_reads_no_other_line() -> None:
    """The 20,000th key of a prompt: the keys above are the tree's mapping's (the scan looked at each line
    up to the prompt, 390,000 of them at 0.7 s), and its keys are listed once per analysis."""
    keys = "".join(f"  k{i}: v\n" for i in range(20_000))
    a = analyze(W + "- prompt: hi\n" + keys + "  shou: x\n", "w.yml")
    line = 4 + 20_000
    a.parsed.lines = lines = _CountingLines(a.parsed.lines)
    ctx = cursor_context(a, line, 4)
    assert ctx.path == ["<prompts>", 0] and ctx.prefix == "sh" and "k19999" in ctx.present
    assert "shou" not in ctx.present
    assert lines.looked < 50
    kept = [v for k, v in a.memo.items() if k.startswith("ide.keys.node.")]
    assert len(kept) == 1
    ((_, listed),) = kept
    listed["noted"] = "x"  # the kept list is what the next request reads
    again = cursor_context(a, line, 4)
    assert "noted" in again.present and "noted" not in ctx.present


def test_the_keys_of_a_big_mapping_are_read_once_per_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value in a 20,000-key mapping: the keys around it (for an assertion's `type`) were read line by
    line on every request (1 s for 390,000)."""
    from evalspec.ide import context

    text = "title: t\nmodels: [openai:gpt-4o-mini]\n" + "".join(f"k{i}: v\n" for i in range(20_000)) + \
        "---\n- prompt: hi\n"
    a = analyze(text, "w.yml")
    listed: list[int] = []
    real = context.mapping_keys
    monkeypatch.setattr(context, "mapping_keys", lambda *args, **kw: listed.append(1) or real(*args, **kw))
    first = cursor_context(a, 5, 4)
    second = cursor_context(a, 5, 4)
    assert first == second and first.key == "k3" and "k19999" in first.present
    assert listed == [1]
    assert hover(a, 5, 1) == hover(a, 5, 1) and listed == [1]


# --- a long line the tree does not have (the document does not parse while it is typed) -------------------

def _plain_walk(line: str, start: int, col: int) -> tuple[object, ...]:
    state = flow_walk.FlowState([], start)
    flow_walk._walk(line, state, start, col)
    return state.stack, state.token_start, state.quote


@pytest.mark.parametrize("seed", range(4))
def test_the_walk_from_noted_states_is_the_walk_from_the_start(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """States noted every few characters (here 7) and reused by later requests, on the same line and on the
    line edited (up to the edit), give what walking from the line's start gives, at every position."""
    monkeypatch.setattr(flow_walk, "MARK_EVERY", 7)
    monkeypatch.setattr(flow_walk, "_marked", [])
    rng = random.Random(seed)
    for line in _lines(seed + 100, 25):
        start = next(i for i, c in enumerate(line) if c in "[{")
        for _ in range(3):
            cols = list(range(start, len(line) + 1))
            rng.shuffle(cols)
            for col in cols:
                fast = flow_state(line, start, col)
                assert (fast.stack, fast.token_start, fast.quote) == _plain_walk(line, start, col), (line, col)
            at = rng.randrange(start + 1, len(line) + 1)  # an edit: a character typed, or one taken away
            line = line[:at] + rng.choice(["", "x", ",", "'", '"', "[", "}", ": "]) + line[at + 1:]


def test_typing_into_a_long_line_that_does_not_parse_reads_from_the_last_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 400 KB flow line with an unclosed bracket (no tree): the first request reads to the cursor, the
    next ones at and after it (the line edited there) only from the state noted nearest before them."""
    monkeypatch.setattr(flow_walk, "_marked", [])
    line = "models: [" + "a:b, " * 80_000 + "{x: [y"
    start, col = 8, len(line) - 20_000
    read = _counted(monkeypatch)
    first = flow_state(line, start, col)
    assert sum(read) >= col - start
    read.clear()
    edited = line[:col] + "z" + line[col:]
    again = flow_state(edited, start, col + 1)
    assert sum(read) <= 2 * flow_walk.MARK_EVERY
    assert again.stack == [["[", first.stack[0][1], False, first.stack[0][3]]] and again.token_start == first.token_start


def _value_bracket_by_bracket(text: str) -> tuple[str, str]:
    """lines._value's flow branch as it was: every bracket and quote in turn."""
    from evalspec.ide.lines import _FLOW_STOP, FLOW_OPEN, INLINE, closing_quote

    depth, i = 0, 0
    while True:
        found = _FLOW_STOP.search(text, i)
        if found is None:
            return text.rstrip(), FLOW_OPEN
        i = found.start()
        c = text[i]
        if c in "\"'":
            end = closing_quote(text, i)
            if end < 0:
                return text.rstrip(), FLOW_OPEN
            i = end
        elif c in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return text[: i + 1], INLINE
        i += 1


@pytest.mark.parametrize("seed", range(4))
def test_a_deep_flow_value_is_closed_where_reading_each_bracket_closes_it(seed: int) -> None:
    """Where a flow value closes (or that it does not) on its line, counted a stretch at a time while deep
    (190-deep nesting on a 4 MB line: 0.8 s bracket by bracket, on the first request there)."""
    from evalspec.ide.lines import _value

    rng = random.Random(seed)
    for line in _lines(seed + 200, 80):
        body = line[next(i for i, c in enumerate(line) if c in "[{"):]
        long = "[" + ", ".join([body] * (LONG_LINE // len(body) + 2))
        for text in (body, "[" * 30 + body + "]" * rng.randrange(0, 32), body[: rng.randrange(len(body) + 1)],
                     "[[[[[" + body + "]]] # x", long + "]", long + "] # c", long + "] # ]", long + "]]",
                     long + "] [x]", long, long.replace("'", "").replace('"', "") + "]",
                     "{a: " + long.replace("'", "").replace('"', "") + "]}  "):
            if text and text[0] in "[{":
                assert _value(text) == _value_bracket_by_bracket(text), text
    deep = "[" + ("[" * 190 + "x" + "]" * 190 + ",") * 50 + "y]"
    assert _value(deep + " # c") == _value_bracket_by_bracket(deep + " # c") == (deep, "inline")
