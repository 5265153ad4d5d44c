"""What the connected client can render, read once from its `initialize` capabilities."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp
from pygls.capabilities import get_capability


@dataclass(frozen=True)
class ClientSupport:
    pull_diagnostics: bool = False
    snippets: bool = False
    completion_markdown: bool = False
    completion_deprecated_tag: bool = False
    completion_deprecated_flag: bool = False
    hover_markdown: bool = False
    hierarchical_symbols: bool = False
    document_changes: bool = False
    code_action_literals: bool = False
    preferred_code_actions: bool = False
    line_folding_only: bool = False
    work_done_progress: bool = False
    code_lens_refresh: bool = False
    inlay_hint_refresh: bool = False
    semantic_tokens_refresh: bool = False
    show_document: bool = False
    diagnostics_refresh: bool = False
    watch_files: bool = False  # may register workspace/didChangeWatchedFiles watchers

    @classmethod
    def of(cls, caps: lsp.ClientCapabilities | None) -> ClientSupport:
        if caps is None:
            return cls()

        def get(field: str, default: Any = None) -> Any:
            return get_capability(caps, field, default)

        completion_docs = get("text_document.completion.completion_item.documentation_format", []) or []
        hover_formats = get("text_document.hover.content_format", []) or []
        deprecated_tags = get("text_document.completion.completion_item.tag_support.value_set", []) or []
        return cls(
            pull_diagnostics=get("text_document.diagnostic") is not None,
            snippets=bool(get("text_document.completion.completion_item.snippet_support", False)),
            completion_markdown=lsp.MarkupKind.Markdown in completion_docs,
            completion_deprecated_tag=lsp.CompletionItemTag.Deprecated in deprecated_tags,
            completion_deprecated_flag=bool(get("text_document.completion.completion_item.deprecated_support",
                                                False)),
            # The first listed format is the client's preference; any mention of markdown will do.
            hover_markdown=lsp.MarkupKind.Markdown in hover_formats,
            hierarchical_symbols=bool(get("text_document.document_symbol.hierarchical_document_symbol_support",
                                          False)),
            document_changes=bool(get("workspace.workspace_edit.document_changes", False)),
            code_action_literals=get("text_document.code_action.code_action_literal_support") is not None,
            preferred_code_actions=bool(get("text_document.code_action.is_preferred_support", False)),
            line_folding_only=bool(get("text_document.folding_range.line_folding_only", False)),
            work_done_progress=bool(get("window.work_done_progress", False)),
            code_lens_refresh=bool(get("workspace.code_lens.refresh_support", False)),
            inlay_hint_refresh=bool(get("workspace.inlay_hint.refresh_support", False)),
            semantic_tokens_refresh=bool(get("workspace.semantic_tokens.refresh_support", False)),
            show_document=bool(get("window.show_document.support", False)),
            diagnostics_refresh=bool(get("workspace.diagnostics.refresh_support", False)),
            watch_files=bool(get("workspace.did_change_watched_files.dynamic_registration", False)),
        )
