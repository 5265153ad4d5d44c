"""An engine worker process of the language server: the open documents' texts and analyses, and the
jobs that answer from them, one at a time in the order asked. It knows no LSP: the server's entry point
(`python -m evalspec_lsp.worker`) gives it the jobs and a Worker of its own that builds what they need.

Messages come on stdin (wire.py): ("text", uri, path, version, text), ("close", uri), ("board", uri,
runs), ("init", context), ("standby", on), ("job", id, name, uri, version, args), ("cancel", id).
A job is answered ("done", id, status, value, rss): "ok"; "stale" (cancelled, or its document has a
newer text waiting: not computed); "gone" (not open); "error" (value: what failed, its traceback).
Id 0 is the worker's own news: ("done", 0, "ok", {uri: version analysed} or None, rss) once started,
after each analysis in standby (the spare analyses its texts while nothing waits) and once a closed
document's memory is back with the system; ("done", 0, "loaded", None, its size once loaded) when it
has loaded every job. A first check's modules load first, the other jobs while nothing waits.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import os
import sys
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..analysis import Analysis
from ..file_source import MAX_READ, read_regular_bytes
from ..incremental import DocumentAnalyzer
from ..line_breaks import as_read
from . import wire
from .bare_cr import BARE_CRS, dataset_crs
from .open_files import OpenDocumentsSource

Jobs = dict[str, Callable[..., Any]]  # name -> fn(worker, doc or None, *args)
FIRST_CHECK = ("evalspec.weval.check", "evalspec.finding_docs", "evalspec.agentv.check")
IDLE_S = 0.3  # nothing has come for this long: the worker loads the other jobs


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
    runs: wire.Runs = field(default_factory=wire.Runs)


class AnalysisFailed(Exception):
    """The analysis a job needs raised (its cause)."""


class Worker:
    def __init__(self) -> None:
        self.docs: dict[str, Doc] = {}
        self.at_path: dict[str, Doc] = {}  # absolute path -> the open document of that file
        self.context = wire.Context()
        self.files = OpenDocumentsSource(self._open_text)
        self.standby = False

    def _open_text(self, path: Path) -> str | None:
        doc = self.at_path.get(str(path))
        return doc.text if doc is not None else None

    def text(self, uri: str, path: Path | None, version: int, text: str) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            doc = self.docs[uri] = Doc(uri, path, version, text, DocumentAnalyzer(path, source=self.files))
            if path is not None:
                self.at_path.setdefault(os.path.abspath(path), doc)
        doc.version, doc.text = version, text

    def close(self, uri: str) -> None:
        doc = self.docs.pop(uri, None)
        key = os.path.abspath(doc.path) if doc is not None and doc.path is not None else None
        if key is not None and self.at_path.get(key) is doc:
            del self.at_path[key]
            # another URI for the same file takes its place
            other = next((d for d in self.docs.values() if d.path is not None and os.path.abspath(d.path) == key), None)
            if other is not None:
                self.at_path[key] = other

    def analysis(self, doc: Doc) -> Analysis:
        """The analysis of the document's current text."""
        if doc.analysis is None or doc.analysed != doc.version:
            try:
                analysis = doc.analyzer.analyze(doc.text)
            except Exception as exc:
                raise AnalysisFailed(f"analysis of {doc.uri} (version {doc.version})") from exc
            analysis.memo[BARE_CRS] = dataset_crs(doc.text, doc.path)  # a CR there is no break to the engine
            doc.analysis, doc.analysed = analysis, doc.version
        return doc.analysis

    def text_of(self, path: Path) -> str | None:
        """Another file's text as the engine reads it: the editor's when it is open, else the disk's
        (None: unreadable, or not a regular file: a FIFO would block the worker for good)."""
        doc = self.at_path.get(os.path.abspath(path))
        if doc is not None:
            return as_read(doc.text, path)
        try:
            data = read_regular_bytes(path, MAX_READ)
        except (OSError, ValueError):
            return None
        return None if data is None else as_read(data.decode("utf-8", errors="replace"), path)


