"""The boundary between engine data and LSP types: positions, ranges, diagnostics and edits.

The engine counts columns in Unicode code points; LSP counts them in the position encoding agreed at
`initialize` (UTF-16 unless the client offers another). This module is the only place that knows the
difference, and the only place that builds lsprotocol objects out of engine objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from evalspec.findings import Edit, Finding, Fix, Severity, Span, Tag
from evalspec.yielding import yield_point

UTF8 = lsp.PositionEncodingKind.Utf8
UTF16 = lsp.PositionEncodingKind.Utf16
UTF32 = lsp.PositionEncodingKind.Utf32


class LineIndex:
    """Converts between code-point columns and client columns for one text.

    `lines` are the text split on "\\n" (what the engine's spans count); a trailing "\\r" stays on
    its line and is never part of a column the engine reports.
    """

    __slots__ = ("encoding", "lines")

    def __init__(self, lines: Sequence[str], encoding: str = UTF16) -> None:
        self.lines = lines
        self.encoding = encoding

    @classmethod
    def of_text(cls, text: str, encoding: str = UTF16) -> LineIndex:
        return cls(text.split("\n"), encoding)

    def _line(self, line: int) -> str | None:
        return self.lines[line] if 0 <= line < len(self.lines) else None

    def client_col(self, line: int, col: int) -> int:
        """Code points → client units. Lines the index does not hold (a file it could not read)
        pass through unchanged rather than collapsing to column 0."""
        text = self._line(line)
        if text is None:
            return max(0, col)
        col = max(0, min(col, len(text)))
        if self.encoding == UTF32 or text.isascii():
            return col  # the common case: every unit is one code point
        prefix = text[:col]
        if self.encoding == UTF8:
            return len(prefix.encode("utf-8", "surrogatepass"))
        return len(prefix.encode("utf-16-le", "surrogatepass")) // 2

    def engine_col(self, line: int, units: int) -> int:
        """Client units → code points. A position inside a character snaps to its start."""
        text = self._line(line)
        units = max(0, units)
        if text is None:
            return units
        if self.encoding == UTF32 or text.isascii():
            return min(units, len(text))
        utf8 = self.encoding == UTF8
        seen = 0
        for i, ch in enumerate(text):
            width = len(ch.encode("utf-8", "surrogatepass")) if utf8 else (2 if ord(ch) > 0xFFFF else 1)
            if seen + width > units:
                return i
            seen += width
        return len(text)

    def position(self, line: int, col: int) -> lsp.Position:
        return lsp.Position(line=max(0, line), character=self.client_col(line, col))

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(start=self.position(span.start_line, span.start_col),
                         end=self.position(span.end_line, span.end_col))

    def range_json(self, span: Span) -> dict[str, dict[str, int]]:
        """`range` as JSON data (for answers encoded without lsprotocol objects)."""
        yield_point()  # every large answer builds one per item: its builder gives way to requests here
        sl, sc, el, ec = span
        return {"start": {"line": max(0, sl), "character": self.client_col(sl, sc)},
                "end": {"line": max(0, el), "character": self.client_col(el, ec)}}

    def point(self, position: lsp.Position) -> tuple[int, int]:
        """An LSP position as the engine's (line, code-point column)."""
        return position.line, self.engine_col(position.line, position.character)

    def span(self, rng: lsp.Range) -> Span:
        sl, sc = self.point(rng.start)
        el, ec = self.point(rng.end)
        return Span(sl, sc, el, ec)


# --- URIs -------------------------------------------------------------------------------------------

def uri_of(path: str | Path) -> str:
    return from_fs_path(str(path)) or Path(path).as_uri()


def path_of(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


def finding_path(finding: Finding, analysed: Path | None) -> Path | None:
    """The file a finding belongs to: `finding.path` (relative to the analysed file) or the file itself."""
    if finding.path is None:
        return None
    p = Path(finding.path)
    if not p.is_absolute() and analysed is not None:
        p = analysed.parent / p
    return p


# --- diagnostics ------------------------------------------------------------------------------------

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}
_TAG = {Tag.DEPRECATED: lsp.DiagnosticTag.Deprecated, Tag.UNNECESSARY: lsp.DiagnosticTag.Unnecessary}
SOURCE = "evalspec"


def diagnostic(finding: Finding, index: LineIndex, uri: str) -> lsp.Diagnostic:
    """One finding as a diagnostic in `uri` (the file the finding belongs to, indexed by `index`)."""
    related = [lsp.DiagnosticRelatedInformation(location=lsp.Location(uri=uri, range=index.range(r.span)),
                                                message=r.message) for r in finding.related]
    tags = [_TAG[t] for t in finding.tags if t in _TAG]
    url = finding.extra.get("url") if finding.extra else None
    return lsp.Diagnostic(
        range=index.range(finding.span),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Error),
        code=finding.code,
        code_description=lsp.CodeDescription(href=url) if isinstance(url, str) else None,
        source=SOURCE,
        related_information=related or None,
        tags=tags or None,
    )


def diagnostic_json(finding: Finding, index: LineIndex, uri: str) -> dict[str, Any]:
    """`diagnostic` as JSON data (what pygls would send for it): diagnostics of a large file are built
    on the analysis thread and sent without lsprotocol objects."""
    out: dict[str, Any] = {
        "range": index.range_json(finding.span),
        "message": finding.message,
        "severity": int(_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Error)),
        "code": finding.code,
        "source": SOURCE,
    }
    url = finding.extra.get("url") if finding.extra else None
    if isinstance(url, str):
        out["codeDescription"] = {"href": url}
    if finding.related:
        out["relatedInformation"] = [{"location": {"uri": uri, "range": index.range_json(r.span)},
                                      "message": r.message} for r in finding.related]
    tags = [int(_TAG[t]) for t in finding.tags if t in _TAG]
    if tags:
        out["tags"] = tags
    return out


# --- edits ------------------------------------------------------------------------------------------

def text_edit(edit: Edit, index: LineIndex) -> lsp.TextEdit:
    return lsp.TextEdit(range=index.range(edit.span), new_text=edit.new_text)


def workspace_edit(edits: Iterable[Edit], index: LineIndex, uri: str, version: int | None,
                   document_changes: bool) -> lsp.WorkspaceEdit:
    """Edits to one document; versioned `documentChanges` when the client takes them, so an edit
    computed for an older text is refused rather than applied at the wrong place."""
    changes = [text_edit(e, index) for e in edits]
    if document_changes:
        ident = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=ident, edits=changes)])
    return lsp.WorkspaceEdit(changes={uri: changes})


def workspace_edit_json(edits: Iterable[Edit], index: LineIndex, uri: str, version: int | None,
                        document_changes: bool) -> dict[str, Any]:
    """`workspace_edit` as JSON data."""
    changes = [{"range": index.range_json(e.span), "newText": e.new_text} for e in edits]
    if document_changes:
        return {"documentChanges": [{"textDocument": {"uri": uri, "version": version}, "edits": changes}]}
    return {"changes": {uri: changes}}


def code_action(fix: Fix, kind: str, index: LineIndex, uri: str, version: int | None, *,
                document_changes: bool, diagnostics: Sequence[lsp.Diagnostic] | None = None,
                preferred_support: bool = True) -> lsp.CodeAction:
    return lsp.CodeAction(
        title=fix.title,
        kind=kind,
        diagnostics=list(diagnostics) if diagnostics else None,
        is_preferred=fix.preferred if preferred_support else None,
        edit=workspace_edit(fix.edits, index, uri, version, document_changes),
    )
