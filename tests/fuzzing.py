"""The fuzzer's parts, shared by the bounded run in the suite (tests/test_fuzz.py) and the long run
(bench/fuzz.py): seed documents, the attack run's mutations, and one check of a document through
`analyze()` and every editor feature.

A document passes when nothing raises and every range the engine hands an editor (findings, their
related spans and fix edits, symbols, links, hovers, completion edits, refactorings) is well-formed:
start before end, inside the text as the engine splits it (at "\\n"). Durations are measured and
returned, never judged here (bench/fuzz.py reports the slowest).
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evalspec.analysis import Analysis, Caches, analyze
from evalspec.detect import FileKind
from evalspec.findings import Span
from evalspec.ide.completion import complete
from evalspec.ide.hover import hover
from evalspec.ide.navigation import definition, document_links
from evalspec.ide.refactor import refactorings
from evalspec.ide.symbols import Symbol, document_symbols, folding_ranges
from evalspec_lsp.convert import UTF8, LineIndex, diagnostic

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

# The attack run's own reproducers, as seeds of their own.
REPRODUCERS = (
    "title: x\r\r",
    "x: &b\ntargets: &b\n  k: *b\n",
    "# c\r\n" * 26 + "title: x\r\nmodels: [openai:gpt-4o-mini]\r\n---\r\n- id: p\r\n  prompt: hi\r\n",
    "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: rubrics\n        criteria: [{}]\n",
    "\t\n- ",
    "- prompt" + " " * 2_000 + "\n",
    "tests:\n  - file://**/*.yaml\n",
    "title: x\udca9\n---\n- prompt: \ud83d\n",
    # the judged round's: a quoted scalar continued on an item-like line; a bare CR before a second document
    'title: t\nmodels: [openai:gpt-4o-mini]\n---\n- prompt: "hello\n- world"\n  should: [x]\n',
    "title: x\r---\r",
)


def seeds(corpus: Path = CORPUS) -> list[tuple[str, str]]:
    """(path, text) of every corpus file, then the reproducers (under names each format detects)."""
    out: list[tuple[str, str]] = []
    for p in sorted(corpus.rglob("*")):
        if p.is_file() and p.suffix in (".yaml", ".yml", ".json", ".jsonl"):
            out.append((str(p), p.read_text(encoding="utf-8", errors="replace")))
    names = ("blueprint.yml", "suite.eval.yaml", ".agentv/targets.yaml")
    out += [(f"/nonexistent/{names[i % 3]}", text) for i, text in enumerate(REPRODUCERS)]
    return out


# --- mutations ------------------------------------------------------------------------------------------

Mutation = Callable[[random.Random, str], str]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _at(rng: random.Random, text: str) -> int:
    return rng.randint(0, len(text)) if text else 0


def _insert(rng: random.Random, text: str, what: str) -> str:
    i = _at(rng, text)
    return text[:i] + what + text[i:]


def bare_cr(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        lines[i] += "\r" * rng.randint(1, 2)
    return "\n".join(lines) if rng.random() < 0.7 else text.replace("\n", "\r")


def crlf(rng: random.Random, text: str) -> str:
    return text.replace("\n", "\r\n")


def yaml11_break(rng: random.Random, text: str) -> str:
    return _insert(rng, text, rng.choice(("\u2028", "\u2029", "\x85", "\x0c", "\x1c", "\v")))


def surrogate(rng: random.Random, text: str) -> str:
    return _insert(rng, text, chr(rng.randint(0xD800, 0xDFFF)))


def bom(rng: random.Random, text: str) -> str:
    return "\ufeff" + text if rng.random() < 0.7 else _insert(rng, text, "\ufeff")


def nul(rng: random.Random, text: str) -> str:
    return _insert(rng, text, rng.choice(("\x00", "\x01", "\x1b", "\x7f")))


def tabs(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        stripped = lines[i].lstrip(" ")
        lines[i] = "\t" * rng.randint(1, 2) + stripped if rng.random() < 0.7 else lines[i] + "\t"
    return "\n".join(lines)


def aliases(rng: random.Random, text: str) -> str:
    name = rng.choice(("a", "b", "x"))
    out = _insert(rng, text, f" &{name} ")
    out = _insert(rng, out, rng.choice((f"*{name}", f" *{name}\n", f"<<: *{name}\n", f"- *{name}\n")))
    return out


def merge(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    indent = " " * (len(lines[i]) - len(lines[i].lstrip(" ")))
    lines.insert(i, f"{indent}<<: {rng.choice(('*a', '[*a, *b]', '{k: v}', '1'))}")
    return "\n".join(lines)


def deep(rng: random.Random, text: str) -> str:
    n = rng.choice((50, 199, 200, 201, 400))
    if rng.random() < 0.5:
        return _insert(rng, text, "[" * n + "]" * n)
    return _insert(rng, text, "\n" + "".join(" " * i + "- a:\n" for i in range(0, n, 2)))


def long_line(rng: random.Random, text: str) -> str:
    unit = rng.choice((" ", "a", "# ", ": ", "\\", "'", '"', "${1:", "😀", "-"))
    return _insert(rng, text, unit * rng.choice((500, 5_000, 30_000)))


def invalid_utf8(rng: random.Random, text: str) -> str:
    raw = bytearray(text.encode("utf-8", "surrogatepass"))
    for _ in range(rng.randint(1, 4)):
        raw.insert(rng.randint(0, len(raw)), rng.choice((0x80, 0xC0, 0xE2, 0xF0, 0xFF, 0xED)))
    return raw.decode("utf-8", rng.choice(("replace", "surrogateescape")))


def yaml_noise(rng: random.Random, text: str) -> str:
    piece = "".join(rng.choice(":-#'\"[]{},&*!|>%@`? \t\n$\\") for _ in range(rng.randint(1, 8)))
    return _insert(rng, text, piece)


def cut(rng: random.Random, text: str) -> str:
    a = _at(rng, text)
    return text[:a] if rng.random() < 0.5 else text[:a] + text[min(len(text), a + rng.randint(1, 40)):]


def shuffle_lines(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    op = rng.random()
    i = rng.randrange(len(lines))
    if op < 0.3:
        del lines[i]
    elif op < 0.6:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif op < 0.8:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i] = " " * rng.randint(0, 6) + lines[i].lstrip()
    return "\n".join(lines)


def unicode_noise(rng: random.Random, text: str) -> str:
    return _insert(rng, text, rng.choice(("é", "😀", "\u0301", "\u200b", "\U0010ffff", "ﬁ", "\u202e", "𝔘")))


def doc_markers(rng: random.Random, text: str) -> str:
    return _insert(rng, text, rng.choice(("\n---\n", "\n...\n", "\n%YAML 1.2\n---\n", "---", "\n--- |\n")))


# --- the judged round's mutations (issue 15: "the attack repeated, with new mutations") -------------------
# Each works on a line of the document: a `key: value` line's value or key where it can, else anywhere.


def _pick_line(rng: random.Random, lines: list[str]) -> int:
    """A line holding `key:` (most documents have many), else any line."""
    keyed = [i for i, line in enumerate(lines) if ":" in line]
    return rng.choice(keyed) if keyed and rng.random() < 0.9 else rng.randrange(len(lines))


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" -"))]


def _set_value(rng: random.Random, text: str, values: tuple[str, ...]) -> str:
    """One `key: value` line's value replaced by one of `values` (or the value of a new key there)."""
    lines = _lines(text)
    i = _pick_line(rng, lines)
    line = lines[i]
    at = line.find(":")
    value = rng.choice(values)
    if at >= 0:
        lines[i] = line[:at + 1] + " " + value
    else:
        lines.insert(i, f"{_indent(line)}{rng.choice(('id', 'prompt', 'temperature', 'weight', 'title', 'x'))}: {value}")
    return "\n".join(lines)


