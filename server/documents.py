"""Open documents in the LSP process: their text and version, what their last check found, and when
to check them.

didOpen checks at once; didChange after a quiet period (the debounce), so a burst of keystrokes costs
one check. A check is the worker's `diagnostics` job for the version current when it is sent; its
answer is kept only while that version is still current (`on_checked` then publishes it). A document
is checked again when a file its last analysis read changes (its open text is edited, it is opened,
saved or closed, or the client reports it changed on disk). The texts themselves are what the workers
get (engine_workers.py); nothing here parses or analyses.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .convert import path_of
from .engine_workers import ERROR, OK, EngineWorkers

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Document:
    uri: str
    path: Path | None
    version: int
    text: str
    checked: int | None = None  # the version `diagnostics` are of
    eval_file: bool = False
    diagnostics: dict[str, bytes] = field(default_factory=dict)  # target uri -> JSON list
    reads: frozenset[str] = frozenset()  # the files its last analysis read
    rechecks: int = 0  # checks started because a file it reads changed
    runs_generation: int = 0  # of the run board its diagnostics show
    runs_shown: int = 0  # the run board generation a pull client was told about
    timer: asyncio.TimerHandle | None = None
    stopped_worker: int | None = None  # a version whose check stopped a worker: not checked again

    @property
    def fresh(self) -> bool:
        return self.checked == self.version


class Documents:
    def __init__(self, workers: EngineWorkers, on_checked: Callable[[Document], None],
                 on_error: Callable[[Document, Any], None], board: Callable[[str], tuple[int, Any] | None]) -> None:
        self.workers = workers
        self.on_checked = on_checked  # the current version was checked
        self.on_error = on_error  # its check raised in the worker (the traceback)
        self.board = board  # uri -> (generation, runs) for the worker
        self.debounce_s = 0.075
        self._docs: dict[str, Document] = {}
        self._readers: dict[str, set[str]] = {}  # path -> uris whose last analysis read it
        self._opened: dict[str, int] = {}
        self._opening = itertools.count()
        self._settled: dict[str, list[asyncio.Future[None]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def __iter__(self) -> Iterable[Document]:
        return iter(list(self._docs.values()))

    def open_uris(self) -> list[str]:
        return list(self._docs)

    def texts(self) -> dict[str, tuple[int, str, bool]]:
        """uri -> (version, text, whether the spare may hold it: that version's check succeeded, or the
        document has never been checked and has stopped no worker) of every open document."""
        return {uri: (doc.version, doc.text, doc.fresh or (doc.checked is None and doc.stopped_worker is None))
                for uri, doc in self._docs.items()}

    def open(self, uri: str, version: int, text: str) -> None:
        old = self._docs.get(uri)
        if old is not None:
            self._cancel(old)
        doc = self._docs[uri] = Document(uri, path_of(uri), version, text)
        self._opened.setdefault(uri, next(self._opening))
        self.check(doc, 0.0)
        self.files_changed([doc.path], besides=uri)  # its buffer now stands in for the file on disk

    def change(self, uri: str, version: int, text: str) -> None:
        doc = self._docs.get(uri)
        if doc is None:  # a change for a document we were never told about: treat it as an open
            self.open(uri, version, text)
            return
        doc.version, doc.text = version, text
        self.check(doc, self.debounce_s)
        self.files_changed([doc.path], besides=uri)

    def close(self, uri: str) -> Document | None:
        doc = self._docs.pop(uri, None)
        if doc is not None:
            self._cancel(doc)
            self._index_reads(doc, frozenset())
            self._opened.pop(uri, None)
            self.files_changed([doc.path])  # readers of its buffer go back to the file on disk
        return doc

    def files_changed(self, paths: Iterable[Path | None], *, besides: str | None = None) -> list[str]:
        """Check again every open document whose last analysis read one of `paths` (other than
        `besides`); their URIs."""
        changed = {os.path.abspath(p) for p in paths if p is not None}
        readers = {uri for p in changed for uri in self._readers.get(p, ())}
        again = []
        for uri in sorted(readers, key=lambda u: self._opened.get(u, 0)):
            doc = self._docs.get(uri)
            if doc is None or uri == besides:
                continue
            doc.rechecks += 1
            self.check(doc, self.debounce_s)
            again.append(uri)
        return again

    def check_all(self, uris: Iterable[str] | None = None) -> None:
        """Check again now (a worker was replaced, or the run boards changed)."""
        for doc in list(self._docs.values()):
            if uris is None or doc.uri in uris:
                self.check(doc, 0.0)

    def shutdown(self) -> None:
        for doc in self._docs.values():
            self._cancel(doc)

    async def settled(self, uri: str) -> None:
        """Once the document's current version is checked (for pulled diagnostics)."""
        while (doc := self._docs.get(uri)) is not None and not doc.fresh and doc.stopped_worker != doc.version:
            waiter = asyncio.get_running_loop().create_future()
            self._settled.setdefault(uri, []).append(waiter)
            if doc.timer is None and not self._checking(doc):
                self.check(doc, 0.0)
            await waiter

    # --- checking -----------------------------------------------------------------------------------

    def check(self, doc: Document, delay: float) -> None:
        self._cancel(doc)
        if doc.stopped_worker == doc.version:
            return
        if delay <= 0:
            self._start(doc)
        else:
            doc.timer = asyncio.get_running_loop().call_later(delay, self._start, doc)

    def _cancel(self, doc: Document) -> None:
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None

    def _checking(self, doc: Document) -> bool:
        return any(getattr(t, "uri", None) == doc.uri for t in self._tasks)

    def _start(self, doc: Document) -> None:
        doc.timer = None
        task = asyncio.ensure_future(self._check(doc, doc.version))
        task.uri = doc.uri  # type: ignore[attr-defined]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _check(self, doc: Document, version: int) -> None:
        board = self.board(doc.uri)
        status, value = await self.workers.call("diagnostics", doc.uri, version, doc.rechecks, board=board)
        if self._docs.get(doc.uri) is not doc or doc.version != version:
            return  # closed, or a newer version's check follows
        if status == ERROR:
            self.on_error(doc, value)
        if status != OK:
            self._wake(doc.uri)
            return
        doc.checked, doc.eval_file, doc.diagnostics = version, value["eval"], value["byUri"]
        doc.runs_generation = board[0] if board is not None else 0
        self._index_reads(doc, frozenset(value["reads"]))
        try:
            self.on_checked(doc)
        finally:
            self._wake(doc.uri)

    def _wake(self, uri: str) -> None:
        for waiter in self._settled.pop(uri, []):
            if not waiter.done():
                waiter.set_result(None)

    def _index_reads(self, doc: Document, reads: frozenset[str]) -> None:
        for p in doc.reads - reads:
            readers = self._readers.get(p)
            if readers is not None:
                readers.discard(doc.uri)
                if not readers:
                    del self._readers[p]
        for p in reads - doc.reads:
            self._readers.setdefault(p, set()).add(doc.uri)
        doc.reads = reads
