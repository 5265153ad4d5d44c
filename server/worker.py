"""An engine worker process (`python -m evalspec_lsp.worker`): the open documents' analyses, and
every answer that needs one.

Single-threaded plain Python. Messages from the LSP process arrive on stdin (wire.py) and are handled
in order: `("text", uri, version, text)`, `("close", uri)`, `("board", uri, generation, runs)`,
`("init", context)`, `("standby", on)`, `("job", id, name, uri, version, args)` and `("cancel", id)`.
In standby (the spare, engine_workers.py) it analyses every text it holds whenever nothing is waiting,
saying after each `("done", 0, "ok", {uri: version analysed}, rss)`; it says so too after a close, once
the closed document's memory is back with the system. It starts with the engine's parser and
analysis loaded, says `("done", 0, "ok", None, rss)`, and loads the rest while it waits (`Loading`),
then says `("done", 0, "loaded", None, its size once loaded)`. Before a job it reads
whatever else has arrived: a cancelled job, or one whose document has a newer text waiting, is
answered `stale` without being computed. Each job is answered on stdout, in order, as
`("done", id, status, value, rss)`: status "ok", "stale", "gone" (the document is not open) or
"error" (value: the traceback). A document's analysis is made when a job first needs it (its
`DocumentAnalyzer` reuses what did not change); answers derived from it are kept in its memo.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import logging
import os
import sys
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalspec.analysis import Analysis
from evalspec.detect import FileKind
from evalspec.file_source import MAX_READ, read_regular_bytes
from evalspec.ide.bare_cr import BARE_CRS, BareCRs, dataset_crs
from evalspec.ide.open_files import OpenDocumentsSource
from evalspec.incremental import DocumentAnalyzer
from evalspec.line_breaks import as_read

from . import logs, wire
from .capabilities import ClientSupport
from .convert import LineIndex, path_of
from .wire import Context, Runs

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Doc:
    uri: str
    path: Path | None
    version: int
    text: str
    analyzer: DocumentAnalyzer
    analysis: Analysis | None = None
    analysed: int | None = None  # the version `analysis` is of
    rechecks: int = 0  # the LSP process's count of changes to files it reads, when last analysed
    runs: Runs = field(default_factory=Runs)
    runs_generation: int = -1


@dataclass(frozen=True)
class Snapshot:
    """One analysed version of an open document, with what its answers need."""

    uri: str
    version: int
    analysis: Analysis
    index: LineIndex
    worker: Worker
    runs: Runs

    @property
    def client(self) -> ClientSupport:
        return self.worker.context.client


class AnalysisFailed(Exception):
    """The analysis a job needs raised (its cause)."""


class Worker:
    def __init__(self) -> None:
        self.docs: dict[str, Doc] = {}
        self.at_path: dict[str, Doc] = {}
        self.context = Context(ClientSupport())
        self.files = OpenDocumentsSource(self._open_text)
        self.standby = False

    def _open_text(self, path: Path) -> str | None:
        doc = self.at_path.get(str(path))
        return doc.text if doc is not None else None

    def text(self, uri: str, version: int, text: str) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            path = path_of(uri)
            doc = self.docs[uri] = Doc(uri, path, version, text, DocumentAnalyzer(path, source=self.files))
            if path is not None:
                self.at_path.setdefault(os.path.abspath(path), doc)
        doc.version, doc.text = version, text

    def close(self, uri: str) -> None:
        doc = self.docs.pop(uri, None)
        if doc is not None and doc.path is not None and self.at_path.get(os.path.abspath(doc.path)) is doc:
            del self.at_path[os.path.abspath(doc.path)]
            for other in self.docs.values():  # another URI for the same file takes its place
                if other.path is not None and os.path.abspath(other.path) == os.path.abspath(doc.path):
                    self.at_path[os.path.abspath(doc.path)] = other
                    break

    def analysis(self, doc: Doc) -> Analysis:
        """The analysis of the document's current text."""
        if doc.analysis is None or doc.analysed != doc.version:
            try:
                analysis = doc.analyzer.analyze(doc.text)
            except Exception as exc:
                raise AnalysisFailed(f"analysis of {doc.uri} (version {doc.version})") from exc  # bare CRs read as line breaks there (line_breaks.py)
            analysis.memo[BARE_CRS] = dataset_crs(doc.text, doc.path)
            doc.analysis, doc.analysed = analysis, doc.version
        return doc.analysis

    def snapshot(self, doc: Doc) -> Snapshot | None:
        """The current analysis if the document is an eval file (None for unrelated YAML and JSON)."""
        analysis = self.analysis(doc)
        if analysis.kind is FileKind.NONE:
            return None
        return Snapshot(doc.uri, doc.version, analysis, self.index(analysis), self, doc.runs)

    def index(self, analysis: Analysis) -> LineIndex:
        crs: BareCRs | None = analysis.memo.get(BARE_CRS)
        return LineIndex(analysis.parsed.lines, self.context.encoding, crs)

    def index_of_path(self, path: Path) -> LineIndex:
        """Positions in another file: its open text if the editor has it, else the file on disk."""
        doc = self.at_path.get(os.path.abspath(path))
        if doc is not None:
            return LineIndex.of_text(as_read(doc.text, path), self.context.encoding)
        try:
            data = read_regular_bytes(path, MAX_READ)  # a FIFO would block the worker for good
            if data is None:
                raise OSError("not a regular file")
            text = data.decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return LineIndex([], self.context.encoding)  # unreadable: columns pass through unchanged
        return LineIndex.of_text(as_read(text, path), self.context.encoding)


