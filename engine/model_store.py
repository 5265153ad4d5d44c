"""A big file's items (Weval prompts, AgentV tests) in memory that does not grow with the file.

When a streamed check (`check` and `run`) has made more than its bound of items, each becomes a compact
record (the format's `Codec`: `weval/prompt_store.py`, kept in memory; `agentv/test_store.py`, in a
temporary file), deflated a block of records at a time: only the ids and each record's offset are objects,
and an item is decoded again when it is read (its block inflated; the last few blocks are kept so). A file
with fewer items keeps its plain list (the editor's analyses always do).

A `ModelStore` reads like the list it stands for (len, iteration, indexes); `subset` keeps some of the
items (a run's selection, a shard) without decoding any. Each read decodes a new copy, equal to the item
that was stored (a few recent ones are kept, so a cell that reads its item several times decodes it
once); an item is never changed after it is stored, like every model an analysis hands out.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar, overload

from .list_like import ListLike
from .spill_file import MemorySpill, SpillFile

T = TypeVar("T")


class Codec(Protocol[T]):
    """How a format's items become records and back, and what identifies one."""

    def encode(self, item: T) -> bytes: ...

    def decode(self, data: bytes) -> T: ...

    def id_of(self, item: T) -> str: ...


class _Blocks:
    """Records deflated a block at a time: up to BLOCK_RECORDS of them, or BLOCK_BYTES, joined, deflated
    against the first record of the store (a file's items share their keys and much of their text: a
    block of 64 Weval prompts of ~570 bytes each packs into ~50 bytes a prompt). One deflate per block,
    not per record: making a compressor cost more than compressing one record."""

    BLOCK_RECORDS = 64
    BLOCK_BYTES = 64 * 1024

    def __init__(self) -> None:
        self._dictionary = b""

    def pack(self, records: list[bytes]) -> bytes:
        if not self._dictionary:
            self._dictionary = records[0][-32768:]
        out = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, self._dictionary)
        return out.compress(b"".join(records)) + out.flush()

    def unpack(self, data: bytes) -> bytes:
        out = zlib.decompressobj(-15, zdict=self._dictionary)
        return out.decompress(data) + out.flush()


