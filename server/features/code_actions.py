"""textDocument/codeAction: quick fixes carried by findings, and the engine's refactorings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lsprotocol import types as lsp

from evalspec.findings import Finding
from evalspec.ide.refactor import refactorings

from .. import convert
from ..server import EvalspecServer, Snapshot

KINDS = [lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Refactor]


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """`context.only` filters by kind prefix: asking for "refactor" includes "refactor.rewrite"."""
    return not only or any(kind == o or kind.startswith(f"{o}.") for o in only)


def register(server: EvalspecServer) -> None:
    options = lsp.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=False)

    @server.request(lsp.TEXT_DOCUMENT_CODE_ACTION, options, empty=list)
    async def code_action(server: EvalspecServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return []
        only = params.context.only
        actions: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix, only):
            actions += quick_fixes(server, snap, params.context.diagnostics)
        if wanted(lsp.CodeActionKind.Refactor, only):
            span = snap.index.span(params.range)
            for fix in refactorings(snap.analysis, span):
                actions.append(convert.code_action(
                    fix, lsp.CodeActionKind.Refactor, snap.index, snap.uri, snap.version,
                    document_changes=server.client.document_changes,
                    preferred_support=server.client.preferred_code_actions))
        return actions


def quick_fixes(server: EvalspecServer, snap: Snapshot,
                diagnostics: Iterable[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """The fixes of the findings behind the diagnostics the client sent, each linked to its diagnostic."""
    own = [f for f in snap.analysis.findings if f.fixes and _in_this_file(f, snap)]
    actions: list[lsp.CodeAction] = []
    for diag in diagnostics:
        if diag.source not in (None, convert.SOURCE):
            continue
        finding = _finding_for(diag, own, snap)
        if finding is None:
            continue
        for fix in finding.fixes:
            actions.append(convert.code_action(
                fix, lsp.CodeActionKind.QuickFix, snap.index, snap.uri, snap.version,
                document_changes=server.client.document_changes, diagnostics=[diag],
                preferred_support=server.client.preferred_code_actions))
    return actions


def _in_this_file(finding: Finding, snap: Snapshot) -> bool:
    path = convert.finding_path(finding, snap.analysis.path)
    return path is None or path == snap.analysis.path


def _finding_for(diag: lsp.Diagnostic, findings: list[Finding], snap: Snapshot) -> Finding | None:
    """The finding with the diagnostic's code on exactly its range; failing that (a client that moved
    the range as the user typed), the one with that code whose range overlaps."""
    same_code = [f for f in findings if f.code == diag.code]
    overlapping = None
    for finding in same_code:
        rng = snap.index.range(finding.span)
        if rng == diag.range:
            return finding
        if overlapping is None and _overlaps(rng, diag.range):
            overlapping = finding
    return overlapping


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return p.line, p.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)
