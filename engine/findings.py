"""Findings: what validation reports, as plain data with source spans and ready-made repairs.

The server turns these into LSP diagnostics and code actions; the CLI prints them. Nothing here
knows about either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from typing import NamedTuple


class Span(NamedTuple):
    """A range in the source: 0-based lines, 0-based columns counted in Unicode code points.

    A NamedTuple because a large file has hundreds of thousands of them: creating one costs a
    third of a frozen dataclass, and they compare and hash as plain tuples.
    """

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        if (line, col) < (self.start_line, self.start_col):
            return False
        return (line, col) <= (self.end_line, self.end_col)

    @staticmethod
    def point(line: int, col: int) -> Span:
        return Span(line, col, line, col)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"


class Tag(StrEnum):
    """Extra meaning an editor can render (strike-through, fading)."""

    DEPRECATED = "deprecated"
    UNNECESSARY = "unnecessary"


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text in `span` with `new_text` (an insertion when the span is empty)."""

    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A repair the user can apply as is: a title and the minimal text edits."""

    title: str
    edits: tuple[Edit, ...]
    preferred: bool = True


@dataclass(frozen=True, slots=True)
class Related:
    """Another place that matters for a finding (the first of two duplicate ids, say)."""

    span: Span
    message: str


@dataclass(slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    span: Span
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    tags: tuple[Tag, ...] = ()
    # The file the finding belongs to when it is not the analysed one (an external tests file).
    path: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


class Findings(list[Finding]):
    """A list of findings with short constructors, so rules read as sentences."""

    def error(self, code: str, span: Span, message: str, **kw: object) -> Finding:
        return self._add(code, Severity.ERROR, span, message, kw)

    def warning(self, code: str, span: Span, message: str, **kw: object) -> Finding:
        return self._add(code, Severity.WARNING, span, message, kw)

    def info(self, code: str, span: Span, message: str, **kw: object) -> Finding:
        return self._add(code, Severity.INFO, span, message, kw)

    def hint(self, code: str, span: Span, message: str, **kw: object) -> Finding:
        return self._add(code, Severity.HINT, span, message, kw)

    def _add(self, code: str, severity: Severity, span: Span, message: str, kw: dict[str, object]) -> Finding:
        if not kw:  # most findings: no fixes, related places or tags (a big file makes a million)
            finding = Finding(code, severity, message, span)
            self.append(finding)
            return finding
        fixes = kw.pop("fixes", ())
        fix = kw.pop("fix", None)
        if fix is not None:
            fixes = (fix, *fixes)  # type: ignore[misc]
        finding = Finding(code, severity, message, span, fixes=tuple(fixes), **kw)  # type: ignore[arg-type]
        self.append(finding)
        return finding


def replace(title: str, span: Span, new_text: str) -> Fix:
    """The common one-edit fix."""
    return Fix(title, (Edit(span, new_text),))


_path_of = attrgetter("path")
_code_of = attrgetter("code")


def in_text_order(findings: list[Finding]) -> None:
    """Sort `findings` in place by (path, line, column, code), findings about the analysed file first."""
    if any(map(_path_of, findings)):
        findings.sort(key=lambda f: (f.path or "", f.span.start_line, f.span.start_col, f.code))
    else:  # the same order (a 4 MB file can have millions of findings): by code, then (stable) by place, as one
        # int (a tuple key per finding, compared item by item, cost half as much again)
        findings.sort(key=_code_of)
        findings.sort(key=_place_key)


def _place_key(f: Finding) -> int:
    """(line, column) of a finding's start as one int, in the same order (a column is below 2**31)."""
    span = f.span
    return (span[0] << 32) + span[1]
