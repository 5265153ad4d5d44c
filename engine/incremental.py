"""Re-analysis of an edited document, for the language server.

`DocumentAnalyzer.analyze(text)` returns the same `Analysis` as `analyze()`. It remembers the file's
format while the text is broken (so diagnostics do not vanish mid-typing).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .analysis import Analysis, analyze
from .detect import FileKind


class DocumentAnalyzer:
    def __init__(self, path: str | Path | None, *, models_dir: Path | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.models_dir = models_dir
        self.env = env
        self.kind: FileKind | None = None  # the last format seen with a clean parse
        self.last: Analysis | None = None

    def analyze(self, text: str) -> Analysis:
        result = analyze(text, self.path, models_dir=self.models_dir, env=self.env)
        if result.kind is FileKind.NONE and not result.parsed.ok and self.kind not in (None, FileKind.NONE):
            # Sticky: a half-typed line must not turn a blueprint into "unrelated YAML".
            result = analyze(text, self.path, kind=self.kind, models_dir=self.models_dir, env=self.env)
        else:
            self.kind = result.kind
        self.last = result
        return result
