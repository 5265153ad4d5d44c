"""Open documents in the LSP process: their text (didChange applied here: pygls's copy breaks lines at
form feeds, `\\x1c`-`\\x1e`, `\\x85`, `\\u2028` and `\\u2029` too, where LSP breaks only at `\\n`,
`\\r\\n` and `\\r`), version, what their last check found, and when to check them.

didOpen checks at once, didChange after a quiet period (the debounce). A check is the worker's
`diagnostics` job for the current version; its answer is kept only while that version is current
(`on_checked` then publishes it). A document is checked again when a file its last analysis read
changes (edited, opened, saved or closed in the editor, or changed on disk). Nothing here analyses.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from .convert import LineIndex, path_of
from .engine_workers import ERROR, OK, EngineWorkers, Text, settle

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
    asked: int = 0  # checks asked for (an edit, a file it reads, a run's board) …
    done: int = 0  # … and the last of them a worker answered: a pull waits for a re-check under way

    @property
    def fresh(self) -> bool:
        return self.checked == self.version


class Documents:
    def __init__(self, workers: EngineWorkers, on_checked: Callable[[Document], None],
                 board: Callable[[str], tuple[int, Any] | None], on_error: Callable[[Document, Any], None]) -> None:
        self.workers = workers
        self.on_checked = on_checked  # the current version was checked
        self.on_error = on_error  # its check raised in the worker (the traceback)
        self.board = board  # uri -> (generation, runs) for the worker
        self.debounce_s = 0.075
        self._docs: dict[str, Document] = {}
        self._readers: dict[str, set[str]] = {}  # path -> uris whose last analysis read it
        self._settled: dict[str, list[asyncio.Future[None]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def open_paths(self) -> set[Path]:
        return {doc.path for doc in self._docs.values() if doc.path is not None}

    def texts(self) -> dict[str, Text]:
        """uri -> (version, text, whether the spare may hold it: that version's check succeeded, or the
        document has never been checked and has stopped no worker; path) of every open document."""
        return {uri: (doc.version, doc.text, doc.fresh or (doc.checked is None and doc.stopped_worker is None),
                      doc.path) for uri, doc in self._docs.items()}

    def open(self, uri: str, version: int, text: str) -> None:
        old = self._docs.get(uri)
        if old is not None:
            self._cancel(old)
        doc = self._docs[uri] = Document(uri, path_of(uri), version, text)
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
            self.files_changed([doc.path])  # readers of its buffer go back to the file on disk
        return doc

    def files_changed(self, paths: Iterable[Path | None], *, besides: str | None = None) -> None:
        """Check again every open document whose last analysis read one of `paths` (other than `besides`)."""
        changed = {os.path.abspath(p) for p in paths if p is not None}
        readers = {uri for p in changed for uri in self._readers.get(p, ())} - {besides}
        for doc in [d for d in self._docs.values() if d.uri in readers]:  # in the order they were opened
            doc.rechecks += 1
            self.check(doc, self.debounce_s)

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
        while ((doc := self._docs.get(uri)) is not None and (not doc.fresh or doc.done < doc.asked)
               and doc.stopped_worker != doc.version):
            waiter = asyncio.get_running_loop().create_future()
            self._settled.setdefault(uri, []).append(waiter)
            if doc.timer is None and not any(getattr(t, "uri", None) == uri for t in self._tasks):
                self.check(doc, 0.0)
            await waiter

    # --- checking -----------------------------------------------------------------------------------

    def check(self, doc: Document, delay: float) -> None:
        self._cancel(doc)
        if doc.stopped_worker == doc.version:
            return
        doc.asked += 1
        if delay <= 0:
            self._start(doc)
        else:
            doc.timer = asyncio.get_running_loop().call_later(delay, self._start, doc)

    def _cancel(self, doc: Document) -> None:
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None

    def _start(self, doc: Document) -> None:
        doc.timer = None
        task = asyncio.ensure_future(self._check(doc, doc.version, doc.asked))
        task.uri = doc.uri  # type: ignore[attr-defined]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _check(self, doc: Document, version: int, asked: int) -> None:
        board = self.board(doc.uri)
        status, value = await self.workers.call("diagnostics", doc.uri, version, doc.rechecks, board=board)
        if self._docs.get(doc.uri) is not doc or doc.version != version:
            return  # closed, or a newer version's check follows
        doc.done = max(doc.done, asked)
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
        settle(*self._settled.pop(uri, []), value=None)

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


# --- applying didChange ---------------------------------------------------------------------------

_BREAK = re.compile(r"\r\n|\r|\n")
_LF = re.compile(r"\n")
_CONTENT = re.compile(r"[^\r\n]*")


def apply_change(text: str, change: lsp.TextDocumentContentChangeEvent, encoding: str) -> str:
    """`text` after one content change: a whole new text, or `range` replaced (positions counted in the
    client's `encoding`; a position past a line's end or past the last line is clamped to it)."""
    if not isinstance(change, lsp.TextDocumentContentChangePartial):
        return change.text
    start = change.range.start
    end = change.range.end
    if (end.line, end.character) < (start.line, start.character):
        start, end = end, start
    first_line = _line_start(text, start.line, 0)
    first = _offset(text, first_line, start, encoding)
    # The end's line counted on from the start's: one pass over the text, not two.
    last = _offset(text, _line_start(text, end.line - start.line, first_line) if first_line is not None else None,
                   end, encoding)
    return text[:first] + change.text + text[last:]


# More changes than this in one didChange are applied on a list of lines (`apply_changes`).
_MANY = 8


def apply_changes(text: str, changes: Sequence[lsp.TextDocumentContentChangeEvent], encoding: str) -> str:
    """`text` after a didChange's content changes, in order: a few one by one on the text; many (a
    multi-cursor edit sends one per line) on a list of its lines, where each touches its line only.
    Both give the same text (tests/lsp/test_text_documents.py)."""
    if len(changes) <= _MANY:
        for change in changes:
            text = apply_change(text, change, encoding)
        return text
    lines = _lines(text)
    for change in changes:
        if not isinstance(change, lsp.TextDocumentContentChangePartial):
            lines = _lines(change.text)
            continue
        start, end = change.range.start, change.range.end
        if (end.line, end.character) < (start.line, start.character):
            start, end = end, start
        first_line, first = _locate(lines, start, encoding)
        last_line, last = _locate(lines, end, encoding)
        new = lines[first_line][:first] + change.text + lines[last_line][last:]
        if first_line > 0 and new.startswith("\n") and lines[first_line - 1].endswith("\r"):
            first_line -= 1  # a CR ending the line above and this LF are one line break in the text
            new = lines[first_line] + new
        pieces = _lines(new)
        if last_line < len(lines) - 1:
            pieces.pop()  # `new` ends with the replaced last line's own break: the line after it follows
        lines[first_line:last_line + 1] = pieces
    return "".join(lines)


def _lines(text: str) -> list[str]:
    """`text` cut after each line break (`\r\n`, `\r`, `\n`): one piece per LSP line, the last maybe empty."""
    out: list[str] = []
    pos = 0
    for m in (_BREAK if "\r" in text else _LF).finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    out.append(text[pos:])
    return out


def _locate(lines: list[str], position: lsp.Position, encoding: str) -> tuple[int, int]:
    """The line and the index in it of an LSP position (past a line's end: its end, before the break;
    past the last line: the end of the text)."""
    if position.line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    line_no = max(0, position.line)
    line = lines[line_no]
    content = line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith(("\r", "\n")) else line
    return line_no, LineIndex((content,), encoding).engine_col(0, position.character)


def _line_start(text: str, lines: int, start: int) -> int | None:
    """The index where the line `lines` lines below the one starting at `start` starts (None: past the
    last line); the breaks are skipped in C (islice), not in a Python loop."""
    if lines <= 0:
        return start
    breaks = _BREAK if "\r" in text else _LF  # a one-character pattern is searched for twice as fast
    found = next(itertools.islice(breaks.finditer(text, start), lines - 1, None), None)
    return found.end() if found is not None else None


def _offset(text: str, line_start: int | None, position: lsp.Position, encoding: str) -> int:
    """The index in `text` of an LSP position on the line starting at `line_start`."""
    if line_start is None:
        return len(text)  # past the last line
    content = _CONTENT.match(text, line_start)
    line = content.group() if content is not None else ""
    return line_start + LineIndex((line,), encoding).engine_col(0, position.character)
