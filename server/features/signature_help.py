"""textDocument/signatureHelp: a point function's or assertion's arguments (engine/ide/signature.py)."""

from __future__ import annotations

from lsprotocol import types as lsp

from evalspec.ide.signature import signature_help as engine_signature_help

from ..server import EvalspecServer

# `[` and `,` start an argument of a point function; `:` a value; a space after `- ` or a key.
TRIGGERS = ["[", ",", ":", "{", " "]


def register(server: EvalspecServer) -> None:
    @server.request(lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
                    lsp.SignatureHelpOptions(trigger_characters=TRIGGERS, retrigger_characters=[",", " "]),
                    empty=lambda: None)
    async def signature_help(server: EvalspecServer, params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        snap = await server.snapshot(params.text_document.uri)
        if snap is None:
            return None
        line, col = snap.index.point(params.position)
        sig = await server.computed(snap.uri, engine_signature_help, snap.analysis, line, col)
        if sig is None:
            return None
        markdown = server.client.hover_markdown
        kind = lsp.MarkupKind.Markdown if markdown else lsp.MarkupKind.PlainText
        # Parameter labels as [start, end) offsets in UTF-16 units of the label, as LSP counts them.
        parameters = [lsp.ParameterInformation(label=(_units(sig.label, start), _units(sig.label, end)),
                                               documentation=lsp.MarkupContent(kind=kind, value=p.doc))
                      for p, (start, end) in zip(sig.parameters, sig.offsets(), strict=True)]
        info = lsp.SignatureInformation(label=sig.label, documentation=lsp.MarkupContent(kind=kind, value=sig.doc),
                                        parameters=parameters, active_parameter=sig.active)
        return lsp.SignatureHelp(signatures=[info], active_signature=0, active_parameter=sig.active)


def _units(text: str, code_points: int) -> int:
    return len(text[:code_points].encode("utf-16-le")) // 2
