"""textDocument/codeAction: quick fixes carried by findings, the engine's refactorings, and runs.

Runs as code actions, for clients that show no lenses (and for the keyboard): with the cursor in a
prompt or test, "Run prompt <id>", "Run all N prompts", "Plan" and, when the file names several
models, "Run prompt <id> with <model>"; "Cancel the run" while one goes on. Each runs the very command
its lens runs (features/run.py). They have no kind, so menus that list every action (Neovim's
`vim.lsp.buf.code_action()`, VS Code's Ctrl+.) show them and requests for one kind do not.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from cattrs import Converter
from lsprotocol import types as lsp
from pygls.protocol import default_converter

from evalspec.detect import FileKind
from evalspec.findings import Finding
from evalspec.ide.refactor import refactorings
from evalspec.run.items import entries

from .. import convert
from ..protocol import JsonReady
from ..server import EvalspecServer, Snapshot
from .run import CANCEL, PLAN, RUN

KINDS = [lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Refactor]


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """`context.only` filters by kind prefix: asking for "refactor" includes "refactor.rewrite"."""
    return not only or any(kind == o or kind.startswith(f"{o}.") for o in only)


def register(server: EvalspecServer) -> None:
    options = lsp.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=False)

    @server.request(lsp.TEXT_DOCUMENT_CODE_ACTION, options, empty=list)
    async def code_action(server: EvalspecServer, params: lsp.CodeActionParams) -> Any:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return []
        only = params.context.only
        # Quick fixes are JSON data built on a worker thread: with a whole 4 MB file selected a client
        # sends every diagnostic (12,000), and as many actions as lsprotocol objects cost seconds on the loop.
        fixes: list[dict[str, Any]] = []
        if wanted(lsp.CodeActionKind.QuickFix, only) and params.context.diagnostics:
            fixes = await server.in_thread(quick_fixes, server, snap, params.context.diagnostics)
        actions: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.Refactor, only):
            span = snap.index.span(params.range)
            for fix in refactorings(snap.analysis, span):
                actions.append(convert.code_action(
                    fix, lsp.CodeActionKind.Refactor, snap.index, snap.uri, snap.version,
                    document_changes=server.client.document_changes,
                    preferred_support=server.client.preferred_code_actions))
        if not only:
            actions += run_actions(server, snap, params.range.start.line)
        return JsonReady.of(fixes + [_converter().unstructure(a) for a in actions])


@functools.cache
def _converter() -> Converter:
    """pygls's converter, for the few actions still built as lsprotocol objects."""
    return default_converter()


MAX_MODEL_ACTIONS = 12  # "Run … with <model>" for at most this many of the file's models


def run_actions(server: EvalspecServer, snap: Snapshot, cursor_line: int) -> list[lsp.CodeAction]:
    analysis = snap.analysis
    listed = list(entries(analysis))
    if not listed or analysis.errors:
        return []  # the lens says why a file with errors is not run; an action would only refuse

    def action(title: str, command: str, **args: str) -> lsp.CodeAction:
        return lsp.CodeAction(title=title, command=lsp.Command(title=title, command=command,
                                                               arguments=[{"uri": snap.uri, **args}]))

    state = server.runs.get(snap.uri)
    if state is not None and state.running:
        return [action("Cancel the run", CANCEL)]
    line, _ = snap.index.point(lsp.Position(line=cursor_line, character=0))
    here = next(((kind, item_id) for kind, item_id, span in listed if span.start_line <= line <= span.end_line),
                None)
    noun = "test" if analysis.kind is FileKind.AGENTV else "prompt"
    out: list[lsp.CodeAction] = []
    if here is not None:
        out.append(action(f"Run {noun} {here[1]}", RUN, item=here[1]))
    n = len(listed)
    out.append(action(f"Run all {n} {noun}{'s' if n != 1 else ''}", RUN))
    out.append(action("Plan", PLAN))
    if here is not None:
        for model in _file_models(analysis)[:MAX_MODEL_ACTIONS]:
            out.append(action(f"Run {noun} {here[1]} with {model}", RUN, item=here[1], model=model))
    return out


