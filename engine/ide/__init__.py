"""The pure IDE layer: completion, hover, symbols, folding, navigation and refactorings as plain data.

The language server converts LSP positions to (line, column in code points), calls these functions
with the `Analysis` it already has, and converts the `Span`s back. Nothing here imports LSP.

    context.cursor_context(analysis, line, col) -> CursorContext
    completion.complete(analysis, line, col, *, snippets) -> CompletionList
    hover.hover(analysis, line, col) -> HoverInfo | None
    symbols.document_symbols(analysis) -> list[Symbol];  symbols.folding_ranges(analysis) -> list[(first, last)]
    navigation.definition(analysis, line, col) -> list[Location];  navigation.document_links(analysis) -> list[Link]
    refactor.refactorings(analysis, span) -> list[Fix]
"""
