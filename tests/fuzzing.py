"""The fuzzer's parts, shared by the bounded run in the suite (tests/test_fuzz.py) and the long run
(bench/fuzz.py): seed documents, the attack run's mutations, and one check of a document through
`analyze()` and every editor feature.

A document passes when nothing raises and every range the engine hands an editor (findings, their
related spans and fix edits, symbols, links, hovers, completion edits, refactorings) is well-formed:
start before end, inside the text as the engine splits it (at "\\n"). Durations are measured and
returned, never judged here (bench/fuzz.py reports the slowest).
"""

from __future__ import annotations

import os
import random
import sys
import sysconfig
import tempfile
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
from evalspec.ide.inlay_hints import inlay_hints
from evalspec.ide.navigation import definition, document_links
from evalspec.ide.refactor import refactorings
from evalspec.ide.rename import FileEdits, highlights, prepare_rename, rename
from evalspec.ide.semantic_tokens import semantic_tokens
from evalspec.ide.signature import signature_help
from evalspec.ide.symbols import Symbol, document_symbols, folding_ranges
from evalspec_lsp.convert import UTF8, LineIndex, diagnostic_json

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



# --- the eighth round's mutations (an attacker who has read the ones above) ---------------------------------


def _insert_lines(rng: random.Random, text: str, block: str, *, top: bool = False) -> str:
    """`block` (lines split at "\n") inserted before a random line, at that line's indentation (or at
    column 0 when `top`)."""
    lines = _lines(text)
    i = rng.randrange(len(lines) + 1)
    indent = "" if top else _indent(lines[min(i, len(lines) - 1)]).replace("-", " ")
    lines[i:i] = [indent + x for x in block.split("\n")]
    return "\n".join(lines)


WEVAL_KEYS = ("title: t", "models: [openai:gpt-4o-mini]", "prompts:\n  - prompt: hi\n    should: [x]",
              "should: [a, {$contains: b}]", "ideal: x", "system: s", "prompt: hi", "should_not: [x]",
              "id: p1\nprompt: hi", "point_defs: {a: 1}", "citation: c", "messages:\n  - user: hi")
AGENTV_KEYS = ("tests:\n  - id: a\n    input: hi", "execution:\n  target: default", "input: hi",
               "assert:\n  - type: contains\n    value: x", "expected_output: x", "criteria: c", "evalcases: []",
               "targets:\n  - name: t\n    provider: mock", "workspace:\n  template: ./t", "name: n\ndescription: d",
               "tests: ./cases.jsonl", "input:\n  - role: user\n    content: hi", "dataset: d")


def mixed_formats(rng: random.Random, text: str) -> str:
    """Weval keys in an AgentV file and AgentV keys in a blueprint: at the top, inside an item, both."""
    pool = rng.choice((WEVAL_KEYS, AGENTV_KEYS, WEVAL_KEYS + AGENTV_KEYS))
    for _ in range(rng.randint(1, 3)):
        text = _insert_lines(rng, text, rng.choice(pool), top=rng.random() < 0.5)
    return text


HEADERS = ("description: d\nexecution:\n  target: default\ntests:\n  - id: a\n    input: hi\n",
           "name: s\ntests: ./cases.yaml\n", "tests:\n  - id: a\n    input: hi\n    criteria: c\n",
           "title: t\nmodels: [openai:gpt-4o-mini]\n", "title: t\ntests:\n  - id: a\n    input: hi\n",
           "execution:\n  targets: [x]\nprompts: []\n", "- id: a\n  input: hi\n", "{}\n", "[]\n", "tests: []\n")
SECOND = ("- id: p\n  prompt: hi\n  should: [x]\n", "- id: a\n  input: hi\n  assert:\n    - type: contains\n      value: x\n",
          "tests:\n  - id: b\n    input: x\n", "title: again\n", "- prompt: p\n---\n- prompt: q\n", "")


def foreign_header(rng: random.Random, text: str) -> str:
    """A blueprint whose header is an AgentV suite (and the reverse): one format's header, `---`, then the
    document (or the other format's items) as the second document; headers that are lists, or empty."""
    header = rng.choice(HEADERS)
    body = text if rng.random() < 0.6 else rng.choice(SECOND)
    return header + rng.choice(("---\n", "--- # c\n", "...\n---\n", "---")) + body


