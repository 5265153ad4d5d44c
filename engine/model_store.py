"""A big file's items (Weval prompts, AgentV tests) in memory that does not grow with the file.

When a streamed check (`check` and `run`) has made more than its bound of items, each becomes a compact
record (the format's `Codec`: `weval/prompt_store.py`, kept deflated in memory; `agentv/test_store.py`, in
a temporary file): only the ids and each record's offset are objects, and an item is decoded again when it
is read. A
file with fewer items keeps its plain list (the editor's analyses always do).

A `ModelStore` reads like the list it stands for (len, iteration, indexes); `subset` keeps some of the
items (a run's selection, a shard) without decoding any. Each read decodes a new copy, equal to the item
that was stored (a few recent ones are kept, so a cell that reads its item several times decodes it
once); an item is never changed after it is stored, like every model an analysis hands out.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar, overload

from .list_like import ListLike
from .spill_file import MemorySpill, SpillFile

T = TypeVar("T")


class Codec(Protocol[T]):
    """How a format's items become records and back, and what identifies one."""

    def encode(self, item: T) -> bytes: ...

    def decode(self, data: bytes) -> T: ...

    def id_of(self, item: T) -> str: ...


class FirstRecordDeflate:
    """Records deflated against the first one packed (a file's items share their keys and much of their
    text: a Weval prompt's ~570-byte record packs into ~180 bytes, an AgentV test's ~870 into ~210), for a
    few microseconds each way. A packed record starts with `PACKED`; a record that does not is as given."""

    PACKED = b"z"

    def __init__(self) -> None:
        self._dictionary: bytes | None = None

    def pack(self, data: bytes) -> bytes:
        if self._dictionary is None:
            self._dictionary = data
        out = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, self._dictionary)
        return self.PACKED + out.compress(data) + out.flush()

    def unpack(self, data: bytes) -> bytes:
        if data[:1] != self.PACKED:
            return data
        assert self._dictionary is not None
        out = zlib.decompressobj(-15, zdict=self._dictionary)
        return out.decompress(data[1:]) + out.flush()


class _File(Generic[T]):
    """The records of one store and its subsets (an unlinked temporary file, or memory), and their offsets."""

    def __init__(self, spill: SpillFile | MemorySpill, codec: Codec[T], recent: int) -> None:
        self._spill = spill
        self.codec = codec
        self.starts = array("q")  # record k is bytes starts[k]:starts[k+1]
        self.starts.append(0)
        self.ids: list[str] = []
        self._recent: OrderedDict[int, T] = OrderedDict()  # popitem(last=False): a dict's first key is
        # found by skipping the slots its deletions left
        self._keep = max(1, recent)
        self._lock = threading.Lock()  # the runner's worker threads (judges, scripts) read items too

    def add(self, item: T) -> None:
        data = self.codec.encode(item)
        self._spill.append(data)
        self.starts.append(self.starts[-1] + len(data))
        self.ids.append(self.codec.id_of(item))

    def flush(self) -> None:
        self._spill.flush()

    def get(self, k: int) -> T:
        with self._lock:
            found = self._recent.get(k)
            if found is not None:
                return found
            start, end = self.starts[k], self.starts[k + 1]
            item = self.codec.decode(self._spill.read(start, end - start))
            if len(self._recent) >= self._keep:
                self._recent.popitem(last=False)
            self._recent[k] = item
            return item

    def raw(self, k: int) -> bytes:
        """Record k as stored (not decoded, not kept)."""
        start, end = self.starts[k], self.starts[k + 1]
        return self._spill.read(start, end - start)

    def close(self) -> None:
        self._spill.close()


class ModelStore(ListLike[T]):
    """The items of one file (or the part of them a run keeps) as records; see the module's doc."""

    def __init__(self, file: _File[T], indexes: array | None = None) -> None:
        self._file = file
        self._indexes = indexes  # positions in the file, or None: all of them, in order

    @classmethod
    def of(cls, items: Iterable[T], spill: SpillFile | MemorySpill, codec: Codec[T], recent: int) -> Any:
        """A store of `items` in `spill`, `recent` decoded items kept for reads that come again."""
        file = _File(spill, codec, recent)
        for item in items:
            file.add(item)
        file.flush()
        return cls(file)

    def append(self, item: T) -> None:
        if self._indexes is not None:
            raise TypeError("a subset of a store is read-only")
        self._file.add(item)

    def flush(self) -> None:
        self._file.flush()

    def __len__(self) -> int:
        return len(self._indexes) if self._indexes is not None else len(self._file.ids)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        return self._file.get(self._indexes[index] if self._indexes is not None else index)

    @property
    def codec(self) -> Codec[T]:
        return self._file.codec

    def record(self, index: int) -> bytes:
        """Item `index`'s record as stored, for a reader that needs only part of it (not decoded, not kept)."""
        return self._file.raw(self._indexes[index] if self._indexes is not None else index)

    def ids(self) -> list[str]:
        """Every item's id, in order, without decoding any."""
        if self._indexes is None:
            return list(self._file.ids)
        return [self._file.ids[k] for k in self._indexes]

    def id_at(self, k: int) -> str:
        """The id of item k, without decoding it."""
        if k < 0:
            k += len(self)
        return self._file.ids[self._indexes[k] if self._indexes is not None else k]

    def subset(self, keep: Callable[[int, str], bool]) -> Any:
        """The items for which keep(position, id) holds, in order (nothing decoded); of this store's class."""
        ids = self._file.ids
        where = self._indexes if self._indexes is not None else range(len(ids))
        return type(self)(self._file, array("q", (k for n, k in enumerate(where) if keep(n, ids[k]))))


def item_ids(items: Sequence[Any], id_of: Callable[[Any], str] = lambda x: x.id) -> list[str]:
    """The ids of a list of items or a store (whose items are not decoded for it)."""
    return items.ids() if isinstance(items, ModelStore) else [id_of(x) for x in items]


def id_at(items: Sequence[Any], k: int) -> str:
    """`items[k].id`, without decoding the item of a store (the store's own string)."""
    if isinstance(items, ModelStore):
        return items.id_at(k)
    found: str = items[k].id
    return found


def keep_items(items: Sequence[T], keep: Callable[[int, str], bool],
               id_of: Callable[[Any], str] = lambda x: x.id) -> Sequence[T]:
    """`[x for n, x in enumerate(items) if keep(n, x.id)]`, a store's subset for a store."""
    if isinstance(items, ModelStore):
        subset: Sequence[T] = items.subset(keep)
        return subset
    return [x for n, x in enumerate(items) if keep(n, id_of(x))]


class Collector(Generic[T]):
    """What a streamed check appends its items to: a plain list up to `bound` items, past that a store
    (`make_store(items)`: the items held so far go to it first). `result()` is the model's list."""

    def __init__(self, bound: int, make_store: Callable[[list[T]], ModelStore[T]]) -> None:
        self.bound = max(1, bound)
        self._make_store = make_store
        self._held: list[T] = []
        self._store: ModelStore[T] | None = None

    def append(self, item: T) -> None:
        if self._store is not None:
            self._store.append(item)
            return
        self._held.append(item)
        if len(self._held) > self.bound:
            self._store = self._make_store(self._held)
            self._held = []

    def get(self, k: int) -> T:
        """The k-th item appended."""
        return self._store[k] if self._store is not None else self._held[k]

    def result(self) -> list[T] | ModelStore[T]:
        if self._store is not None:
            self._store.flush()
            return self._store
        return self._held