def state(worker: Worker, doc: Doc | None) -> dict[str, int]:
    """A job for tests: the documents held and the analyses alive in this process."""
    gc.collect()
    live = sum(1 for o in gc.get_objects() if type(o) is Analysis)
    return {"documents": len(worker.docs), "analyses": live, "pid": os.getpid()}


def rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def say(out: BinaryIO, job_id: int, status: str, value: Any, size: int | None = None) -> None:
    out.write(wire.frame(("done", job_id, status, value, rss() if size is None else size)))
    out.flush()


def say_analysed(worker: Worker, out: BinaryIO) -> None:
    say(out, 0, "ok", {d.uri: d.analysed for d in worker.docs.values() if d.analysed is not None})


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


class Loading:
    """What the worker loads while it waits, a step at a time so that a text waits for one step at most:
    the modules a first check needs, then the other jobs once nothing has come for `IDLE_S` (longer
    before the first text, which is checked first), or at once when a job needs one. Then it says
    `loaded` with its size once loaded: its size at start and what each step added, not the analyses
    made meanwhile."""

    def __init__(self, out: BinaryIO, first: Jobs, rest: Callable[[], Jobs]) -> None:
        self.table = dict(first)
        self.rest = rest
        self.modules = list(FIRST_CHECK)
        self.loaded = False
        self.out = out
        self.size = rss()

    def job(self, name: str) -> Callable[..., Any]:
        if name not in self.table:
            self._everything()
        return self.table[name]

    def step(self, worker: Worker, incoming: wire.Incoming) -> bool:
        """One step when nothing is waiting; False when there is nothing to load now."""
        if self.modules:
            self._grow(importlib.import_module, self.modules.pop(0))
            return True
        if self.loaded or incoming.ready(IDLE_S if worker.docs else IDLE_S * 3):
            return False
        self._everything()
        return True

    def _grow(self, load: Callable[..., Any], *args: Any) -> None:
        before = rss()
        load(*args)
        self.size += rss() - before

    def _everything(self) -> None:
        if not self.loaded:
            self._grow(lambda: self.table.update({**self.rest(), "state": state}))
            self.loaded = True
            say(self.out, 0, "loaded", None, self.size)


def serve(worker: Worker, incoming: wire.Incoming, out: BinaryIO, loading: Loading) -> None:
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


def handle(worker: Worker, loading: Loading, message: Any, queue: deque[Any], cancelled: set[int],
           out: BinaryIO) -> None:
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
        if (doc := worker.docs.get(message[1])) is not None:
            doc.runs = message[2]
    elif kind == "init":
        from ..finding_docs import set_docs_url

        worker.context = message[1]
        set_docs_url(worker.context.docs_url)
    elif kind == "standby":
        worker.standby = message[1]
    elif kind == "cancel":
        cancelled.add(message[1])
    elif kind == "job":
        _, job_id, name, uri, version, args = message
        doc = worker.docs.get(uri) if uri is not None else None
        later = any(m[0] in ("text", "close") and m[1] == uri for m in queue)
        if job_id in cancelled or (doc is not None and version is not None and (doc.version != version or later)):
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
        say(out, job_id, *answer)
        if not worker.docs:  # so the LSP process can tell it holds none once no job is in flight
            say_analysed(worker, out)
        if not queue:  # answered with nothing waiting: the garbage of the job goes now, not in the next one
            gc.collect(0)


def main(kind: type[Worker], first: Jobs, rest: Callable[[], Jobs]) -> int:
    """Serve on stdin/stdout until the LSP process closes the pipe: a `kind` (the server's adds what its
    jobs need), the jobs of a first check (`first`), and `rest()`, which loads the others."""
    # A big analysis makes millions of objects that live as long as it does: the default thresholds
    # rescan them again and again while they are made.
    gc.set_threshold(100_000, 50, 1000)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever prints goes to the log, not into the pipe
    sys.stdout = sys.stderr
    with contextlib.suppress(EOFError, BrokenPipeError):  # the pipe closed: the LSP process is done with it
        say(out, 0, "ok", None)  # started (engine_workers.READY)
        serve(kind(), wire.Incoming(0), out, Loading(out, first, rest))
    return 0