TAGS = ("!!binary aGVsbG8=", "!!binary '@@not base64'", "!!python/object:os.system ls",
        "!!python/object/apply:os.system [echo pwned]", "!!python/name:os.system", "!foo bar", "!foo",
        "!<tag:yaml.org,2002:str> x", "!<!> x", "!!int not-a-number", "!!float 1e400", "!!bool maybe", "!!null x",
        "!!map {a: 1}", "!!seq [a]", "!!set {a, b}", "!!omap [a: 1, a: 2]", "!!timestamp 2001-12-14", "!e!x y",
        "! x", "!!str", "!!str [a, b]", "!!int {a: 1}", "!!merge <<", "!%F0%9F%98%80 x", "!!" + "t" * 3000 + " x")


def tags(rng: random.Random, text: str) -> str:
    """Tags on values, on keys, on collections: recorded, never constructed (nothing runs)."""
    if rng.random() < 0.7:
        return _set_value(rng, text, TAGS)
    lines = _lines(text)
    i = _pick_line(rng, lines)
    stripped = lines[i].lstrip(" -")
    lines[i] = lines[i][:len(lines[i]) - len(stripped)] + rng.choice(("!!str ", "!!int ", "!foo ", "!!python/str ",
                                                                       "!<x> ", "!!binary ")) + stripped
    return "\n".join(lines)