FLOW_MARKERS = ("[a,\n---\nb]", "{a: 1,\n...\n}", '"quoted\n---\nstring"', "'q\n...\nend'", "hello\n---\n  world",
                "[a,\n--- x\n]", "{k: [\n...\n]}", '"a\n%YAML 1.2\n---\nb"', "[\n---]", "{\n...}", "|\n---",
                ">-\n  a\n...\n  b", "[a, b]\n---\n- c", "'\n---\n'")


def markers_in_flow(rng: random.Random, text: str) -> str:
    """`---` and `...` at column 0 inside flow collections, quoted and plain multi-line scalars."""
    return _set_value(rng, text, FLOW_MARKERS)


KEYS = ('"a: b"', "'it''s'", '"#x"', "a#b", "a :b", '"prompt "', '""', "''", '"\\0"', '"\\ud800"', '"\\x85"',
        '"\\L\\P"', "'# not a comment'", "[a]", "{a: 1}", '"\\"', "a\\b", "`x`", "@x", "%x", "!", "&", "*",
        '"a\\nb"', "'multi\n  line'", "?x", "-x", "- x:", ":x", "::", "a::b", "x:y", '"x":y')


def odd_keys(rng: random.Random, text: str) -> str:
    """Keys holding `:`, `#` and quotes, empty keys, escapes, and keys of tens of thousands of characters."""
    lines = _lines(text)
    i = _pick_line(rng, lines)
    line = lines[i]
    if rng.random() < 0.25:
        key = rng.choice(("k", "prompt", "id", ":", "#", '"', "😀")) * rng.choice((1_000, 60_000))
        key = key if rng.random() < 0.5 else f'"{key}"'
    else:
        key = rng.choice(KEYS)
    colon = line.find(":")
    start = len(line) - len(line.lstrip(" -"))
    lines[i] = line[:start] + key + (line[colon:] if colon >= start else ": v")
    return "\n".join(lines)


YAML11_KEYS = ("yes", "no", "on", "off", "y", "n", "Yes", "ON", "true", "False", "null", "~", "0777", "010", "08",
               "0x1F", "0b11", "1_000", "1.0", ".inf", "-.inf", ".nan", "1e3", "12:30", "1:30:00", "2001-01-01", "=",
               "<<")


def yaml11_keys(rng: random.Random, text: str) -> str:
    """YAML 1.1 booleans, octals, sexagesimals and nulls as keys and as ids (`id: 010` beside `id: 8`)."""
    lines = _lines(text)
    i = _pick_line(rng, lines)
    line = lines[i]
    value = rng.choice(YAML11_KEYS)
    start = len(line) - len(line.lstrip(" -"))
    colon = line.find(":")
    if rng.random() < 0.5 and colon >= start:
        lines[i] = line[:start] + value + line[colon:]
    else:
        indent = _indent(line).replace("-", " ")
        twin = {"010": "8", "0777": "511", "yes": "true", "on": "'on'", "1_000": "1000", "0x1F": "31"}.get(value, value)
        lines[i:i] = [f"{indent}- id: {value}", f"{indent}  prompt: a", f"{indent}- id: {twin}", f"{indent}  prompt: b"]
    return "\n".join(lines)


def merge_chains(rng: random.Random, text: str) -> str:
    """`<<` merges of aliases of aliases: long chains, each level merging the one before twice (2^n if merged
    naively), a merge of an alias still being defined, and the chain's end merged into an item."""
    n = rng.choice((3, 30, 64, 300))
    how = rng.randrange(4)
    if how == 0:
        chain = ["a0: &a0 {k: v, prompt: p}"] + [f"a{i}: &a{i} {{<<: *a{i - 1}, k{i}: v}}" for i in range(1, n)]
    elif how == 1:
        chain = ["a0: &a0 {k: v}"] + [f"a{i}: &a{i} {{<<: [*a{i - 1}, *a{i - 1}]}}" for i in range(1, n)]
    elif how == 2:
        chain = ["a0: &a0\n  k: v"] + [f"a{i}: &a{i}\n  <<: *a{i - 1}\n  x{i}: *a{i - 1}" for i in range(1, n)]
    else:
        chain = [f"a{n - 1}: &a{n - 1} {{<<: *a{n - 1}}}", "a0: &a0 {<<: [*a0]}"]
    out = "\n".join(chain) + "\n" + text if rng.random() < 0.7 else text + "\n" + "\n".join(chain)
    return _insert_lines(rng, out, rng.choice((f"<<: *a{n - 1}", f"<<: [*a{n - 1}, *a0]", f"- <<: *a{n - 1}",
                                               f"x: *a{n - 1}", f"*a{n - 1}: v")))


