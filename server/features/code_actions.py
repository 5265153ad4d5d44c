"""textDocument/codeAction: quick fixes carried by findings, the engine's refactorings, and runs.

Runs as code actions, for clients that show no lenses (and for the keyboard): with the cursor on a
prompt's or test's first line or its id / prompt / messages / input line (engine/ide/runs.py's
run_line_item; nowhere else, so no lightbulb follows the cursor), "Run prompt <id>", "Run all N prompts", "Plan" and, when the file names several
models, "Run prompt <id> with <model>"; "Cancel the run" while one goes on. Each runs the very command
its lens runs (features/run.py). They have no kind, so menus that list every action (Neovim's
`vim.lsp.buf.code_action()`, VS Code's Ctrl+.) show them and requests for one kind do not.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from .. import convert
from . import answers
from .run_jobs import CANCEL, PLAN, RUN

if TYPE_CHECKING:
    from cattrs import Converter

    from evalspec.findings import Finding, Fix, Span

    from ..worker import Snapshot

KINDS = [lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Refactor]


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """`context.only` filters by kind prefix: asking for "refactor" includes "refactor.rewrite"."""
    return not only or any(kind == o or kind.startswith(f"{o}.") for o in only)


@answers(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=False),
         list)
def code_action(snap: Snapshot, params: lsp.CodeActionParams) -> bytes | None:
    from evalspec import jsonio
    from evalspec.ide.refactor import refactorings
    from evalspec.run.plan.items import entries

    only = params.context.only
    client = snap.client
    actions = []
    if wanted(lsp.CodeActionKind.QuickFix, only) and params.context.diagnostics:
        actions += quick_fixes(snap, params.context.diagnostics, client.document_changes, client.preferred_code_actions)
    if wanted(lsp.CodeActionKind.Refactor, only):
        actions += [fix_json(fix, lsp.CodeActionKind.Refactor.value, snap, client.document_changes,
                             client.preferred_code_actions)
                    for fix in refactorings(snap.analysis, snap.index.span(params.range))]
    if not only:
        found = snap.analysis.memoised("lsp.entries", lambda a: list(entries(a)))
        actions += run_actions(snap, found, params.range.start.line)
    return jsonio.dumps_bytes(actions)


JOBS = {"code_action": code_action}


def fix_json(fix: Fix, kind: str, snap: Snapshot, document_changes: bool, preferred: bool,
             diagnostic: dict[str, Any] | None = None) -> dict[str, Any]:
    """A fix as a CodeAction (JSON data)."""
    action: dict[str, Any] = {"title": fix.title, "kind": kind}
    if diagnostic is not None:
        action["diagnostics"] = [diagnostic]
    if preferred:
        action["isPreferred"] = fix.preferred
    action["edit"] = convert.workspace_edit_json([(snap.uri, snap.version, snap.index, fix.edits)], document_changes)
    return action


MAX_MODEL_ACTIONS = 12  # "Run … with <model>" for at most this many of the file's models


def run_actions(snap: Snapshot, listed: list[tuple[str, str, Span]],
                cursor_line: int) -> list[dict[str, Any]]:
    analysis = snap.analysis
    if not listed or analysis.error_count:
        return []  # the lens says why a file with errors is not run; an action would only refuse

    def action(title: str, command: str, **args: str) -> dict[str, Any]:
        return {"title": title, "command": {"title": title, "command": command,
                                            "arguments": [{"uri": snap.uri, **args}]}}

    if snap.runs.running:
        return [action("Cancel the run", CANCEL)]
    line, _ = snap.index.point(lsp.Position(line=cursor_line, character=0))
    from evalspec.detect import FileKind
    from evalspec.ide.runs import run_line_item

    item = run_line_item(analysis.parsed.lines, listed, line)  # prompt and test lines only
    if item is None:
        return []
    noun = "test" if analysis.kind is FileKind.AGENTV else "prompt"
    n = len(listed)
    out = [action(f"Run {noun} {item}", RUN, item=item),
           action(f"Run all {n} {noun}{'s' if n != 1 else ''}", RUN), action("Plan", PLAN)]
    for model in _file_models(analysis)[:MAX_MODEL_ACTIONS]:
        out.append(action(f"Run {noun} {item} with {model}", RUN, item=item, model=model))
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


def quick_fixes(snap: Snapshot, diagnostics: Sequence[lsp.Diagnostic | dict[str, Any]], document_changes: bool,
                preferred: bool) -> list[dict[str, Any]]:
    """The fixes of the findings behind the diagnostics the client sent, each linked to its diagnostic
    (CodeActions as JSON data)."""
    sent = [_as_sent(d) for d in diagnostics]
    ours = [d for d in sent if d.get("source") in (None, convert.SOURCE)]
    if not ours:
        return []
    codes = {_code(d) for d in ours}
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
    actions: list[dict[str, Any]] = []
    for diag in ours:
        code, place = _code(diag), _place(diag["range"])
        finding = exact.get((code, place)) or _overlapping(place, by_code.get(code, []))
        if finding is None:
            continue
        for fix in finding.fixes:
            actions.append(fix_json(fix, lsp.CodeActionKind.QuickFix.value, snap, document_changes, preferred, diag))
    return actions


def _code(diag: dict[str, Any]) -> object:
    code = diag.get("code")
    return code if isinstance(code, (int, str)) else None


@functools.cache
def _converter() -> Converter:
    """pygls's converter, for the diagnostics that come as lsprotocol objects."""
    from pygls.protocol import default_converter

    return default_converter()


def _as_sent(diag: lsp.Diagnostic | dict[str, Any]) -> dict[str, Any]:
    """The client's diagnostic as JSON, to link the action to it."""
    if isinstance(diag, dict):
        return diag
    return dict(_converter().unstructure(diag))


Place = tuple[int, int, int, int]  # a range in client units: start line, start character, end line, end character


def _place(rng: dict[str, Any]) -> Place:
    return rng["start"]["line"], rng["start"]["character"], rng["end"]["line"], rng["end"]["character"]


def _overlapping(place: Place, placed: list[tuple[Finding, Place]]) -> Finding | None:
    """Failing an exact match (a client that moved the range as the user typed), the first finding with
    the diagnostic's code whose range overlaps."""
    sl, sc, el, ec = place
    for finding, (fsl, fsc, fel, fec) in placed:
        if (fsl, fsc) <= (el, ec) and (sl, sc) <= (fel, fec):
            return finding
    return None


def _in_this_file(finding: Finding, snap: Snapshot) -> bool:
    path = convert.finding_path(finding, snap.analysis.path)
    return path is None or path == snap.analysis.path
