"""textDocument/signatureHelp: a point function's or assertion's arguments (engine/ide/signature.py),
built in the worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from . import answers

if TYPE_CHECKING:
    from ..worker import Snapshot

# `[` and `,` start an argument of a point function; `:` a value; a space after `- ` or a key.
TRIGGERS = ["[", ",", ":", "{", " "]


@answers(lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
         lsp.SignatureHelpOptions(trigger_characters=TRIGGERS, retrigger_characters=[",", " "]))
def signature_help(snap: Snapshot, params: lsp.SignatureHelpParams) -> bytes | None:
    from evalspec.ide.signature import signature_help as engine_signature_help

    from ..convert import as_json

    line, col = snap.index.point(params.position)
    sig = engine_signature_help(snap.analysis, line, col)
    if sig is None:
        return None
    kind = lsp.MarkupKind.Markdown if snap.client.hover_markdown else lsp.MarkupKind.PlainText
    # Parameter labels as [start, end) offsets in UTF-16 units of the label, as LSP counts them.
    parameters = [lsp.ParameterInformation(label=(_units(sig.label, start), _units(sig.label, end)),
                                           documentation=lsp.MarkupContent(kind=kind, value=p.doc))
                  for p, (start, end) in zip(sig.parameters, sig.offsets(), strict=True)]
    info = lsp.SignatureInformation(label=sig.label, documentation=lsp.MarkupContent(kind=kind, value=sig.doc),
                                    parameters=parameters, active_parameter=sig.active)
    return as_json(lsp.SignatureHelp(signatures=[info], active_signature=0, active_parameter=sig.active))


def _units(text: str, code_points: int) -> int:
    return len(text[:code_points].encode("utf-16-le")) // 2


JOBS = {"signature_help": signature_help}