def jobs() -> dict[str, Callable[..., Any]]:
    """Job name → function(worker, doc, *args): the features' (features.jobs) and `state`."""
    from .features import jobs

    return {**jobs(), "state": state}


def state(worker: Worker, doc: Doc | None) -> dict[str, int]:
    """For tests: the documents held and the analyses alive in this process."""
    gc.collect()
    live = sum(1 for o in gc.get_objects() if type(o) is Analysis)
    return {"documents": len(worker.docs), "analyses": live, "pid": os.getpid()}


def rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def analyse_one(worker: Worker) -> bool:
    """In standby: analyse a text not analysed yet (False when there is none)."""
    doc = next((d for d in worker.docs.values() if d.analysed != d.version), None)
    if doc is None:
        return False
    try:
        worker.analysis(doc)
    except AnalysisFailed:
        doc.analysis, doc.analysed = None, doc.version  # a job that needs it says why
    return True


def _later_text(queue: deque[Any], uri: str) -> bool:
    return any(m[0] in ("text", "close") and m[1] == uri for m in queue)


def say_analysed(worker: Worker, out: Any) -> None:
    analysed = {d.uri: d.analysed for d in worker.docs.values() if d.analysed is not None}
    out.write(wire.frame(("done", 0, "ok", analysed, rss())))
    out.flush()


# What a first check loads besides the worker's own imports.
FIRST_CHECK = ("evalspec.weval.check", "evalspec.finding_docs", "evalspec.agentv.check")
IDLE_S = 0.3  # nothing come for this long: the worker loads the rest


class Loading:
    """What the worker loads while it waits, a step at a time so that a text waits for one step at most:
    the modules a first check needs; then every feature's jobs (lsprotocol's types with them, which a
    check and the run items that follow it do without) once nothing has come for a moment (`IDLE_S`,
    longer before the first text, which is checked first), or at once when a job needs one. Then it
    says `loaded`, with its size once loaded (what engine_workers compares it with when it holds no
    analysis): its size at start and what each step added."""

    def __init__(self, out: Any) -> None:
        from .features import diagnostics, run_jobs

        self.table: dict[str, Callable[..., Any]] = {}
        for feature in (diagnostics, run_jobs):
            self.table.update(feature.JOBS)
        self.modules = list(FIRST_CHECK)
        self.loaded = False
        self.out = out
        self.size = rss()

    def job(self, name: str) -> Callable[..., Any]:
        if name not in self.table:
            self._features()
        return self.table[name]

    def step(self, worker: Worker, incoming: wire.Incoming) -> bool:
        """One step when nothing is waiting; False when there is nothing to load now."""
        if self.modules:
            self._grow(importlib.import_module, self.modules.pop(0))
            return True
        if self.loaded or incoming.ready(IDLE_S if worker.docs else IDLE_S * 3):
            return False
        self._features()
        return True

    def _grow(self, load: Callable[..., Any], *args: Any) -> None:
        before = rss()
        load(*args)
        self.size += rss() - before

    def _features(self) -> None:
        if not self.loaded:
            self._grow(lambda: self.table.update(jobs()))
            self.loaded = True
            self.out.write(wire.frame(("done", 0, "loaded", None, self.size)))
            self.out.flush()


