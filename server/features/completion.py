"""textDocument/completion: the engine's completion items as LSP items (built in the worker)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from . import answers

if TYPE_CHECKING:
    from evalspec.ide.completion import CompletionItem
    from evalspec.ide.wire import Context

    from ..convert import LineIndex
    from ..worker import Snapshot

TRIGGER_CHARACTERS = ["$", ":", " ", "-", "/"]

_KIND = {
    "field": lsp.CompletionItemKind.Property,
    "value": lsp.CompletionItemKind.Value,
    "function": lsp.CompletionItemKind.Function,
    "assertion-type": lsp.CompletionItemKind.Class,
    "enum": lsp.CompletionItemKind.EnumMember,
    "model": lsp.CompletionItemKind.Module,
    "reference": lsp.CompletionItemKind.Reference,
    "file": lsp.CompletionItemKind.File,
    "snippet": lsp.CompletionItemKind.Snippet,
}
# A placeholder's text ends at its `}` and cannot hold an unescaped `$` (that would be a nested tab
# stop): with `[^}]*` each of many unclosed `${1:` scanned to the end of the text (quadratic).
_PLACEHOLDER = re.compile(r"\$\{\d+:((?:[^}$\\]|\\.)*+)\}|\$\{\d+\}|\$\d+|\\([$}\\])")


def plain_text(snippet: str) -> str:
    """A snippet without its tab stops, for clients that cannot expand them: placeholders keep their
    default text, bare tab stops vanish, escapes are undone."""
    return _PLACEHOLDER.sub(lambda m: m.group(1) or m.group(2) or "", snippet)


def empty() -> lsp.CompletionList:
    return lsp.CompletionList(is_incomplete=False, items=[])


@answers(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS,
                                                           resolve_provider=False), empty)
def completion(snap: Snapshot, params: lsp.CompletionParams) -> bytes | None:
    from evalspec.ide.completion import complete

    from ..convert import as_json

    line, col = snap.index.point(params.position)
    result = complete(snap.analysis, line, col, snippets=snap.client.snippets)
    items = [completion_item(snap.worker.context, item, snap.index) for item in result.items]
    return as_json(lsp.CompletionList(is_incomplete=bool(result.is_incomplete), items=items))


JOBS = {"completion": completion}


def completion_item(context: Context, item: CompletionItem, index: LineIndex) -> lsp.CompletionItem:
    client = context.client
    snippet = bool(item.is_snippet) and client.snippets
    text = item.insert_text or item.label
    if item.is_snippet and not snippet:
        text = plain_text(text)
    documentation: str | lsp.MarkupContent | None = None
    if item.documentation:
        documentation = (lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=item.documentation)
                         if client.completion_markdown else item.documentation)
    detail = item.detail
    if item.alias_of and not detail:
        detail = f"alias of {item.alias_of}"
    deprecated = bool(item.deprecated)
    replace_span = item.replace_span
    return lsp.CompletionItem(
        label=item.label,
        kind=_KIND.get(item.kind, lsp.CompletionItemKind.Text),
        detail=detail or None,
        documentation=documentation,
        sort_text=item.sort_text or None,
        # Only a filterText that differs from the label is sent: Neovim 0.7's omnifunc ignores the edit
        # range of every item that has one, and then inserts at the start of the keyword (`$$contains`).
        filter_text=item.filter_text if item.filter_text and item.filter_text != item.label else None,
        insert_text=None if replace_span is not None else text,
        text_edit=lsp.TextEdit(range=index.range(replace_span), new_text=text) if replace_span is not None else None,
        insert_text_format=lsp.InsertTextFormat.Snippet if snippet else lsp.InsertTextFormat.PlainText,
        # The engine indents every following line in full; the editor must not add its own indentation.
        insert_text_mode=lsp.InsertTextMode.AsIs if "\n" in text else None,
        tags=[lsp.CompletionItemTag.Deprecated] if deprecated and client.completion_deprecated_tag else None,
        deprecated=True if deprecated and client.completion_deprecated_flag
        and not client.completion_deprecated_tag else None,
    )