TOP = ("tests:\n  - id: dup\n    input: x", "tests: other.yaml", "tests: 5", "models: [a]", "models:\n  - b",
       "models: {}", "prompts: []", "title: again", "title: [t]", "execution:\n  target: t", "description: d",
       "tests:", "models:", "evalcases:\n  - id: e\n    input: y", "system: s", "assert: []")


def duplicate_top(rng: random.Random, text: str) -> str:
    """Top-level `tests:`, `models:`, `title:`… given twice (or three times), with other shapes."""
    for _ in range(rng.randint(1, 3)):
        block = rng.choice(TOP)
        text = (block + "\n" + text) if rng.random() < 0.3 else _insert_lines(rng, text, block, top=True) \
            if rng.random() < 0.5 else text.rstrip("\n") + "\n" + block + "\n"
    return text


CP1252 = "“smart” ‘quotes’ – — … € ™ š Ž œ • ¡ ÿ é"


def windows1252(rng: random.Random, text: str) -> str:
    """Windows-1252 bytes in a UTF-8 file (smart quotes, dashes, €), decoded as a client might; or the whole
    UTF-8 file read as Latin-1/cp1252 (mojibake, and C1 controls such as NEL)."""
    if rng.random() < 0.3:
        raw = text.encode("utf-8", "surrogatepass")
        return raw.decode(rng.choice(("latin-1", "cp1252")), "replace")
    raw = bytearray(text.encode("utf-8", "surrogatepass"))
    for _ in range(rng.randint(1, 3)):
        piece = "".join(rng.choice(CP1252) for _ in range(rng.randint(1, 6))).encode("cp1252")
        at = rng.randint(0, len(raw))
        raw[at:at] = piece
    return bytes(raw).decode("utf-8", rng.choice(("replace", "surrogateescape")))


TRIVIA = ("# c", "", "   ", "\t", "---", "...", "%YAML 1.2", "--- # c", "... # c", "#", "# ---", "\ufeff", "\r",
          "#" * 300, "--- ", "---\t", "--- |", "--- >", "%TAG ! x:", "  # indented", "--- #", "- # c")


def only_trivia(rng: random.Random, text: str) -> str:
    """A file that is only comments, whitespace, document markers and directives (or mostly that)."""
    n = rng.choice((1, 3, 20, 2_000))
    body = rng.choice(("\n", "\r\n", "\r")).join(rng.choice(TRIVIA) for _ in range(n))
    return body if rng.random() < 0.8 else body + "\n" + text