class _File(Generic[T]):
    """The records of one store and its subsets (an unlinked temporary file, or memory), and their offsets:
    record k is bytes starts[k]:starts[k+1] of the records one after another; they are written a block at a
    time (`_Blocks`), the last ones wait in `_pending` until their block is full (or the store flushed)."""

    def __init__(self, spill: SpillFile | MemorySpill, codec: Codec[T], recent: int) -> None:
        self._spill = spill
        self.codec = codec
        self.starts = array("q")  # record k is bytes starts[k]:starts[k+1] of the records, inflated
        self.starts.append(0)
        self.ids: list[str] = []
        self._blocks = _Blocks()
        self._block_first = array("q")  # block b holds records _block_first[b]… (to the next block's first)
        self._block_at = array("q")  # block b is bytes _block_at[b]:_block_at[b+1] of the spill
        self._block_at.append(0)
        self._pending: list[bytes] = []  # the records from _pending_first on, not yet in a block
        self._pending_first = 0
        self._pending_bytes = 0
        self._inflated: OrderedDict[int, bytes] = OrderedDict()  # the last blocks read, inflated
        self._recent: OrderedDict[int, T] = OrderedDict()  # popitem(last=False): a dict's first key is
        # found by skipping the slots its deletions left
        self._recent_parts: OrderedDict[int, Any] = OrderedDict()  # the last items read in part (`part`)
        self._keep = max(1, recent)
        self._lock = threading.Lock()  # the runner's worker threads (judges, scripts) read items too

    INFLATED = 4  # blocks kept inflated (the cells in flight read a block or two of records, in order)

    def add(self, item: T) -> None:
        self.add_encoded(self.codec.encode(item), self.codec.id_of(item))

    def add_encoded(self, data: bytes, item_id: str) -> None:
        self._pending.append(data)
        self._pending_bytes += len(data)
        self.starts.append(self.starts[-1] + len(data))
        self.ids.append(item_id)
        if len(self._pending) >= _Blocks.BLOCK_RECORDS or self._pending_bytes >= _Blocks.BLOCK_BYTES:
            self._close_block()

    def _close_block(self) -> None:
        if not self._pending:
            return
        packed = self._blocks.pack(self._pending)
        self._spill.append(packed)
        self._block_first.append(self._pending_first)
        self._block_at.append(self._block_at[-1] + len(packed))
        self._pending_first += len(self._pending)
        self._pending, self._pending_bytes = [], 0

    def flush(self) -> None:
        self._close_block()
        self._spill.flush()

    def get(self, k: int) -> T:
        with self._lock:
            found = self._recent.get(k)
            if found is not None:
                return found
            item = self.codec.decode(self._raw(k))
            if len(self._recent) >= self._keep:
                self._recent.popitem(last=False)
            self._recent[k] = item
            return item

    def part(self, k: int, decode: Callable[[bytes], Any]) -> Any:
        """Item k as `decode` reads part of its record (the store's one partial reading, the same `decode` each
        time), kept among the recent ones read so, apart from the whole items `get` keeps."""
        with self._lock:
            found = self._recent_parts.get(k)
            if found is not None:
                return found
            item = decode(self._raw(k))
            if len(self._recent_parts) >= self._keep:
                self._recent_parts.popitem(last=False)
            self._recent_parts[k] = item
            return item

    def raw(self, k: int) -> bytes:
        """Record k as encoded (not decoded, not kept)."""
        with self._lock:
            return self._raw(k)

    def decoded(self, k: int) -> T:
        """Item k decoded, not kept among the recent ones (`get` keeps it)."""
        with self._lock:
            data = self._raw(k)
        return self.codec.decode(data)

    def _raw(self, k: int) -> bytes:
        if k >= self._pending_first:
            return self._pending[k - self._pending_first]
        b = bisect_right(self._block_first, k) - 1
        block = self._inflated.get(b)
        if block is None:
            start, end = self._block_at[b], self._block_at[b + 1]
            block = self._blocks.unpack(self._spill.read(start, end - start))
            if len(self._inflated) >= self.INFLATED:
                self._inflated.popitem(last=False)
            self._inflated[b] = block
        at = self.starts[self._block_first[b]]
        return block[self.starts[k] - at:self.starts[k + 1] - at]

    def stored_bytes(self) -> int:
        """Bytes the records take as stored: their blocks, and those waiting for theirs."""
        return self._block_at[-1] + self._pending_bytes

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

    def append_encoded(self, data: bytes, item_id: str) -> None:
        """An item as its codec's record (`Codec.encode`'s, made by another process)."""
        if self._indexes is not None:
            raise TypeError("a subset of a store is read-only")
        self._file.add_encoded(data, item_id)

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

    def __iter__(self) -> Iterator[T]:
        """Every item in order, each decoded as it is reached and not kept among the recent ones: a pass
        over all of them (planning a run) would only push out of them the items the cells in flight read
        again, for an ordered dict's insert and eviction per item."""
        decoded = self._file.decoded
        for k in (self._indexes if self._indexes is not None else range(len(self._file.ids))):
            yield decoded(k)

    @property
    def codec(self) -> Codec[T]:
        return self._file.codec

    def part(self, index: int, decode: Callable[[bytes], Any]) -> Any:
        """Item `index` as `decode` reads the part of its record a reader needs, a few recent ones kept (the
        store's one partial reading: `decode` the same each time)."""
        return self._file.part(self._indexes[index] if self._indexes is not None else index, decode)

    def record(self, index: int) -> bytes:
        """Item `index`'s record as its codec encoded it, for a reader that needs only part of it (not
        decoded, not kept)."""
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

    def __init__(self, bound: int, make_store: Callable[[list[T]], ModelStore[T]],
                 decode: Callable[[bytes], T] | None = None) -> None:
        self.bound = max(1, bound)
        self._make_store = make_store
        self._decode = decode  # a record back into its item (`append_encoded` below the bound)
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

    def append_encoded(self, data: bytes, item_id: str) -> None:
        """An item as its codec's record (made by another process): kept so past the bound, decoded below it."""
        if self._store is not None:
            self._store.append_encoded(data, item_id)
        else:
            assert self._decode is not None, "a collector of records made without their decoder"
            self.append(self._decode(data))

    def get(self, k: int) -> T:
        """The k-th item appended."""
        return self._store[k] if self._store is not None else self._held[k]

    def result(self) -> list[T] | ModelStore[T]:
        if self._store is not None:
            self._store.flush()
            return self._store
        return self._held
