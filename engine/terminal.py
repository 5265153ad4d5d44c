"""Findings for a person at a terminal: the source line with a caret under the range, in colour (like
ruff's and rustc's), and counts with thousands separators.

Colour follows the usual conventions: `NO_COLOR` (any value) turns it off, `FORCE_COLOR` turns it on,
otherwise only a terminal gets it (and not `TERM=dumb`). The one-line form `path:line:col:
severity[code]: message` stays what pipes, scripts and editors' problem matchers read.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from .findings import Finding
from .terminal_text import shown

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[1;36m", "hint": "\x1b[1;36m"}
BLUE = "\x1b[1;34m"
TAB = 4


def use_color(stream: TextIO, env: Mapping[str, str] | None = None, choice: str = "auto") -> bool:
    if choice in ("always", "never"):
        return choice == "always"
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return is_terminal(stream) and env.get("TERM") != "dumb"


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def source_lines(text: str, path: Path | None, finding_path: str | None) -> list[str] | None:
    """The lines a finding points into: the analysed text, or the other file it names (a tests file)."""
    if finding_path and (path is None or Path(finding_path) != path):
        try:
            return Path(finding_path).read_text(encoding="utf-8", errors="replace").split("\n")
        except OSError:
            return None
    return text.split("\n")


def count(n: int, what: str) -> str:
    """`1,234 error(s)`."""
    return f"{n:,} {what}"


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 0 if unicodedata.combining(ch) else 1
               for ch in text)


def _expand(line: str) -> str:
    return line.replace("\t", " " * TAB)


class Painter:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, style: str) -> str:
        return f"{style}{text}{RESET}" if self.color and text else text


def excerpt(f: Finding, path: str, lines: list[str] | None, *, color: bool) -> str:
    """The finding as a block:

        error[unknown-key]: Unknown key 'shuld'; did you mean 'should'?
          --> blueprints/x.yml:12:3
           |
        12 |   shuld: [x]
           |   ^^^^^
           = help: Replace with 'should'
    """
    paint = Painter(color)
    sev = str(f.severity)
    line_no, col = f.span.start_line + 1, f.span.start_col + 1
    # What comes from the file (the message's quotes, the path, the line) shows its control characters
    # as escapes (terminal_text.py); the caret is measured on the line as shown.
    out = [paint(f"{sev}[{f.code}]", COLORS.get(sev, BOLD)) + paint(f": {shown(f.message)}", BOLD)]
    gutter = " " * len(str(line_no))
    out.append(f"{gutter}{paint('-->', BLUE)} {shown(path)}:{line_no}:{col}")
    source = lines[f.span.start_line] if lines is not None and 0 <= f.span.start_line < len(lines) else None
    if source is not None:
        bar = paint("|", BLUE)
        start = min(f.span.start_col, len(source))
        end = f.span.end_col if f.span.end_line == f.span.start_line else len(source.rstrip())
        end = max(start, min(end, len(source)))
        lead = _width(shown(_expand(source[:start])))
        marked = max(1, _width(shown(_expand(source[start:end]))))
        out.append(f"{gutter} {bar}")
        out.append(f"{paint(str(line_no), BLUE)} {bar} {shown(_expand(source.rstrip()))}")
        more = f" (to line {f.span.end_line + 1})" if f.span.end_line > f.span.start_line else ""
        out.append(f"{gutter} {bar} {' ' * lead}{paint('^' * marked, COLORS.get(sev, BOLD))}{paint(more, DIM)}")
    for fix in f.fixes[:1]:
        out.append(f"{gutter} {paint('=', BLUE)} {paint('help', BOLD)}: {shown(fix.title)}")
    for rel in f.related[:3]:
        out.append(f"{gutter} {paint('=', BLUE)} {paint('note', BOLD)}: line {rel.span.start_line + 1}: "
                   f"{shown(rel.message)}")
    return "\n".join(out)


def show_findings(analysis: Any, findings: list[Finding], stream: TextIO) -> None:
    """Findings as `evalspec check` shows them: excerpts with carets on a terminal (coloured unless
    NO_COLOR), one line each otherwise."""
    from .finding_format import display_path, format_finding

    if not is_terminal(stream):
        for f in findings:
            print(format_finding(analysis, f), file=stream)
        return
    color = use_color(stream)
    for f in findings:
        print(excerpt(f, display_path(analysis, f), source_lines(analysis.text, analysis.path, f.path), color=color)
              + "\n", file=stream)
