"""model_store.py: records deflated a block at a time read back as they were stored, wherever they sit (a
closed block, one closed early by a flush, the records still waiting for theirs); a pass over every item
decodes each once and keeps none among the recent ones."""

from __future__ import annotations

import threading

import pytest

from evalspec import model_store
from evalspec.model_store import Collector, ModelStore
from evalspec.spill_file import MemorySpill, SpillFile


class _Codec:
    """Items are text; a record is its UTF-8 (each read a new str, as a store's items are new copies)."""

    def __init__(self) -> None:
        self.decoded = 0

    def encode(self, item: str) -> bytes:
        return item.encode("utf-8")

    def decode(self, data: bytes) -> str:
        self.decoded += 1
        return data.decode("utf-8")

    def id_of(self, item: str) -> str:
        return item.split(":", 1)[0]


def _items(n: int, size: int = 40) -> list[str]:
    return [f"i{k}:" + f"question {k}, what is the answer? " * (size // 30 + 1) for k in range(n)]


@pytest.mark.parametrize("spill", [MemorySpill, lambda: SpillFile(".evalspec-test-")])
def test_every_record_reads_back_across_blocks_flushes_and_waiting_ones(spill) -> None:  # type: ignore[no-untyped-def]
    items = _items(300)
    store: ModelStore[str] = ModelStore.of(items[:100], spill(), _Codec(), 1)  # flushed: a block of 36 closed early
    for item in items[100:290]:
        store.append(item)
    # 290 appended: blocks of 64 after the early one, the last records still waiting for their block
    assert store._file._pending  # (the test covers reads of waiting records)
    assert [store[k] for k in range(290)] == items[:290]
    assert [store[k] for k in reversed(range(290))] == list(reversed(items[:290]))  # each block inflated again
    for item in items[290:]:
        store.append(item)
    store.flush()
    assert not store._file._pending
    assert list(store) == items and store.ids() == [f"i{k}" for k in range(300)]
    assert [store.record(k) for k in (0, 63, 64, 150, 299)] == [items[k].encode() for k in (0, 63, 64, 150, 299)]
    subset = store.subset(lambda n, _: n % 7 == 3)
    assert list(subset) == items[3::7]


def test_a_pass_over_every_item_decodes_each_once_and_leaves_the_recent_ones_kept() -> None:
    """Planning reads every item once in order: each is decoded as it is reached (equal to what was stored)
    and not kept, so the items read just before (a cell's, kept for its next read) stay kept."""
    items = _items(200)
    codec = _Codec()
    store: ModelStore[str] = ModelStore.of(items, MemorySpill(), codec, 4)
    kept = [store[k] for k in (10, 11)]
    assert codec.decoded == 2
    assert list(store) == items and codec.decoded == 202
    assert [store[k] for k in (10, 11)] == kept and codec.decoded == 202  # still kept: not decoded again
    assert store[10] is kept[0]
    subset = store.subset(lambda n, _: n % 5 == 1)
    assert list(subset) == items[1::5] and codec.decoded == 202 + 40


def test_records_are_deflated_together_and_big_records_close_their_block_early(monkeypatch: pytest.MonkeyPatch) -> None:
    items = _items(1000)
    store: ModelStore[str] = ModelStore.of(items, MemorySpill(), _Codec(), 1)
    plain = sum(len(x.encode()) for x in items)
    assert store._file.stored_bytes() * 5 < plain  # records alike in all but a number share a block's deflate
    big = [f"b{k}:" + chr(0x4E00 + k) * 40_000 for k in range(5)]  # ~120 KB each: a block of its own
    monkeypatch.setattr(model_store._Blocks, "BLOCK_BYTES", 100_000)
    store2: ModelStore[str] = ModelStore.of([], MemorySpill(), _Codec(), 1)
    for item in big:
        store2.append(item)
    assert len(store2._file._block_first) == 5 and not store2._file._pending
    assert list(store2) == big


def test_a_collector_keeps_its_items_then_a_store_of_the_same_items() -> None:
    items = _items(150)
    collector: Collector[str] = Collector(20, lambda held: ModelStore.of(held, MemorySpill(), _Codec(), 4))
    for item in items:
        collector.append(item)
    assert [collector.get(k) for k in range(150)] == items
    result = collector.result()
    assert isinstance(result, ModelStore) and list(result) == items


def test_threads_reading_one_store_each_get_what_was_stored() -> None:
    items = _items(2000)
    store: ModelStore[str] = ModelStore.of(items, MemorySpill(), _Codec(), 2)
    wrong: list[int] = []

    def read(offset: int) -> None:
        for k in range(offset, 2000, 3):
            if store[k] != items[k]:
                wrong.append(k)

    threads = [threading.Thread(target=read, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_a_part_read_is_kept_apart_from_whole_items() -> None:
    """`part` decodes the record with the reader's own function (a subset's position mapped to the store's),
    keeps the last few read so apart from the whole items `get` keeps: neither read hands out the other's."""
    items = _items(100)
    codec = _Codec()
    store: ModelStore[str] = ModelStore.of(items, MemorySpill(), codec, 2)
    parts: list[bytes] = []

    def first_word(data: bytes) -> str:
        parts.append(data)
        return data.decode("utf-8").split(" ", 1)[0]

    subset = store.subset(lambda n, _: n % 10 == 0)
    assert subset.part(3, first_word) == "i30:question" and store.part(30, first_word) == "i30:question"
    assert len(parts) == 1 and codec.decoded == 0  # kept; no whole item decoded for it
    assert store[30] == items[30] and codec.decoded == 1  # the whole item: not the part kept
    assert store.part(30, first_word) == "i30:question" and len(parts) == 1
    for k in (40, 50):
        store.part(k, first_word)
    assert store.part(30, first_word) == "i30:question" and len(parts) == 4  # two kept: read again