def serve(incoming: wire.Incoming, out: Any) -> None:
    worker = Worker()
    loading = Loading(out)
    queue: deque[Any] = deque()
    cancelled: set[int] = set()
    while True:
        if not queue:
            if worker.standby and not incoming.ready() and analyse_one(worker):
                say_analysed(worker, out)
                continue
            if not incoming.ready() and loading.step(worker, incoming):
                continue
            queue.append(incoming.next())
        while incoming.ready():
            message = incoming.next()
            if message[0] == "text":  # a text not yet applied is superseded: only the newest is kept
                for i, waiting in enumerate(queue):
                    if waiting[0] == "text" and waiting[1] == message[1]:
                        del queue[i]
                        break
            queue.append(message)
        handle(worker, loading, queue.popleft(), queue, cancelled, out)  # its locals go with it


def handle(worker: Worker, loading: Loading, message: Any, queue: deque[Any],
           cancelled: set[int], out: Any) -> None:
    kind = message[0]
    if kind == "text":
        worker.text(*message[1:])
    elif kind == "close":
        worker.close(message[1])
        if not any(m[0] == "close" for m in queue):  # the memory goes back to the system; the LSP process hears so
            gc.collect()
            with contextlib.suppress(AttributeError, OSError):
                ctypes.CDLL(None).malloc_trim(0)  # glibc keeps freed memory in its heap otherwise
            say_analysed(worker, out)
    elif kind == "board":
        doc = worker.docs.get(message[1])
        if doc is not None:
            doc.runs_generation, doc.runs = message[2], message[3]
    elif kind == "init":
        from evalspec.finding_docs import set_docs_url

        worker.context = message[1]
        set_docs_url(worker.context.docs_url)
    elif kind == "standby":
        worker.standby = message[1]
    elif kind == "cancel":
        cancelled.add(message[1])
    elif kind == "job":
        _, job_id, name, uri, version, args = message
        doc = worker.docs.get(uri) if uri is not None else None
        if job_id in cancelled or (doc is not None and version is not None
                                   and (doc.version != version or _later_text(queue, uri))):
            cancelled.discard(job_id)
            answer: tuple[str, Any] = ("stale", None)
        elif uri is not None and doc is None:
            answer = ("gone", None)
        else:
            try:
                answer = ("ok", loading.job(name)(worker, doc, *args))
            except AnalysisFailed as exc:
                answer = ("error", (str(exc), "".join(traceback.format_exception(exc.__cause__ or exc))))
            except Exception:
                answer = ("error", (None, traceback.format_exc()))
        out.write(wire.frame(("done", job_id, *answer, rss())))
        out.flush()
        if not worker.docs:  # so the LSP process can tell it holds none once no job is in flight
            say_analysed(worker, out)
        if not queue:  # answered with nothing waiting: the garbage of the job goes now, not in the next one
            gc.collect(0)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    logs.configure(args[0] if args else "WARNING", args[1] if len(args) > 1 and args[1] else None)
    # A large file's analysis makes millions of objects that live as long as it does: with the default
    # thresholds the collector rescans them again and again while they are made (3-8x the parse).
    gc.set_threshold(100_000, 50, 1000)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever prints goes to the log, not into the pipe
    sys.stdout = sys.stderr
    try:
        out.write(wire.frame(("done", 0, "ok", None, rss())))  # ready (engine_workers.READY)
        out.flush()
        serve(wire.Incoming(0), out)
    except (EOFError, BrokenPipeError):  # the LSP process closed the pipe: it is done with this worker
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