def key_anchors(rng: random.Random, text: str) -> str:
    """Anchors on keys, aliases as keys (`*k : v`), one key's anchor aliased as another's value."""
    lines = _lines(text)
    i = _pick_line(rng, lines)
    stripped = lines[i].lstrip(" -")
    lines[i] = lines[i][:len(lines[i]) - len(stripped)] + "&k " + stripped
    j = rng.randrange(len(lines) + 1)
    indent = _indent(lines[min(j, len(lines) - 1)]).replace("-", " ")
    lines.insert(j, rng.choice((f"{indent}*k : v", f"{indent}? *k\n{indent}: v", f"{indent}x: *k",
                                f"{indent}*k: v", f"{indent}- *k")))
    return "\n".join(lines)


def complex_keys(rng: random.Random, text: str) -> str:
    """`? ` keys: lists, mappings, block scalars and aliases as keys, a key without a value."""
    lines = _lines(text)
    j = rng.randrange(len(lines) + 1)
    indent = _indent(lines[min(j, len(lines) - 1)]).replace("-", " ")
    piece = rng.choice(("? [a, b]\n: v", "? {a: 1}\n: v", "? |\n  block key\n: v", "? a", "? - x\n  - y\n: z",
                        "? prompt\n: hi", "{? a : b}: c", "[a, b]: c", "? \n: ", "? *a\n: b", "? !!binary x\n: y",
                        "? id\n: [1, 2]"))
    lines[j:j] = [indent + x for x in piece.split("\n")]
    return "\n".join(lines)


def merges(rng: random.Random, text: str) -> str:
    """`<<` merges of lists of aliases, of an alias to a scalar or a list, of itself; with the anchors."""
    lines = _lines(text)
    anchors = "a0: &a {k: v, prompt: p}\nb0: &b {k: w}\ns0: &s a scalar\nl0: &l [1, 2]\n"
    if rng.random() < 0.6:
        lines.insert(0, anchors.rstrip("\n"))
    i = rng.randrange(len(lines))
    indent = " " * (len(lines[i]) - len(lines[i].lstrip(" ")))
    lines.insert(i, indent + rng.choice(("<<: [*a, *b]", "<<: *s", "<<: *l", "<<: [*s, *a]", "<<: [*a, *a, *a]",
                                         "<<: {<<: *a}", "<<: []", "<<: [1, [2]]", "<<: null", "<<: <<",
                                         "<<: *a\n" + indent + "<<: *b")))
    return "\n".join(lines)


def duplicate_deep(rng: random.Random, text: str) -> str:
    """A nested `key: value` line repeated with another value (or the same), once or many times."""
    lines = _lines(text)
    nested = [i for i, line in enumerate(lines) if line.startswith(" ") and ":" in line]
    i = rng.choice(nested) if nested else _pick_line(rng, lines)
    line = lines[i]
    key = line[:line.find(":") + 1] if ":" in line else line
    copies = [key + " other"] * rng.choice((1, 1, 2, 500))
    lines[i + 1:i + 1] = copies if rng.random() < 0.7 else [line] * len(copies)
    return "\n".join(lines)


