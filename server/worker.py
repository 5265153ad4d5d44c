"""`python -m evalspec_lsp.worker LEVEL [LOG_FILE]`: an engine worker process (evalspec/ide/worker.py,
which knows no LSP) answering the features' jobs, and the view of an open document those get: its
analysis with its positions in the client's units (`Snapshot`). The jobs of a first check (diagnostics,
then the run items) need no lsprotocol; the others are loaded while the worker waits."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalspec.ide import worker
from evalspec.ide.worker import Doc as Doc

from . import logs
from .convert import LineIndex

if TYPE_CHECKING:
    from evalspec.analysis import Analysis
    from evalspec.ide.wire import Runs

    from .capabilities import ClientSupport


@dataclass(frozen=True)
class Snapshot:
    """One analysed version of an open eval file, with what its answers need."""

    uri: str
    version: int
    analysis: Analysis
    index: LineIndex
    worker: Worker
    runs: Runs

    @property
    def client(self) -> ClientSupport:
        return self.worker.context.client


class Worker(worker.Worker):
    def snapshot(self, doc: Doc) -> Snapshot | None:
        """The current analysis if the document is an eval file (None for unrelated YAML and JSON)."""
        from evalspec.detect import FileKind

        analysis = self.analysis(doc)
        if analysis.kind is FileKind.NONE:
            return None
        return Snapshot(doc.uri, doc.version, analysis, self.index(analysis), self, doc.runs)

    def index(self, analysis: Analysis) -> LineIndex:
        from evalspec.ide.bare_cr import BARE_CRS

        return LineIndex(analysis.parsed.lines, self.context.encoding, analysis.memo.get(BARE_CRS))

    def index_of_path(self, path: Path) -> LineIndex:
        """Positions in another file, as the editor has it or else on disk (unreadable: columns pass through)."""
        text = self.text_of(path)
        return LineIndex([], self.context.encoding) if text is None else LineIndex.of_text(text, self.context.encoding)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    logs.configure(args[0] if args else "WARNING", args[1] if len(args) > 1 and args[1] else None)
    from . import features
    from .features import diagnostics, run_jobs

    return worker.main(Worker, {**diagnostics.JOBS, **run_jobs.JOBS}, features.jobs)


if __name__ == "__main__":
    raise SystemExit(main())