def giant_scalar(rng: random.Random, text: str) -> str:
    """One scalar of up to 1 MB in a prompt, criteria, should, id or input: plain, quoted or a block."""
    size = rng.choice((20_000, 100_000, 100_000, 1_000_000)) if rng.random() < 0.3 else rng.choice((5_000, 20_000))
    unit = rng.choice(("a", "word ", "é", "😀", "\\", "'", '" ', "#", ": ", "- ", "${{ X }}"))
    blob = (unit * (size // len(unit) + 1))[:size]
    key = rng.choice(("prompt", "criteria", "should", "id", "input", "ideal", "system", "value", "outcome"))
    form = rng.randrange(4)
    if form == 0:
        value = '"' + blob.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif form == 1:
        value = "'" + blob.replace("'", "''") + "'"
    elif form == 2:
        width = rng.choice((80, 10_000))
        value = "|\n" + "\n".join("  " + blob[i:i + width] for i in range(0, len(blob), width))
    else:
        value = blob.replace(": ", ":").replace(" #", "#").lstrip("-'\"#& *!|>%@`?")
    return _insert_lines(rng, text, f"{key}: {value}")


def many_models(rng: random.Random, text: str) -> str:
    """Thousands of models, targets or prompts: distinct, repeated, in a flow list or a block list."""
    n = rng.choice((1_000, 3_000, 10_000))
    names = [rng.choice((f"openai:gpt-{i}", "openai:gpt-4o-mini", f"x{i}", f"{{id: m{i}}}", "", f"m:{i}:x"))
             for i in range(n)]
    key = rng.choice(("models", "targets", "execution:\n  targets", "prompts", "tests"))
    if rng.random() < 0.5:
        block = f"{key}: [" + ", ".join(names) + "]"
    else:
        block = f"{key}:\n" + "\n".join(f"  - {x}" for x in names)
    return _insert_lines(rng, text, block, top=True) if rng.random() < 0.7 else block + "\n" + text


REFERENCES = ("file://../../../../etc/passwd", "../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "file:///etc/shadow",
              "file://~/.aws/credentials", "/proc/self/environ", "/dev/zero", "/dev/stdin", "file://", "file://\\x00",
              "file://**/*.yaml", "file://../**/*.yaml", "file:///**/*.nothing.yaml", "../**", "**/../../*",
              "\\\\\\\\server\\\\share\\\\x", "C:\\\\Windows\\\\win.ini", "file://%2e%2e/%2e%2e/x", "./a/../../b.md",
              "./nonexistent.md", "${{ HOME }}/.bashrc", "file://${{ HOME }}/.netrc", "$ref: '#/definitions/x'",
              "'#/x'", "https://example.invalid/x.yaml", "file://./ok/../../../x.jsonl", "..", ".", "/", "~",
              "a\\x00b.yaml", "{$ref: ../x.yaml}", "[../a.yaml, /etc/hosts]", "./" + "../" * 40 + "etc/passwd")
SLOTS = ("tests: {r}", "- type: file\n  value: {r}", "prompt: {r}", "script: {r}", "script: [python, {r}]",
         "include: {r}", "$ref: {r}", "template: {r}", "- file: {r}", "cwd: {r}", "prompt: {{file: {r}}}",
         "input:\n  - role: user\n    content:\n      - type: file\n        value: {r}", "- {r}", "dataset: {r}",
         "workspace:\n  template: {r}", "targets_file: {r}", "tests:\n  - {r}", "- include: {r}")


def references(rng: random.Random, text: str) -> str:
    """References to absent and odd paths, and to files outside the project (`../`, absolute, `~`, `${{ HOME
    }}`, `$ref`, globs that climb): each must be a finding, and nothing outside the project is read (the
    check watches every file opened)."""
    for _ in range(rng.randint(1, 3)):
        text = _insert_lines(rng, text, rng.choice(SLOTS).format(r=rng.choice(REFERENCES)), top=rng.random() < 0.3)
    return text


CATASTROPHIC = ('"(a+)+$"', '"(a|aa)*b"', '"(.*a){20}"', '"^(\\\\w+\\\\s?)*$"', '"(x+x+)+y"', '"["', '"(?<=a+)b"',
                '"\\\\1(a)"', '"(?P<n>a)(?P=n)"', '"a{99999999}"', '"(?i)(?s).*"', '""', "null", "[a, b]", "5",
                '"' + "(" * 300 + "a" + ")" * 300 + '"', '"\\\\p{L}+"', '"(?x) a # c"', '"(?=a)*"')
JS = ('"for(;;){}"', '"throw {toString(){ for(;;){} }}"', "\"require('child_process').execSync('touch /tmp/pwned')\"",
      '"while(true);"', '"process.exit(1)"', '"new Array(1e9).fill(0)"', '"}"', "{a: 1}", "[1]", "null", "''",
      "|\n  return r.length > 0", '"import(\'os\')"', '"`${' + "(" * 200 + '`"')


def point_functions(rng: random.Random, text: str) -> str:
    """Weval point functions with absurd arguments: lists of 10,000, catastrophic or invalid regexes, `$js`
    that would never end or escape (checking never runs it: the check watches for processes started),
    counts out of range, unknown functions, functions as keys where a list is due."""
    big = "[" + ", ".join(f"w{i}" for i in range(rng.choice((100, 10_000)))) + "]"
    point = rng.choice((f"$contains: {big}", f"$contains_any_of: {big}", f"$contains_all_of: {big}",
                        f"$contains_at_least_n_of: [5, {big}]", f"$contains_at_least_n_of: [-1, {big}]",
                        f"$matches: {rng.choice(CATASTROPHIC)}", f"$imatches: {rng.choice(CATASTROPHIC)}",
                        f"$matches_all_of: [{rng.choice(CATASTROPHIC)}, {rng.choice(CATASTROPHIC)}]",
                        f"$imatch_at_least_n_of: [1e400, [{rng.choice(CATASTROPHIC)}]]",
                        f"$js: {rng.choice(JS)}", "$word_count_between: [5, 1]", "$word_count_between: [1e400, -1]",
                        "$word_count_between: [a]", "$contains_at_least_n_of: [1e9, []]", "$unknown: x",
                        "$call: {url: 'file:///etc/passwd'}", "$ref: x", "$: x", "${{ X }}: y", "$contains: null",
                        "$contains: {a: 1}", "$js:", "$contains: x\n$matches: y", "$CONTAINS: x", "$contains : x"))
    if rng.random() < 0.3:
        point = point.replace("\n", "\n  ") + "\n  weight: " + rng.choice(("2", "-1", ".nan", "1e400", "x"))
    item = "- " + point.replace("\n", "\n  ")
    block = rng.choice(("should", "should_not", "expect")) + ":\n" + "\n".join("  " + x for x in item.split("\n"))
    return _insert_lines(rng, text, block if rng.random() < 0.5 else item)


ASSERTS = ("type: contains", "type: contains\nvalue: [a, b]", "type: contains\nvalue: {a: 1}", "type: regex\nvalue: '(a+)+$'",
           "type: regex\nvalue: '['", "type: rubrics\ncriteria: a string", "type: rubrics\ncriteria: [[]]",
           "type: rubrics\ncriteria: [{weight: -1}]", "type: rubrics\ncriteria: [null, {}, 5]", "type: composite\nassert: 5",
           "type: composite\nassert:\n  - type: composite\n    assert: [{}]", "type: code-judge\nscript: 5",
           "type: code-judge\nscript: []", "type: code-judge\nscript: [../../bin/sh, -c, id]", "type: tool-trajectory\nexpected: x",
           "type: tool-trajectory\nmode: banana\nexpected: [{}]", "type: llm-judge\nprompt: {}", "type: is-json\nvalue: 1",
           "type: equals\nvalue: null", "type: word-count\nmin: 10\nmax: 1", "type: field-accuracy\nfields: 5",
           "type: latency\nmax_ms: -1", "type: cost\nmax_usd: .nan", "type: token-usage\nmax_total: 1e400",
           "type: execution-metrics\nmax_tool_calls: yes", "type: [contains]", "type: null", "type: {a: b}", "{}",
           "contains", "null", "type: contains-any\nvalue: []", "type: threshold\nthreshold: 2",
           "type: starts-with\nvalue: ''", "type: icontains-all\nvalue: [[a]]", "type: llm_judge\nprompt: ./j.md\nprompt: x",
           "type: agent-judge\nrubrics: 5", "type: code_judge\nscript: ./x.py\nconfig: [1]", "type: ''", "type: " + "x" * 5000,
           "type: contains-all\nvalue: [" + ", ".join(f"v{i}" for i in range(10_000)) + "]")


def agentv_shapes(rng: random.Random, text: str) -> str:
    """AgentV assertions of every type with the wrong shapes (missing, mistyped, nested, huge values), under an
    existing `assert:` or a new one."""
    item = rng.choice(ASSERTS).split("\n")
    lines = _lines(text)
    at = [i for i, line in enumerate(lines) if line.lstrip(" -").startswith(("assert:", "assertions:", "evaluators:"))]
    if at and rng.random() < 0.7:
        i = rng.choice(at)
        indent = " " * (len(_indent(lines[i])) + 2)
        lines[i + 1:i + 1] = [indent + "- " + item[0]] + [indent + "  " + x for x in item[1:]]
        return "\n".join(lines)
    block = "assert:\n  - " + "\n    ".join(item)
    return _insert_lines(rng, text, block)


WEIGHTS = ('"2"', "two", "-1", "0", "-0", ".nan", ".inf", "-.inf", "1e400", "[1]", "{a: 1}", "null", "true", "0x10",
           "1e-400", "9" * 400, "''", "1,5", "50%", "NaN", "Infinity", "-1e400", "yes", "2 # c", "&w 3", "*w")
NUMBER_KEYS = ("weight", "required", "threshold", "min_score", "temperature", "max_tokens", "timeout_seconds",
               "trials", "weight", "required", "min", "max", "max_ms", "n", "temperatures")


def weights(rng: random.Random, text: str) -> str:
    """Weights, required thresholds, temperatures… as strings, negatives, NaN, infinities and 400-digit numbers,
    where they are and where none was."""
    lines = _lines(text)
    have = [i for i, line in enumerate(lines) if line.lstrip(" -").startswith(NUMBER_KEYS)]
    value = rng.choice(WEIGHTS)
    if have and rng.random() < 0.6:
        i = rng.choice(have)
        lines[i] = lines[i][:lines[i].find(":") + 1] + " " + value
        return "\n".join(lines)
    return _insert_lines(rng, text, f"{rng.choice(NUMBER_KEYS)}: {value}")


GATES = ("assert:\n  - required: true", "assert:\n  - type: contains\n    required: 2",
         "assert: []\nrequired: true", "required: true", "assert:\n  - {required: true, weight: 0}\n  - {required: .nan}",
         "assert:\n  - type: composite\n    assert: []\n    required: true",
         "assert:\n  - type: composite\n    aggregator: {type: weighted_average, weights: {absent: 2, '': -1}}\n"
         "    assert:\n      - {name: a, type: contains, value: x}",
         "assert:\n  - type: rubrics\n    criteria:\n      - {id: c, outcome: o, required: true, weight: 0}",
         "assert:\n  - type: rubrics\n    criteria: []\n    required: true",
         "execution:\n  evaluators:\n    - {name: x, required: true}", "assert:\n  - type: contains\n    value: x\n"
         "    required: true\n    weight: 0\n  - type: contains\n    value: y\n    required: true\n    weight: 0",
         "assert:\n  - type: regex\n    value: '('\n    required: true\n    negate: true", "required: [true]",
         "assert:\n  - {type: code-judge, required: -0.5}", "assert:\n  - {type: llm-judge, required: '0.8'}")


def gates(rng: random.Random, text: str) -> str:
    """Required gates on assertions that are absent, empty, unknown or weighted 0; thresholds out of range."""
    return _insert_lines(rng, text, rng.choice(GATES))


ESCAPES = ('"\\ud800"', '"\\uDFFF\\uD800"', '"\\U0001F600"', '"\\U00110000"', '"\\x00"', '"\\0"', '"\\N\\_\\L\\P"',
           '"\\e"', '"\\/"', '"\\q"', '"\\u12"', '"a\\\n  b"', '"a\\tb"', '"\\x85\\u2028"', '"\\uFEFF"', '"\\"',
           '"\\U0000"', '"\\\\\\"', '"\\uD83D\\uDE00"', '"\\x1b]0;pwned\\x07"')


def escapes(rng: random.Random, text: str) -> str:
    """Double-quoted escapes giving lone surrogates, NUL, NEL, BOM, out-of-range code points or nothing valid, in
    values and in keys (ids, prompt ids become file names in a run)."""
    if rng.random() < 0.6:
        return _set_value(rng, text, ESCAPES)
    lines = _lines(text)
    i = _pick_line(rng, lines)
    line = lines[i]
    start = len(line) - len(line.lstrip(" -"))
    colon = line.find(":")
    lines[i] = line[:start] + rng.choice(ESCAPES) + (line[colon:] if colon >= start else ": v")
    return "\n".join(lines)


INTERPOLATIONS = ("${{", "${{ }}", "${{ ${{ X }} }}", "${{ OPENAI_API_KEY }}", "${{ X }}" * 5_000, "${{ HOME }}/.ssh/id_rsa",
                  "${{ " + "X" * 10_000 + " }}", "${{ \x00 }}", "${{ PATH }}", "$${{ X }}", "${ X }", "{{ X }}",
                  "${{ X }", "${{ 😀 }}", "${{ X\n}}", "${{ 1 }}", "${{ A-B }}")


def interpolations(rng: random.Random, text: str) -> str:
    """`${{ VAR }}` interpolation opened and never closed, nested, repeated 5,000 times, naming secrets in an
    input, or naming a path outside the project."""
    return _set_value(rng, text, tuple(f'"{x}"' if "\n" in x else x for x in INTERPOLATIONS))



CYCLES = ("point_defs:\n  a: {$ref: b}\n  b: {$ref: a}\n  c: {$ref: c}",
          "point_defs: {a: '$ref: a', b: [{$ref: b}]}", "should:\n  - $ref: a\n  - $ref: c\n  - $ref: missing",
          "- $ref: a", "$ref: $ref",
          "targets:\n  - {name: a, provider: mock, use_target: b}\n  - {name: b, provider: mock, use_target: a}",
          "targets:\n  - {name: a, provider: mock, judge_target: a}\n  - {name: a, provider: openai}",
          "targets:\n  - {name: x, use_target: x}\n  - {name: y, use_target: '${{ Y }}'}",
          "execution:\n  target: a\n  targets: [a, a, b]", "use_target: a\njudge_target: a",
          "- {name: a, provider: mock, use_target: a}")


def cycles(rng: random.Random, text: str) -> str:
    """References that go round: `$ref` definitions naming each other or themselves, targets whose
    `use_target` or `judge_target` loops; and composites nested hundreds deep."""
    if rng.random() < 0.2:
        n = rng.choice((50, 300, 1_000))
        block = "assert:\n" + "".join("  " * i + "  - type: composite\n" + "  " * i + "    assert:\n" for i in range(n))
        block += "  " * n + "  - {type: contains, value: x}"
        return _insert_lines(rng, text, block)
    return _insert_lines(rng, text, rng.choice(CYCLES), top=rng.random() < 0.5)


NEIGHBOURS = ("dataset.eval.yaml", "./dataset.eval.yaml", "file://dataset.eval.yaml", "file://*.eval.yaml",
              "file://**/*.yaml", "file://./**/*", "dataset.jsonl", "../evals/dataset.eval.yaml", "file://*",
              "file://.", "file://evals/", "cases.yaml", "file://" + "*/" * 30 + "*.yaml", "file://{a,b}.yaml",
              "file://[!a]*.yaml", "file://**/**/**/**/*.yaml", "file://../*/evals/*.eval.yaml")


def self_reference(rng: random.Random, text: str) -> str:
    """A suite whose tests file is the suite itself, its neighbours, globs matching it, or the same file twice."""
    refs = [rng.choice(NEIGHBOURS) for _ in range(rng.randint(1, 4))]
    block = rng.choice(("tests: {0}", "tests:\n" + "\n".join(f"  - {r}" for r in refs), "- include: {0}",
                        "tests: [{0}, {0}]", "workspace: {0}", "- type: file\n  value: {0}"))
    return _insert_lines(rng, text, block.replace("{0}", refs[0]), top=rng.random() < 0.5)


JSON_PIECES = ('{"id": "a", "input": ' + "[" * 5_000 + "]" * 5_000 + "}", '{"id": 1e999, "input": NaN}',
               '{"id": "\\ud800", "input": "\\udfff"}', '{"id": "a", "id": "b"}', '{"id": "a",}', "// comment",
               '{"id": "a"} {"id": "b"}', '{"input": "' + "x" * 200_000 + '"}', "\ufeff{}", "[]", '"just a string"',
               "null", '{"id": "a"', '{"id": "a", "input": [{"role": "user", "content": [{"type": "file", '
               '"value": "../../../../etc/passwd"}]}]}', '{"expected_output": {"a": ' * 100 + "1" + "}" * 100 + "}",
               '{"assert": [{"type": "regex", "value": "(a+)+$"}]}', "{" + ", ".join(f'"k{i}": {i}' for i in range(5_000))
               + "}", "\x00", '{"id": "a"}\r', "\u2028", '{"\\u0000": 1}', '{"id": -0.0, "weight": -1e-400}')


def json_lines(rng: random.Random, text: str) -> str:
    """JSON and JSONL documents (tests files, configs) with lines nested 5,000 deep, 1e999, NaN, lone surrogate
    escapes, duplicate keys, trailing commas, comments, several values on a line, 200,000-character strings."""
    lines = _lines(text)
    for _ in range(rng.randint(1, 3)):
        piece = rng.choice(JSON_PIECES)
        i = rng.randrange(len(lines) + 1)
        if rng.random() < 0.3 and i < len(lines):
            lines[i] = lines[i][:rng.randint(0, len(lines[i]))] + piece
        else:
            lines.insert(i, piece)
    return "\n".join(lines)


def many_documents(rng: random.Random, text: str) -> str:
    """Thousands of documents: `---` markers alone, between items, with directives, empty or a scalar each."""
    n = 20_000 if rng.random() < 0.05 else rng.choice((10, 100, 500, 2_000))  # most stay cheap: many per second
    doc = rng.choice(("---\n", "---\n- prompt: p\n", "--- x\n", "...\n---\n", "---\n...\n", "--- {}\n", "%YAML 1.2\n---\n",
                      "---\ntitle: t\n"))
    return text + "\n" + doc * n if rng.random() < 0.6 else doc * n + text


EIGHTH: tuple[Mutation, ...] = (mixed_formats, foreign_header, markers_in_flow, odd_keys, yaml11_keys, merge_chains,
                                duplicate_top, windows1252, only_trivia, giant_scalar, many_models, references,
                                point_functions, agentv_shapes, weights, gates, escapes, interpolations, cycles,
                                self_reference, json_lines, many_documents)

MUTATIONS: tuple[Mutation, ...] = (bare_cr, crlf, yaml11_break, surrogate, bom, nul, tabs, aliases, merge, deep,
                                   long_line, invalid_utf8, yaml_noise, cut, shuffle_lines, unicode_noise,
                                   doc_markers, tags, key_anchors, complex_keys, merges, duplicate_deep,
                                   markers_in_block, tag_directives, long_names, invisible, mixed_indent,
                                   odd_scalars, item_lookalikes, encoded_surrogates, *EIGHTH)


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


# --- what checking may touch: files of the document's project only, and no process at all --------------
# An audit hook (installed once, active only while a document is checked) sees every file opened and folder
# listed, and every process started: checking parses, it never runs a `$js` point, a script or a command, and
# a reference leaving the project is a finding, not a read (SECURITY.md).

_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                             "os.forkpty", "pty.spawn"})
_OWN = tuple(os.path.realpath(p) + os.sep for p in {
    str(Path(__file__).resolve().parents[1]), sys.prefix, sys.base_prefix, sysconfig.get_paths()["purelib"]})
