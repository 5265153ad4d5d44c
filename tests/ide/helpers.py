"""Eval texts with a cursor marker (‸), analysed as an editor would hold them, and edits applied."""

from __future__ import annotations

import textwrap
from pathlib import Path

from evalspec.analysis import Analysis, analyze
from evalspec.detect import FileKind
from evalspec.findings import Edit

CURSOR = "‸"
WEVAL_PATH = Path("/nonexistent/blueprints/example.yml")
AGENTV_PATH = Path("/nonexistent/evals/example.eval.yaml")


def at(text: str) -> tuple[str, int, int]:
    """The text without its cursor marker, and the marker's (line, column)."""
    text = textwrap.dedent(text).lstrip("\n")
    for i, line in enumerate(text.split("\n")):
        if CURSOR in line:
            return text.replace(CURSOR, "", 1), i, line.index(CURSOR)
    raise AssertionError("no cursor marker (‸) in the text")


def load(text: str, fmt: str, path: Path | None = None) -> Analysis:
    """Analyse as the language server does: the format stays known while the text is broken."""
    kind = FileKind.WEVAL if fmt == "weval" else FileKind.AGENTV
    default = WEVAL_PATH if fmt == "weval" else AGENTV_PATH
    return analyze(text, path or default, kind=kind)


def cursor(text: str, fmt: str, path: Path | None = None) -> tuple[Analysis, int, int]:
    clean, line, col = at(text)
    return load(clean, fmt, path), line, col


def apply(text: str, edits: tuple[Edit, ...] | list[Edit]) -> str:
    """Apply LSP-style edits (all against the original text)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int, col: int) -> int:
        return starts[line] + col

    spans = sorted(edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True)
    for e in spans:
        a, b = offset(e.span.start_line, e.span.start_col), offset(e.span.end_line, e.span.end_col)
        text = text[:a] + e.new_text + text[b:]
    return text
