"""The boundary between engine data and LSP: positions and ranges (`LineIndex`), URIs, findings as
diagnostics, edits as WorkspaceEdits, answers as JSON. lsprotocol is loaded only to build one of its
objects (`position`, `range`): a worker's first check does without it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import from_fs_path, to_fs_path

from evalspec.findings import Edit, Finding, Severity, Span, Tag
from evalspec.ide import line_index
from evalspec.ide.line_index import UTF8 as UTF8
from evalspec.ide.line_index import UTF16 as UTF16
from evalspec.ide.line_index import UTF32 as UTF32

if TYPE_CHECKING:
    from lsprotocol import types as lsp


class LineIndex(line_index.LineIndex):
    """The engine's index of a text's positions in the client's units (evalspec/ide/line_index.py), and
    lsprotocol's objects built from it."""

    __slots__ = ()

    def position(self, line: int, col: int) -> lsp.Position:
        from lsprotocol.types import Position

        line, character = self.client_point(line, col)
        return Position(line=line, character=character)

    def range(self, span: Span) -> lsp.Range:
        from lsprotocol.types import Range

        return Range(start=self.position(span.start_line, span.start_col),
                     end=self.position(span.end_line, span.end_col))


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

# lsp.DiagnosticSeverity and lsp.DiagnosticTag
_SEVERITY = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3, Severity.HINT: 4}
_TAG = {Tag.UNNECESSARY: 1, Tag.DEPRECATED: 2}
SOURCE = "evalspec"


def diagnostic_json(finding: Finding, index: LineIndex, uri: str) -> dict[str, Any]:
    """One finding as an LSP diagnostic (JSON data) in `uri`, the file the finding belongs to, indexed
    by `index`."""
    out: dict[str, Any] = {
        "range": index.range_json(finding.span),
        "message": finding.message,
        "severity": _SEVERITY.get(finding.severity, 1),
        "code": finding.code,
        "source": SOURCE,
    }
    from evalspec.finding_docs import doc_url  # (in the worker: the LSP process never loads the registry)

    url = (finding.extra.get("url") if finding.extra else None) or doc_url(finding.code)
    if isinstance(url, str):
        out["codeDescription"] = {"href": url}
    if finding.related:
        out["relatedInformation"] = [{"location": {"uri": uri, "range": index.range_json(r.span)},
                                      "message": r.message} for r in finding.related]
    tags = [_TAG[t] for t in finding.tags if t in _TAG]
    if tags:
        out["tags"] = tags
    return out


# --- edits ------------------------------------------------------------------------------------------

def workspace_edit_json(files: Iterable[tuple[str, int | None, LineIndex, Iterable[Edit]]],
                        document_changes: bool) -> dict[str, Any]:
    """Edits to documents, each (uri, version, its line index, its edits), as a WorkspaceEdit (JSON);
    versioned `documentChanges` when the client takes them, so an edit computed for an older text is
    refused rather than applied at the wrong place."""
    changes = [(uri, version, [{"range": index.range_json(e.span), "newText": e.new_text} for e in edits])
               for uri, version, index, edits in files]
    if document_changes:
        return {"documentChanges": [{"textDocument": {"uri": uri, "version": version}, "edits": edits}
                                    for uri, version, edits in changes]}
    return {"changes": {uri: edits for uri, _, edits in changes}}


# --- answers ----------------------------------------------------------------------------------------

def as_json(value: Any) -> bytes:
    """An answer as JSON: plain data, or lsprotocol objects (unstructured as pygls would)."""
    from evalspec import jsonio

    if (isinstance(value, list) and value and not isinstance(value[0], dict)) or not isinstance(value, (dict, list, str, int, float, type(None))):
        value = converter().unstructure(value)
    return jsonio.dumps_bytes(value)


@functools.cache
def converter() -> Any:
    """pygls's converter (lsprotocol objects <-> JSON data)."""
    from pygls.protocol import default_converter

    return default_converter()
