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

from evalspec.analysis import Analysis, analyze
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


MUTATIONS: tuple[Mutation, ...] = (bare_cr, crlf, yaml11_break, surrogate, bom, nul, tabs, aliases, merge, deep,
                                   long_line, invalid_utf8, yaml_noise, cut, shuffle_lines, unicode_noise,
                                   doc_markers)


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


def check(path: str, text: str, rng: random.Random, *, kind: FileKind | None = None, at: int = 6) -> Outcome:
    """Analyse `text` and use every editor feature on it; the problems found, and how long it took."""
    out = Outcome(path, text)
    started, cpu = time.perf_counter(), time.process_time()
    try:
        analysis = analyze(text, path, kind=kind)
        _ranges(out, analysis, rng, at)
    except Exception:
        out.problems.append("exception: " + "".join(traceback.format_exc(limit=-4)))
    out.seconds = time.perf_counter() - started
    out.cpu = time.process_time() - cpu
    return out


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
