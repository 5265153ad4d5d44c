"""textDocument/codeAction: quick fixes carried by findings, the engine's refactorings, and runs.

Runs as code actions, for clients that show no lenses: on a prompt's or test's lines
(engine/ide/runs.py's run_line_item) "Run prompt <id>", "Run all N prompts", "Plan", and with several
models "Run prompt <id> with <model>"; "Cancel the run" while one goes on. They have no kind, so
menus that list every action show them and requests for one kind do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from .. import convert
from . import answers
from .run_jobs import CANCEL, PLAN, RUN

if TYPE_CHECKING:
    from evalspec.findings import Finding, Fix

    from ..worker import Snapshot

KINDS = [lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Refactor]
MAX_MODEL_ACTIONS = 12  # "Run … with <model>" for at most this many of the file's models
Place = tuple[int, int, int, int]  # a range in client units: start line, start character, end line, end character


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """`context.only` filters by kind prefix: asking for "refactor" includes "refactor.rewrite"."""
    return not only or any(kind == o or kind.startswith(f"{o}.") for o in only)


@answers(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=False),
         list)
def code_action(snap: Snapshot, params: lsp.CodeActionParams) -> bytes | None:
    from evalspec import jsonio
    from evalspec.ide.refactor import refactorings

    only = params.context.only
    actions = []
    if wanted(lsp.CodeActionKind.QuickFix, only) and params.context.diagnostics:
        actions += quick_fixes(snap, params.context.diagnostics)
    if wanted(lsp.CodeActionKind.Refactor, only):
        actions += [fix_json(fix, lsp.CodeActionKind.Refactor.value, snap)
                    for fix in refactorings(snap.analysis, snap.index.span(params.range))]
    if not only:
        actions += run_actions(snap, params.range.start.line)
    return jsonio.dumps_bytes(actions)


JOBS = {"code_action": code_action}


def fix_json(fix: Fix, kind: str, snap: Snapshot, diagnostic: dict[str, Any] | None = None) -> dict[str, Any]:
    """A fix as a CodeAction (JSON data)."""
    action: dict[str, Any] = {"title": fix.title, "kind": kind}
    if diagnostic is not None:
        action["diagnostics"] = [diagnostic]
    if snap.client.preferred_code_actions:
        action["isPreferred"] = fix.preferred
    action["edit"] = convert.workspace_edit_json([(snap.uri, snap.version, snap.index, fix.edits)],
                                                 snap.client.document_changes)
    return action


def run_actions(snap: Snapshot, cursor_line: int) -> list[dict[str, Any]]:
    from evalspec.ide.runs import file_models, run_line_item
    from evalspec.run.plan.items import entries

    analysis = snap.analysis
    listed = analysis.memoised("lsp.entries", lambda a: list(entries(a)))
    if not listed or analysis.error_count:
        return []  # the lens says why a file with errors is not run; an action would only refuse

    def action(title: str, command: str, **args: str) -> dict[str, Any]:
        return {"title": title, "command": {"title": title, "command": command,
                                            "arguments": [{"uri": snap.uri, **args}]}}

    if snap.runs.running:
        return [action("Cancel the run", CANCEL)]
    line, _ = snap.index.point(lsp.Position(line=cursor_line, character=0))
    item = run_line_item(analysis.parsed.lines, listed, line)  # prompt and test lines only
    if item is None:
        return []
    noun = "test" if analysis.suite is not None else "prompt"
    n = len(listed)
    models = file_models(analysis)
    return [action(f"Run {noun} {item}", RUN, item=item),
            action(f"Run all {n} {noun}{'s' if n != 1 else ''}", RUN), action("Plan", PLAN),
            *(action(f"Run {noun} {item} with {model}", RUN, item=item, model=model)
              for model in (models[:MAX_MODEL_ACTIONS] if len(models) > 1 else []))]


def quick_fixes(snap: Snapshot, diagnostics: Sequence[lsp.Diagnostic | dict[str, Any]]) -> list[dict[str, Any]]:
    """The fixes of the findings behind the diagnostics the client sent, each linked to its diagnostic
    (CodeActions as JSON data): the finding with the diagnostic's code and range, else the first with
    its code whose range overlaps (a client that moved the range as the user typed)."""
    sent = [d if isinstance(d, dict) else dict(convert.converter().unstructure(d)) for d in diagnostics]
    ours = [d for d in sent if d.get("source") in (None, convert.SOURCE)]
    if not ours:
        return []
    codes = {_code(d) for d in ours}
    # Findings placed once per request, looked up by code and range: a client may send every
    # diagnostic of the selection (thousands, with a whole 4 MB file selected).
    by_code: dict[object, list[tuple[Finding, Place]]] = {}
    exact: dict[tuple[object, Place], Finding] = {}
    for f in snap.analysis.findings:
        if f.fixes and f.code in codes and convert.finding_path(f, snap.analysis.path) in (None, snap.analysis.path):
            place = _place(snap.index.range_json(f.span))
            by_code.setdefault(f.code, []).append((f, place))
            exact.setdefault((f.code, place), f)
    actions: list[dict[str, Any]] = []
    for diag in ours:
        code, place = _code(diag), _place(diag["range"])
        finding = exact.get((code, place)) or _overlapping(place, by_code.get(code, []))
        for fix in finding.fixes if finding is not None else ():
            actions.append(fix_json(fix, lsp.CodeActionKind.QuickFix.value, snap, diag))
    return actions


def _code(diag: dict[str, Any]) -> object:
    code = diag.get("code")
    return code if isinstance(code, (int, str)) else None


def _place(rng: dict[str, Any]) -> Place:
    return rng["start"]["line"], rng["start"]["character"], rng["end"]["line"], rng["end"]["character"]


def _overlapping(place: Place, placed: list[tuple[Finding, Place]]) -> Finding | None:
    sl, sc, el, ec = place
    return next((f for f, (fsl, fsc, fel, fec) in placed if (fsl, fsc) <= (el, ec) and (sl, sc) <= (fel, fec)), None)