def _file_models(analysis: object) -> list[str]:
    """The models (Weval) or targets (AgentV) the file names, when it names several."""
    models: list[str] = []
    blueprint = getattr(analysis, "blueprint", None)
    suite = getattr(analysis, "suite", None)
    if blueprint is not None:
        models = list(blueprint.models_resolved or [m.id for m in blueprint.models])
    elif suite is not None:
        models = list(suite.targets)
    models = list(dict.fromkeys(models))
    return models if len(models) > 1 else []


def quick_fixes(server: EvalspecServer, snap: Snapshot, diagnostics: Sequence[lsp.Diagnostic]) -> list[dict[str, Any]]:
    """The fixes of the findings behind the diagnostics the client sent, each linked to its diagnostic
    (CodeActions as JSON data; on a worker thread)."""
    ours = [d for d in diagnostics if d.source in (None, convert.SOURCE)]
    if not ours:
        return []
    codes = {d.code for d in ours}
    # Findings placed once per request, looked up by code and range: a client may send every
    # diagnostic of the selection (thousands, with a whole 4 MB file selected).
    by_code: dict[object, list[tuple[Finding, Place]]] = {}
    exact: dict[tuple[object, Place], Finding] = {}
    for f in snap.analysis.findings:
        if f.fixes and f.code in codes and _in_this_file(f, snap):
            rng = snap.index.range_json(f.span)
            place = (rng["start"]["line"], rng["start"]["character"], rng["end"]["line"], rng["end"]["character"])
            by_code.setdefault(f.code, []).append((f, place))
            exact.setdefault((f.code, place), f)
    document_changes = server.client.document_changes
    preferred = server.client.preferred_code_actions
    actions: list[dict[str, Any]] = []
    for diag in ours:
        finding = exact.get((diag.code, _place(diag.range))) or _overlapping(diag, by_code.get(diag.code, []))
        if finding is None:
            continue
        sent = _as_sent(diag)
        for fix in finding.fixes:
            action: dict[str, Any] = {
                "title": fix.title, "kind": lsp.CodeActionKind.QuickFix.value, "diagnostics": [sent],
                "edit": convert.workspace_edit_json(fix.edits, snap.index, snap.uri, snap.version, document_changes)}
            if preferred:
                action["isPreferred"] = fix.preferred
            actions.append(action)
    return actions


def _as_sent(diag: lsp.Diagnostic) -> dict[str, Any]:
    """The client's diagnostic as JSON, to link the action to it (by hand for what ours carry: cattrs
    for each of 12,000 would cost a second)."""
    if diag.related_information or diag.data is not None or diag.code_description is not None or diag.tags:
        return dict(_converter().unstructure(diag))
    r = diag.range
    out: dict[str, Any] = {"range": {"start": {"line": r.start.line, "character": r.start.character},
                                     "end": {"line": r.end.line, "character": r.end.character}},
                           "message": diag.message}
    if diag.severity is not None:
        out["severity"] = int(diag.severity)
    if diag.code is not None:
        out["code"] = diag.code
    if diag.source is not None:
        out["source"] = diag.source
    return out


Place = tuple[int, int, int, int]  # a range in client units: start line, start character, end line, end character


def _place(rng: lsp.Range) -> Place:
    return rng.start.line, rng.start.character, rng.end.line, rng.end.character


def _overlapping(diag: lsp.Diagnostic, placed: list[tuple[Finding, Place]]) -> Finding | None:
    """Failing an exact match (a client that moved the range as the user typed), the first finding with
    the diagnostic's code whose range overlaps."""
    sl, sc, el, ec = _place(diag.range)
    for finding, (fsl, fsc, fel, fec) in placed:
        if (fsl, fsc) <= (el, ec) and (sl, sc) <= (fel, fec):
            return finding
    return None


def _in_this_file(finding: Finding, snap: Snapshot) -> bool:
    path = convert.finding_path(finding, snap.analysis.path)
    return path is None or path == snap.analysis.path
