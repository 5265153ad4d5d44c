"""The parts of a batch run being made: a model's requests of one phase encoded into part files as they
come (`Outgoing`), each part's key and tag (`NewPart`, `tag_of`), and which items of a part a phase asks
for (`Wanted`). batch_stage.py sends, polls and collects them."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...batch import BatchAPI, PartFile, full
from ...jsonio import dumps_bytes
from ...providers.base import ChatRequest, ProviderError
from ..events import Cell
from .batch_journal import PartItems, Slot

if TYPE_CHECKING:
    from ...providers.http import HttpProvider


class Wanted:
    """The items of a part a phase asks for: each one's shape number + 1 (0: not asked, or answered
    already), its response cache key (--cache), and for a part read back from the journal, whose slots
    are not kept (batch_journal.PartItems), the cell and turn of the request that asked for it."""

    __slots__ = ("cells", "keys", "shapes", "turns")

    def __init__(self, shapes: array[int]) -> None:
        self.shapes = shapes
        self.keys: list[str | None] | None = None
        self.cells: list[Cell | None] | None = None
        self.turns: list[int | str | None] | None = None

    @classmethod
    def journaled(cls, n: int) -> Wanted:
        wanted = cls(array("H", bytes(2 * n)))
        wanted.cells = [None] * n
        wanted.turns = [None] * n
        return wanted

    def add(self, shape: int, cache_key: str | None) -> None:
        """The next item of a part the stage makes."""
        if cache_key is not None and self.keys is None:
            self.keys = [None] * len(self.shapes)
        self.shapes.append(shape + 1)
        if self.keys is not None:
            self.keys.append(cache_key)

    def ask(self, i: int, shape: int, cache_key: str | None, cell: Cell, turn: int | str) -> None:
        """Item `i` of a journaled part: asked by this request."""
        assert self.cells is not None and self.turns is not None
        self.shapes[i] = shape + 1
        self.cells[i] = cell
        self.turns[i] = turn
        if cache_key is not None:
            if self.keys is None:
                self.keys = [None] * len(self.shapes)
            self.keys[i] = cache_key

    def slot(self, items: PartItems, i: int) -> Slot:
        if self.cells is None or self.turns is None:
            return items.slot(i)
        cell, turn = self.cells[i], self.turns[i]
        assert cell is not None and turn is not None
        return cell, turn

    def slots(self, items: PartItems) -> Iterator[Slot]:
        """The slots asked for."""
        return (self.slot(items, i) for i, shape in enumerate(self.shapes) if shape)


def tag_of(label: str, model: str, body: bytes) -> str:
    """A part's tag in its custom ids (`<tag>-r<n>`, for an API whose batches keep no key of the run's):
    a digest of the run label, the model and the part's first request, so the same part of the same run
    gets the same ids again, and an ended batch's results say which part it was."""
    return digest(label, model, body, size=5)


def digest(label: str, model: str, body: bytes, *, size: int) -> str:
    h = hashlib.blake2b(digest_size=size)
    h.update(f"{len(label)}:{label}{len(model)}:{model}".encode("utf-8", "surrogatepass"))
    h.update(body)
    return h.hexdigest()


class NewPart:
    """A part being encoded: its items, their shapes (and cache keys), its file, and the digest of its
    bytes that its key is made of (`key`)."""

    __slots__ = ("file", "hash", "items", "wanted")

    def __init__(self, items: PartItems, file: PartFile, label: str, model: str) -> None:
        self.items = items
        self.wanted = Wanted(array("H"))
        self.file = file
        self.hash = hashlib.blake2b(digest_size=10)
        self.hash.update(f"{len(label)}:{label}{len(model)}:{model}".encode("utf-8", "surrogatepass"))

    @property
    def key(self) -> str:
        """`evalspec-<digest>` of the run label, the model and the requests as sent (custom ids and
        bodies): what the part is, whichever run makes it. The same run resumed makes the same parts
        (same requests, same order, same limits), so a batch an earlier run created for one is found
        at the provider under this key (OpenAI metadata, Gemini displayName) even when the journal
        lost it; the same requests run under another label, or changed, make another key."""
        return f"evalspec-{self.hash.hexdigest()}"


class Outgoing:
    """One model's requests of a phase, encoded as they come into part files on disk (batch/part_file.py),
    a new file whenever the API's limits (`full`: the rule `split` applies) would be passed. Custom ids
    are `r0`, `r1`, … (Anthropic: `<tag>-r0`, …) in the order the requests came, across the model's
    parts, counting those a journaled part holds (`skip`): a resumed run numbers and splits the parts the
    journal lost exactly as the run that made them did. Each part keeps its items
    (batch_journal.PartItems) and each item's shape number + 1 (2 bytes), and its cache key under --cache."""

    OVERHEAD = 64  # bytes of a batch's body besides its requests, counted against the byte limit

    def __init__(self, model: str, api: BatchAPI | None, raw: HttpProvider | None, label: str = "") -> None:
        self.model = model
        self.api = api
        self.raw = raw
        self.label = label
        self.skipped = 0  # requests not encoded: the model has no batch API
        self._parts: list[NewPart] = []
        self._size = 0  # the last part's bytes as the limits count them
        self._count = 0  # requests numbered (the next custom id's number)
        self._gap = False  # a journaled request came since the last part began: the next one starts a part

    def skip(self) -> None:
        """A request a journaled part holds: it keeps its number, and the part being made ends (a part
        is whole in the journal or not there at all, so the parts around it start and end where the
        first run's did)."""
        self._count += 1
        self._gap = True

    def add(self, cell: Cell, turn: int | str, req: ChatRequest, shape: int, cache_key: str | None) -> None:
        if self.api is None or self.raw is None:
            self.skipped += 1
            return
        try:
            body = self.raw.body(req)
        except ProviderError:
            return  # the interactive call raises the same error, in its cell
        tagged = self.api.tagged
        prefix = self._parts[-1].items.prefix if self._parts else ""
        if tagged and not self._parts:
            prefix = "0" * 10 + "-"  # a tag's length: the limits count the encoded bytes
        custom_id = f"{prefix}r{self._count}"
        encoded = self.api.encode(custom_id, body)
        if self._gap or not self._parts or full(self.api.limits, self._parts[-1].file.count, self._size, len(encoded)):
            if tagged:
                prefix = tag_of(self.label, self.model, dumps_bytes(body)) + "-"
                custom_id = f"{prefix}r{self._count}"
                encoded = self.api.encode(custom_id, body)
            self._parts.append(NewPart(PartItems(self._count, prefix=prefix), PartFile(self.api.framing),
                                        self.label, self.model))
            self._size = self.OVERHEAD
            self._gap = False
        part = self._parts[-1]
        part.file.add(encoded)
        part.hash.update(encoded)
        part.items.add(custom_id, cell, turn)
        part.wanted.add(shape, cache_key)
        self._size += len(encoded)
        self._count += 1

    def parts(self) -> Iterator[NewPart]:
        """Each part once, in order (the caller closes its file)."""
        while self._parts:
            yield self._parts.pop(0)

    def close(self) -> None:
        for part in self._parts:
            part.file.close()
        self._parts.clear()