_SCRATCH = os.path.realpath(tempfile.gettempdir()) + os.sep  # a streamed check's spill file: made, not read
_MADE = os.O_CREAT | os.O_WRONLY | os.O_RDWR
_checking: list[tuple[Outcome, str] | None] = [None]  # the document being checked and its project's folder


def project_of(path: str) -> str:
    """The project a document belongs to, as SECURITY.md puts it: the nearest folder above it holding .git,
    else its own folder."""
    folder = os.path.dirname(os.path.abspath(path))
    current = folder
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return folder
        current = parent


def _audit(event: str, args: tuple[object, ...]) -> None:
    watched = _checking[0]
    if watched is None:
        return
    out, project = watched
    if event in _PROCESS_EVENTS:
        out.problems.append(f"a process started while checking: {event} {str(args)[:200]}")
    elif event in ("open", "os.listdir", "os.scandir") and isinstance(args[0], str | bytes | os.PathLike):
        try:
            real = os.path.realpath(os.fsdecode(args[0]))
        except (ValueError, OSError):
            return  # a NUL in the name: it opens nothing
        made = event == "open" and isinstance(args[2], int) and args[2] & _MADE and (real + os.sep).startswith(_SCRATCH)
        if not (real + os.sep).startswith((project + os.sep, *_OWN)) and not made and not _collections(real, project):
            out.problems.append(f"{event} outside the project while checking: {real[:200]} (project {project})")


