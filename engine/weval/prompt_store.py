"""A big blueprint's prompts in memory that does not grow with the file.

A checked prompt as objects (the prompt, its messages and points, every span) is ~4.6 KB of memory;
a 100,000-prompt blueprint's model was ~500 MB, held from the analysis to the end of the run. When a
streamed check (`check` and `run`) has made more than `bound` prompts, they go to a temporary file
instead, each as a compact record (marshal of plain tuples and dicts, pickle for a value marshal
refuses): only the ids and each record's offset stay in memory, and a prompt is decoded again when it
is read. A file with fewer prompts keeps its plain list (the editor's analyses always do), so small
runs do exactly what they did.

A `PromptStore` reads like the list it stands for (len, iteration, indexes); `subset` keeps some of
the prompts (a run's selection, a shard) without decoding any. Each read decodes a new copy, equal to
the prompt that was stored (a few recent ones are kept, so a cell that reads its prompt several times
decodes it once); a prompt is never changed after it is stored, like every model an analysis hands out.
"""

from __future__ import annotations

import marshal
import pickle
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from ..findings import Span
from ..spill_file import SpillFile
from .model import Message, Point, Prompt

DEFAULT_BOUND = 4096  # prompts kept as objects; a file with more spills them all (a 2,000-prompt run never does)
RECENT = 256  # decoded prompts kept for reads that come again soon (a cell's stages; workers run ~32 at once)

SPILL_PREFIX = ".evalspec-prompts-"  # the temporary file's name (unlinked at once: seen only in /proc)

_MARSHAL, _PICKLE = b"m", b"p"
_SPANS = ("span", "id_span")
_POINTS = ("should", "should_not")


def _encode(p: Prompt) -> bytes:
    """The prompt as plain data: its fields by name, spans as tuples, messages and points as dicts."""
    data: dict[str, Any] = {}
    for name, value in p.__dict__.items():
        if name in _SPANS:
            data[name] = tuple(value) if value is not None else None
        elif name == "messages":
            data[name] = [_plain(m) for m in value]
        elif name in _POINTS:
            data[name] = [_plain(pt) for pt in value]
        else:
            data[name] = value
    try:
        return _MARSHAL + marshal.dumps(data)
    except ValueError:  # a value marshal does not know (only plain data is ever written): keep it as it is
        return _PICKLE + pickle.dumps(p, pickle.HIGHEST_PROTOCOL)


def _plain(obj: Message | Point) -> dict[str, Any]:
    out = dict(obj.__dict__)
    if out.get("span") is not None:
        out["span"] = tuple(out["span"])
    return out


_new = object.__new__


def _decode(data: bytes) -> Prompt:
    if data[:1] == _PICKLE:
        found: Prompt = pickle.loads(data[1:])
        return found
    fields: dict[str, Any] = marshal.loads(data[1:])
    for name in _SPANS:
        if fields.get(name) is not None:
            fields[name] = Span(*fields[name])
    fields["messages"] = [_rebuild(Message, m) for m in fields["messages"]]
    for name in _POINTS:
        fields[name] = [_rebuild(Point, pt) for pt in fields[name]]
    prompt: Prompt = _new(Prompt)
    prompt.__dict__.update(fields)
    return prompt


def _rebuild(cls: type, fields: dict[str, Any]) -> Any:
    if fields.get("span") is not None:
        fields["span"] = Span(*fields["span"])
    obj: Any = _new(cls)
    obj.__dict__.update(fields)
    return obj


class _File:
    """The records of one store and its subsets: an unlinked temporary file, offsets in memory."""

    def __init__(self, spill: SpillFile) -> None:
        self._spill = spill
        self.starts = array("q")  # record k is bytes starts[k]:starts[k+1]
        self.starts.append(0)
        self.ids: list[str] = []
        self._recent: dict[int, Prompt] = {}
        self._lock = threading.Lock()  # the runner's worker threads (judges, scripts) read prompts too

    def add(self, p: Prompt) -> None:
        data = _encode(p)
        self._spill.append(data)
        self.starts.append(self.starts[-1] + len(data))
        self.ids.append(p.id)

    def flush(self) -> None:
        self._spill.flush()

    def get(self, k: int) -> Prompt:
        with self._lock:
            found = self._recent.get(k)
            if found is not None:
                return found
            start, end = self.starts[k], self.starts[k + 1]
            prompt = _decode(self._spill.read(start, end - start))
            if len(self._recent) >= RECENT:
                del self._recent[next(iter(self._recent))]
            self._recent[k] = prompt
            return prompt

    def close(self) -> None:
        self._spill.close()