def markers_in_block(rng: random.Random, text: str) -> str:
    """Document markers and directives inside block scalars, indented (content) and at column 0 (an end)."""
    lines = _lines(text)
    i = rng.randrange(len(lines) + 1)
    indent = _indent(lines[min(i, len(lines) - 1)]).replace("-", " ")
    body = rng.choice(("  ---", "  ...", "---", "...", "  %YAML 1.2", "%TAG ! x:", "  --- |", "  - ---"))
    lines[i:i] = [f"{indent}prompt: {rng.choice(('|', '>', '|-', '>+', '|2'))}", f"{indent}  text", indent + body,
                  f"{indent}  more"]
    return "\n".join(lines)


def tag_directives(rng: random.Random, text: str) -> str:
    """`%TAG` (and `%YAML`) directives: before the file, before a later document, repeated, malformed."""
    directive = rng.choice(("%TAG ! tag:evil.example,2000:", "%TAG !e! tag:e.example,2000:app/",
                            "%TAG !! tag:other:", "%TAG !e! !", "%TAG !e!", "%TAG", "%YAML 1.1", "%YAML 2.0",
                            "%YAML 1.2\n%YAML 1.2", "%FOO bar", "%TAG !e! tag:x:\n%TAG !e! tag:y:"))
    if rng.random() < 0.5:
        return directive + "\n---\n" + text
    lines = _lines(text)
    lines.insert(rng.randrange(len(lines) + 1), directive + "\n---")
    return "\n".join(lines)


def long_names(rng: random.Random, text: str) -> str:
    """Anchors and aliases with names of thousands of characters (and tags as long)."""
    name = rng.choice(("a", "é", "-", "_")) * rng.choice((256, 1025, 20_000, 200_000))
    out = _set_value(rng, text, (f"&{name} x", f"&{name} {{k: v}}"))
    return _insert(rng, out, rng.choice((f" *{name}", f"\nx: *{name}\n", f"\n- *{name}\n", f"\n<<: *{name}\n")))


INVISIBLE = ("\u200d", "\u200c", "\u200b", "\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069",
             "\u200f", "\u061c", "\ufeff", "\u00ad", "\ufe0f", "\u0301", "\u180e", "\u2060", "\U000e0001")


def invisible(rng: random.Random, text: str) -> str:
    """Zero-width joiners, bidi overrides, BOMs, soft hyphens inside keys, ids and values."""
    lines = _lines(text)
    for _ in range(rng.randint(1, 3)):
        i = _pick_line(rng, lines)
        line = lines[i]
        colon = line.find(":")
        at = rng.randint(len(line) - len(line.lstrip(" -")), colon) if colon > 0 and rng.random() < 0.6 \
            else rng.randint(0, len(line))
        lines[i] = line[:at] + "".join(rng.choice(INVISIBLE) for _ in range(rng.randint(1, 3))) + line[at:]
    return "\n".join(lines)


def mixed_indent(rng: random.Random, text: str) -> str:
    """Indentation of spaces and tabs mixed: a tab after spaces, after `- `, before `:`, in a flow list."""
    lines = _lines(text)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        line = lines[i]
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        how = rng.randrange(5)
        if how == 0:
            lines[i] = " " * indent + "\t" + body
        elif how == 1:
            lines[i] = " " * max(0, indent - 1) + "\t " + body
        elif how == 2 and body.startswith("- "):
            lines[i] = " " * indent + "-\t" + body[2:]
        elif how == 3 and ":" in body:
            lines[i] = line.replace(":", "\t:", 1)
        else:
            lines[i] = line.replace(", ", ",\t", 1) + "\t"
    return "\n".join(lines)


NUMBERS = ("1e400", "-1e400", "1e-400", ".nan", ".NaN", "-.inf", "+.inf", "0x", "0xFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
           "0o", "0o9", "0b101", "1_000", "+12", "012", "9" * 5000, "-0", "0.", ".5", "-.5e-3", "NaN", "Infinity",
           "1e", "1.7976931348623157e309", "-9223372036854775809", "0x_1", "1:20", "190:20:30", "~", "-")
TIMESTAMPS = ("2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2024-01-01", "2002-12-14", "12:30:45",
              "2001-12-14T21:59:43Z", "99999-99-99", "2024-02-30")
YAML11 = ("yes", "No", "on", "OFF", "y", "N", "~", "Null", "TRUE", "=", "<<")