def _collections(real: str, project: str) -> bool:
    """Weval's model collections (`models/*.json`, and that folder's listing) beside the `blueprints/`
    folder a blueprint outside any repository is in: Weval's configs layout, which SECURITY.md counts as
    the blueprint's project (weval/models.find_models_dir goes no higher)."""
    folder = real if real.endswith(os.sep + "models") else os.path.dirname(real)
    root = os.path.dirname(folder)
    return (os.path.basename(folder) == "models" and (real == folder or real.endswith(".json"))
            and (project + os.sep).startswith(os.path.join(root, "blueprints") + os.sep))


_hooked = [False]


def _watching(out: Outcome, path: str) -> None:
    if not _hooked[0]:
        sys.addaudithook(_audit)
        _hooked[0] = True
    _checking[0] = (out, os.path.realpath(project_of(path)))


def check(path: str, text: str, rng: random.Random, *, kind: FileKind | None = None, at: int = 6,
          every_way: bool = False) -> Outcome:
    """Analyse `text` and use every editor feature on it; the problems found, and how long it took.
    `every_way`: also analyse it as `check` does (streamed) and as the editor does (its item cache), which
    must say exactly the same (they read a list item by item, source.py and item_bounds.py)."""
    out = Outcome(path, text)
    _watching(out, path)
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
    finally:
        _checking[0] = None
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
        diagnostic_json(f, index, "file:///x")  # the server's conversion, both encodings
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
    for hint in inlay_hints(analysis):  # issue 31's features: positions inside the text, no crash
        need(f"inlay hint {hint.label!r}", Span(hint.line, hint.col, hint.line, hint.col))
    for token in semantic_tokens(analysis):
        need(f"semantic token {token.type}", Span(token.line, token.col, token.line, token.col + token.length))
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
        signature_help(analysis, line, col)
        prepared = prepare_rename(analysis, line, col)
        if isinstance(prepared, Span):
            need(f"prepareRename at {line}:{col}", prepared)
        renamed = rename(analysis, line, col, "renamed-by-fuzz")
        for part in renamed if isinstance(renamed, list) else ():
            assert isinstance(part, FileEdits)
            for e in part.edits if part.path is None else ():
                need(f"rename at {line}:{col}", e.span)
        for o in highlights(analysis, line, col):
            need(f"highlight at {line}:{col}", o.span)
        end_line = min(len(lines) - 1, line + rng.randint(0, 3))
        span = Span(line, col, end_line, len(lines[end_line])) if end_line > line else Span(line, col, line, col)
        for fix in refactorings(analysis, span):
            for e in fix.edits:
                need(f"refactoring {fix.title!r}", e.span)
