"""The order in which read messages are handled: a request about one document goes ahead of
notifications about other documents still waiting to be handled.

The server reads its input ahead (`stdio.read_messages`): framing and decoding a message costs
microseconds, handling a didOpen a fraction of a millisecond (pygls structures it, the document is
indexed, its analysis scheduled). A client that opens 10,000 documents at once and then asks for a
hover had the hover handled after all 10,000 opens: 6 s, when the guard's answer is "busy" at 0.9 s.
Here the hover is handled as soon as it is read, ahead of the opens of the other documents, and so is
everything else that does not depend on them. What keeps its order:

- every message about one document (`textDocument/*` notifications with its URI) and the requests
  about it: the opens and edits of a document that came before a request about it are handled
  first, then the request (pulled ahead of the other documents' notifications with it);
- requests, responses and `$/` notifications (a cancel) among themselves: none passes another;
- everything else is a barrier, passed by nothing and passing nothing: `initialize`, `shutdown`,
  `exit`, workspace notifications (settings, watched files), requests without a document (a command
  may run a lens of any document), and whatever could not be read.

Handling a notification about document A after a request about document B that came later is what
the client would see had it sent them the other way round; when B's analysis read A (a tests file),
A's open or edit checks B again (`Documents.files_changed`), as it does whenever A changes.
"""

from __future__ import annotations

import enum
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import Any


class Kind(enum.Enum):
    DOCUMENT = "document"  # a textDocument/* notification: ordered with its document's messages
    AHEAD = "ahead"  # may pass document notifications (a request about a document, a cancel, a response)
    BARRIER = "barrier"


@dataclass(eq=False, slots=True)
class Pending:
    """A message read and not yet handled (`message` is the decoded JSON, or what `payload` says)."""

    seq: int
    kind: Kind
    uri: str | None  # the document it is about (DOCUMENT, and AHEAD requests about one)
    message: Any
    started: float  # when its first line arrived
    size: int  # bytes of its body
    payload: Any = None  # what the reader could not decode (the exception, or the body for `unreadable`)
    taken: bool = field(default=False)
    passed: int = 0  # it went ahead of document notifications: how many were waiting then


def kind_of(message: Any) -> tuple[Kind, str | None]:
    if not isinstance(message, dict):
        return Kind.BARRIER, None
    method = message.get("method")
    if method is None:
        return (Kind.AHEAD, None) if "id" in message else (Kind.BARRIER, None)  # a response to our request
    if not isinstance(method, str):
        return Kind.BARRIER, None
    params = message.get("params")
    doc = params.get("textDocument") if isinstance(params, dict) else None
    uri = doc.get("uri") if isinstance(doc, dict) else None
    if not isinstance(uri, str):
        uri = None
    if "id" not in message:
        if method.startswith("$/"):
            return Kind.AHEAD, None
        if method.startswith("textDocument/") and uri is not None:
            return Kind.DOCUMENT, uri
        return Kind.BARRIER, None
    if method.startswith("textDocument/") and uri is not None:
        return Kind.AHEAD, uri
    return Kind.BARRIER, None


class MessageOrder:
    """Messages read and not yet handled; `next()` is the one to handle now (see the module)."""

    def __init__(self) -> None:
        self._seq = itertools.count()
        self._documents: deque[Pending] = deque()  # DOCUMENT messages in the order read (some taken early)
        self._others: deque[Pending] = deque()  # the rest, in the order read
        self._by_uri: dict[str, deque[Pending]] = {}  # DOCUMENT messages not yet handled, per document
        self.size = 0  # bytes of the messages waiting
        self.count = 0
        self.documents_waiting = 0

    def add(self, message: Any, payload: Any = None, *, started: float, size: int) -> Pending:
        """`payload`: what stands for a message that could not be read (a barrier)."""
        kind, uri = kind_of(message) if payload is None else (Kind.BARRIER, None)
        item = Pending(next(self._seq), kind, uri, message, started, size, payload)
        if kind is Kind.DOCUMENT:
            assert uri is not None
            self._documents.append(item)
            self._by_uri.setdefault(uri, deque()).append(item)
            self.documents_waiting += 1
        else:
            self._others.append(item)
        self.size += size
        self.count += 1
        return item

    def next(self) -> Pending | None:
        documents, others = self._documents, self._others
        while documents and documents[0].taken:
            documents.popleft()
        first_doc = documents[0] if documents else None
        first_other = others[0] if others else None
        if first_doc is None and first_other is None:
            return None
        if first_other is None or (first_doc is not None and first_doc.seq < first_other.seq
                                   and first_other.kind is Kind.BARRIER):
            assert first_doc is not None
            return self._take_document(first_doc)
        if first_doc is None or first_other.seq < first_doc.seq:
            return self._take_other()
        # Document notifications came first, then something that may go ahead of them: the messages
        # about its own document go first, then it.
        if first_other.uri is not None:
            own = self._by_uri.get(first_other.uri)
            if own and own[0].seq < first_other.seq:
                return self._take_document(own[0])
        item = self._take_other()
        item.passed = self.documents_waiting
        return item

    def _take_document(self, item: Pending) -> Pending:
        assert item.uri is not None
        own = self._by_uri[item.uri]
        assert own[0] is item
        own.popleft()
        if not own:
            del self._by_uri[item.uri]
        item.taken = True  # dropped from `_documents` when it reaches the front
        self.documents_waiting -= 1
        return self._taken(item)

    def _take_other(self) -> Pending:
        return self._taken(self._others.popleft())

    def _taken(self, item: Pending) -> Pending:
        self.size -= item.size
        self.count -= 1
        return item