def odd_scalars(rng: random.Random, text: str) -> str:
    """Numbers a float or an int cannot hold, NaN, hex without digits, timestamps and YAML 1.1 booleans, as
    values of any key (ids, temperatures, weights, thresholds)."""
    return _set_value(rng, text, rng.choice((NUMBERS, TIMESTAMPS, YAML11)))


def item_lookalikes(rng: random.Random, text: str) -> str:
    """A quoted or flow value continued on lines that start like a list item (`prompt: "hello⏎- world"` is
    one string to YAML), at column 0 or at the value's own indentation; a block scalar holding `- ` lines."""
    lines = _lines(text)
    i = _pick_line(rng, lines)
    line = lines[i]
    indent = _indent(line).replace("-", " ")
    dash = rng.choice(("- ", indent + "- ", "  - "))
    value = rng.choice((f'"hello\n{dash}world"', f"'hello\n{dash}world'", f"[hello\n{dash}world]",
                        f"{{a: hello\n{dash}b}}", f'["a,\n{dash}b"]', f"|\n{indent}  - one\n{indent}  - two",
                        f'"open\n{dash}x', f"'it''s\n{dash}x'", f'"\\"\n{dash}"'))
    at = line.find(":")
    lines[i] = (line[:at + 1] + " " + value) if at >= 0 else line + " " + value
    return "\n".join(lines)


def encoded_surrogates(rng: random.Random, text: str) -> str:
    """UTF-8-encoded surrogates (ED A0 80…) and overlong forms, decoded as a client might: to lone surrogates
    (surrogatepass, surrogateescape) or U+FFFD."""
    raw = bytearray(text.encode("utf-8", "surrogatepass"))
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(raw))
        raw[at:at] = rng.choice((b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\xa0\xbd\xed\xb8\x80", b"\xc0\xaf",
                                 b"\xe0\x80\xaf", b"\xf4\x90\x80\x80"))
    errors = rng.choice(("surrogatepass", "surrogateescape", "replace"))
    try:
        return bytes(raw).decode("utf-8", errors)
    except UnicodeDecodeError:  # surrogatepass passes surrogates only; an overlong form stays invalid
        return bytes(raw).decode("utf-8", "surrogateescape")


MUTATIONS: tuple[Mutation, ...] = (bare_cr, crlf, yaml11_break, surrogate, bom, nul, tabs, aliases, merge, deep,
                                   long_line, invalid_utf8, yaml_noise, cut, shuffle_lines, unicode_noise,
                                   doc_markers, tags, key_anchors, complex_keys, merges, duplicate_deep,
                                   markers_in_block, tag_directives, long_names, invisible, mixed_indent,
                                   odd_scalars, item_lookalikes, encoded_surrogates)


def window(rng: random.Random, text: str) -> str:
    """A slice of whole lines (most documents stay small, so many are checked per second)."""
    lines = _lines(text)
    if len(lines) <= 40 or rng.random() < 0.1:
        return text
    start = rng.randrange(len(lines))
    return "\n".join(lines[start:start + rng.randint(1, 60)])


def mutate(rng: random.Random, text: str, n: int | None = None) -> str:
    for _ in range(n if n is not None else rng.randint(1, 3)):
        text = rng.choice(MUTATIONS)(rng, text)
    return text