class PromptStore(Sequence[Prompt]):
    """The prompts of one blueprint (or the part of them a run keeps), on disk; see the module's doc."""

    def __init__(self, file: _File, indexes: array | None = None) -> None:
        self._file = file
        self._indexes = indexes  # positions in the file, or None: all of them, in order

    @classmethod
    def of(cls, prompts: Iterable[Prompt], spill: SpillFile | None = None) -> PromptStore:
        """A store of `prompts` in `spill` (a new temporary file in the system's temporary folder)."""
        file = _File(spill if spill is not None else SpillFile(SPILL_PREFIX))
        for p in prompts:
            file.add(p)
        file.flush()
        return cls(file)

    def append(self, p: Prompt) -> None:
        if self._indexes is not None:
            raise TypeError("a subset of a prompt store is read-only")
        self._file.add(p)

    def __len__(self) -> int:
        return len(self._indexes) if self._indexes is not None else len(self._file.ids)

    @overload
    def __getitem__(self, index: int) -> Prompt: ...

    @overload
    def __getitem__(self, index: slice) -> list[Prompt]: ...

    def __getitem__(self, index: int | slice) -> Prompt | list[Prompt]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        return self._file.get(self._indexes[index] if self._indexes is not None else index)

    def __iter__(self) -> Iterator[Prompt]:
        for k in range(len(self)):
            yield self[k]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __repr__(self) -> str:
        return f"<PromptStore of {len(self)} prompts>"

    def ids(self) -> list[str]:
        """Every prompt's id, in order, without decoding any."""
        if self._indexes is None:
            return list(self._file.ids)
        return [self._file.ids[k] for k in self._indexes]

    def subset(self, keep: Callable[[int, str], bool]) -> PromptStore:
        """The prompts for which keep(position, id) holds, in order (nothing decoded)."""
        ids = self._file.ids
        where = self._indexes if self._indexes is not None else range(len(ids))
        return PromptStore(self._file, array("q", (k for n, k in enumerate(where) if keep(n, ids[k]))))


def prompt_ids(prompts: Sequence[Prompt]) -> list[str]:
    """The ids of a list of prompts or a store (whose prompts are not decoded for it)."""
    return prompts.ids() if isinstance(prompts, PromptStore) else [p.id for p in prompts]


def keep_prompts(prompts: Sequence[Prompt], keep: Callable[[int, str], bool]) -> Sequence[Prompt]:
    """`[p for n, p in enumerate(prompts) if keep(n, p.id)]`, a store's subset for a store."""
    if isinstance(prompts, PromptStore):
        return prompts.subset(keep)
    return [p for n, p in enumerate(prompts) if keep(n, p.id)]


class PromptCollector:
    """What a streamed check appends its prompts to: a plain list up to `bound` prompts, past that a
    store (the prompts held so far go to it first). `result()` is the blueprint's `prompts`."""

    def __init__(self, bound: int | None = None, scratch: Callable[[str], SpillFile] | None = None) -> None:
        self.bound = max(1, bound if bound is not None else DEFAULT_BOUND)
        self.scratch = scratch  # where a store's file comes from (the analysis's FileSource.scratch_file)
        self._held: list[Prompt] = []
        self._store: PromptStore | None = None

    def append(self, p: Prompt) -> None:
        if self._store is not None:
            self._store.append(p)
            return
        self._held.append(p)
        if len(self._held) > self.bound:
            spill = self.scratch(SPILL_PREFIX) if self.scratch is not None else None
            self._store = PromptStore.of(self._held, spill)
            self._held = []

    def result(self) -> list[Prompt] | PromptStore:
        if self._store is not None:
            self._store._file.flush()
            return self._store
        return self._held
