"""The pure IDE layer: completion, hover, symbols, folding, navigation and refactorings as plain data.

The language server converts LSP positions to (line, column in code points), calls these functions
with the `Analysis` it already has, and converts the `Span`s back. Nothing here imports LSP, and
nothing here re-parses or re-checks the file: each request reads the analysis and the lines near the
cursor, so it stays fast on a 50,000-line blueprint and works while the text does not parse.

    context.cursor_context(analysis, line, col) -> CursorContext
    completion.complete(analysis, line, col, *, snippets) -> CompletionList
    hover.hover(analysis, line, col) -> HoverInfo | None
    symbols.document_symbols(analysis) -> list[Symbol]
    symbols.folding_ranges(analysis) -> list[tuple[int, int]]
    navigation.definition(analysis, line, col) -> list[Location]
    navigation.document_links(analysis) -> list[Link]
    refactor.refactorings(analysis, span) -> list[Fix]

Inner modules: lines.py (one line's block structure), layout.py (documents, header, prompts of one
analysis, cached on it), schema.py (the registry walked along a key path), docs.py (markdown shared by
hover and completion), model_ids.py and paths.py (model ids and file references), markdown_text.py
(someone else's text made inert in hovers, lens titles and diagnostics). For the language server's
engine workers: worker.py (the worker process: open documents' analyses, the jobs it is given), wire.py
(its pipe to the LSP process), open_files.py (the open documents' texts as a FileSource), bare_cr.py
and line_index.py (positions as the client counts them). Runs from the editor: runs.py (what can run, the results),
run_history.py (earlier runs read back), run_costs.py, run_notes.py, run_plan.py (a run's options,
plan and report), run_process.py (a run in a process of its own).
"""
