"""What the connected client can render, read once from its `initialize` capabilities.

Loads neither lsprotocol nor pygls until `of` (in the LSP process): an engine worker unpickles a
`ClientSupport` before its first check, which needs neither."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lsprotocol import types as lsp

MARKDOWN = "markdown"  # lsp.MarkupKind.Markdown
DEPRECATED = 1  # lsp.CompletionItemTag.Deprecated


def _cap(path: str, has: Any = None) -> Any:
    """A flag set by the capability at `path` when it is present and not false, or (`has`) a list holding `has`."""
    return field(default=False, metadata={"path": path, "has": has})


@dataclass(frozen=True)
class ClientSupport:
    pull_diagnostics: bool = _cap("text_document.diagnostic")
    snippets: bool = _cap("text_document.completion.completion_item.snippet_support")
    completion_markdown: bool = _cap("text_document.completion.completion_item.documentation_format",
                                     MARKDOWN)
    completion_deprecated_tag: bool = _cap("text_document.completion.completion_item.tag_support.value_set",
                                           DEPRECATED)
    completion_deprecated_flag: bool = _cap("text_document.completion.completion_item.deprecated_support")
    # The first listed format is the client's preference; any mention of markdown will do.
    hover_markdown: bool = _cap("text_document.hover.content_format", MARKDOWN)
    hierarchical_symbols: bool = _cap("text_document.document_symbol.hierarchical_document_symbol_support")
    document_changes: bool = _cap("workspace.workspace_edit.document_changes")
    preferred_code_actions: bool = _cap("text_document.code_action.is_preferred_support")
    work_done_progress: bool = _cap("window.work_done_progress")
    code_lens_refresh: bool = _cap("workspace.code_lens.refresh_support")
    inlay_hint_refresh: bool = _cap("workspace.inlay_hint.refresh_support")
    semantic_tokens_refresh: bool = _cap("workspace.semantic_tokens.refresh_support")
    folding_range_refresh: bool = _cap("workspace.folding_range.refresh_support")
    # Takes ServerCancelled as a cancellation (declared for semantic tokens; vscode-languageclient treats
    # every request so), rather than as a failure to show.
    server_cancel: bool = _cap("text_document.semantic_tokens.server_cancel_support")
    show_document: bool = _cap("window.show_document.support")
    diagnostics_refresh: bool = _cap("workspace.diagnostics.refresh_support")
    watch_files: bool = _cap("workspace.did_change_watched_files.dynamic_registration")  # may register watchers

    @classmethod
    def of(cls, caps: lsp.ClientCapabilities) -> ClientSupport:
        from pygls.capabilities import get_capability

        flags = {}
        for f in fields(cls):
            value, has = get_capability(caps, f.metadata["path"], None), f.metadata["has"]
            flags[f.name] = has in (value or []) if has is not None else value is not None and value is not False
        return cls(**flags)
