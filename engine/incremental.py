"""Re-analysis of an edited document, for the language server.

`DocumentAnalyzer.analyze(text)` returns the same `Analysis` as `analyze()`, but keeps caches between
calls: the parser re-parses only the top-level list items (Weval prompts) whose text changed, and the
checker re-checks only those prompts (all of them when the header changed). It also remembers the
file's format while the text is broken, so diagnostics do not vanish mid-typing.

The caches hold located nodes and checked prompts of the previous analysis and are never changed:
an item that moved (lines inserted or removed above it) is reused as a copy with shifted spans. So an
`Analysis`, once handed out, keeps describing its own text while later ones are made (the language
server's handlers read one while its worker thread makes the next).
"""

from __future__ import annotations

from pathlib import Path

from .analysis import Analysis, Caches, analyze
from .detect import FileKind
from .file_source import FileSource


class DocumentAnalyzer:
    def __init__(self, path: str | Path | None, *, models_dir: Path | None = None,
                 source: FileSource | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.models_dir = models_dir
        self.source = source  # the files and environment of every analysis (None: the disk)
        self.kind: FileKind | None = None  # the last format seen with a clean parse
        self.last: Analysis | None = None
        self.caches = Caches()

    def analyze(self, text: str) -> Analysis:
        result = analyze(text, self.path, models_dir=self.models_dir, source=self.source, caches=self.caches)
        if result.kind is FileKind.NONE and not result.parsed.ok and self.kind not in (None, FileKind.NONE):
            # Sticky: a half-typed line must not turn a blueprint into "unrelated YAML".
            result = analyze(text, self.path, kind=self.kind, models_dir=self.models_dir, source=self.source,
                             caches=self.caches)
        else:
            self.kind = result.kind
        self.last = result
        return result