def documents(rng: random.Random, corpus: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """Endless (path, mutated text)."""
    while True:
        path, text = rng.choice(corpus)
        yield path, mutate(rng, window(rng, text))


# --- the check --------------------------------------------------------------------------------------

KINDS = (None, FileKind.WEVAL, FileKind.AGENTV)


@dataclass
class Outcome:
    path: str
    text: str
    seconds: float = 0.0  # wall clock
    cpu: float = 0.0  # this process's CPU time: what the document costs, on a busy machine too
    problems: list[str] = field(default_factory=list)


def well_formed(span: Span, lines: list[str]) -> bool:
    sl, sc, el, ec = span
    return (0 <= sl <= el < len(lines) and 0 <= sc <= len(lines[sl]) and 0 <= ec <= len(lines[el])
            and (sl, sc) <= (el, ec))


def positions(rng: random.Random, lines: list[str], n: int) -> list[tuple[int, int]]:
    """Cursor positions: line starts and ends, inside the text, and some just past a line's end."""
    out = []
    for _ in range(n):
        line = rng.randrange(len(lines))
        width = len(lines[line])
        out.append((line, rng.choice((0, width, rng.randint(0, width), min(width, rng.randint(0, 3))))))
    return out


def check(path: str, text: str, rng: random.Random, *, kind: FileKind | None = None, at: int = 6,
          every_way: bool = False) -> Outcome:
    """Analyse `text` and use every editor feature on it; the problems found, and how long it took.
    `every_way`: also analyse it as `check` does (streamed) and as the editor does (its item cache), which
    must say exactly the same (they read a list item by item, source.py and item_bounds.py)."""
    out = Outcome(path, text)
    started, cpu = time.perf_counter(), time.process_time()
    try:
        analysis = analyze(text, path, kind=kind)
        _ranges(out, analysis, rng, at)
        out.seconds = time.perf_counter() - started
        out.cpu = time.process_time() - cpu  # the other ways are not the document's time: they repeat it
        if every_way:
            _same_every_way(out, analysis, path, text, kind)
    except Exception:
        out.problems.append("exception: " + "".join(traceback.format_exc(limit=-4)))
        out.seconds = time.perf_counter() - started
        out.cpu = time.process_time() - cpu
    return out


def _digest(a: Analysis) -> tuple[object, ...]:
    return a.kind, [repr(f) for f in a.findings]


def _same_every_way(out: Outcome, analysis: Analysis, path: str, text: str, kind: FileKind | None) -> None:
    expected = _digest(analysis)
    for way, other in (("streamed (check, run)", analyze(text, path, kind=kind, streamed=True)),
                       ("the editor's", analyze(text, path, kind=kind, caches=Caches()))):
        got = _digest(other)
        if got != expected:
            diff = next((f"{a} / {b}" for a, b in zip(got[1], expected[1], strict=False) if a != b),
                        f"{len(got[1])} findings / {len(expected[1])}")
            out.problems.append(f"{way} analysis differs from the full one: {got[0]} / {expected[0]}: {diff[:600]}")


def _ranges(out: Outcome, analysis: Analysis, rng: random.Random, at: int) -> None:
    lines = analysis.parsed.lines
    index = LineIndex(lines)
    index8 = LineIndex(lines, UTF8)

    def need(what: str, span: Span) -> None:
        if not well_formed(span, lines):
            out.problems.append(f"{what}: impossible range {tuple(span)}")

    for f in analysis.findings:
        if f.path is not None:
            continue  # about another file (an external tests file)
        need(f"finding {f.code}", f.span)
        for r in f.related:
            need(f"finding {f.code} related", r.span)
        for fix in f.fixes:
            for e in fix.edits:
                need(f"finding {f.code} fix", e.span)
        diagnostic(f, index, "file:///x")  # the server's conversion, both encodings
        index8.range(f.span)
    if analysis.kind is FileKind.NONE:
        return

    def symbols(items: list[Symbol], depth: int = 0) -> None:
        for s in items:
            need(f"symbol {s.name!r}", s.span)
            if s.selection_span is not None:
                need(f"symbol {s.name!r} selection", s.selection_span)
            symbols(list(s.children or ()), depth + 1)

    symbols(document_symbols(analysis))
    for start, end in folding_ranges(analysis):
        if not 0 <= start <= end < len(lines):
            out.problems.append(f"folding range {start}-{end} outside {len(lines)} lines")
    for link in document_links(analysis):
        need("link", link.span)
    for line, col in positions(rng, lines, at):
        for item in complete(analysis, line, col, snippets=bool(rng.getrandbits(1))).items:
            if item.replace_span is not None:
                need(f"completion {item.label!r} at {line}:{col}", item.replace_span)
        info = hover(analysis, line, col)
        if info is not None:
            need(f"hover at {line}:{col}", info.span)
        for loc in definition(analysis, line, col):
            if loc.path is None:
                need(f"definition at {line}:{col}", loc.span)
        end_line = min(len(lines) - 1, line + rng.randint(0, 3))
        span = Span(line, col, end_line, len(lines[end_line])) if end_line > line else Span(line, col, line, col)
        for fix in refactorings(analysis, span):
            for e in fix.edits:
                need(f"refactoring {fix.title!r}", e.span)
