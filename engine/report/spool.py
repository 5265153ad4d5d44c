"""A big comparison file's per-prompt entries on disk while its report is made, and the prompts and
cells the report model reads from them.

A comparison file keeps each kind of per-prompt data in its own map (contexts, answers, histories,
coverage, errors), so a cell can only be made once every map has been read. Each entry is written as it
is read (marshal: every JSON value, NaN and huge numbers included, comes back as it was) to an unlinked
temporary file, with only offsets in memory, and the report model's `items` and `cells` are views that
make an item or a cell from them when it is read (`SpooledItems`, `SpooledCells`). The page and the
summaries read the cells a prompt at a time, in order; the last prompt's entries are kept for the
models after the first. A big AgentV results file's rows are spooled the same way, as their lines
(`put_bytes`: each parsed again when its cell is made, report/sources.py).
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from ..spill_file import SpillFile
from .model import CellResult, Item

MISSING: Any = object()


class EntrySpool:
    """Values by (map name, prompt id), on an unlinked temporary file; a later value of the same key
    replaces the earlier one (as in the dict it stands for)."""

    def __init__(self) -> None:
        self._file = SpillFile(".evalspec-report-")
        self.ids: dict[str, int] = {}  # prompt id → its number (one string per id, shared by every map)
        self._where: dict[str, tuple[array, array]] = {}  # map name → (starts, sizes) by prompt number

    def number(self, pid: str) -> int:
        n = self.ids.get(pid)
        if n is None:
            n = self.ids[pid] = len(self.ids)
        return n

    def put(self, name: str, pid: str, value: Any) -> None:
        self.put_bytes(name, pid, marshal.dumps(value))

    def put_bytes(self, name: str, pid: str, data: bytes) -> None:
        """`put` of bytes as they are (`get_bytes` gives them back): a value its reader decodes itself."""
        n = self.number(pid)
        where = self._where.get(name)
        if where is None:
            where = self._where[name] = (array("q"), array("q"))
        starts, sizes = where
        if len(starts) <= n:
            grow = n + 1 - len(starts)
            starts.extend([-1] * grow)
            sizes.extend([0] * grow)
        starts[n] = self._file.append(data)
        sizes[n] = len(data)

    def flush(self) -> None:
        self._file.flush()

    def drop(self, name: str) -> None:
        """Forget a map's values (the file holds it again, or it is not a map after all)."""
        self._where.pop(name, None)

    def has(self, name: str, pid: str) -> bool:
        """Whether the map holds a value for the prompt (nothing is read)."""
        n = self.ids.get(pid)
        where = self._where.get(name)
        return n is not None and where is not None and n < len(where[0]) and where[0][n] >= 0

    def get(self, name: str, pid: str) -> Any:
        """The value, or MISSING."""
        data = self.get_bytes(name, pid)
        return MISSING if data is None else marshal.loads(data)

    def get_bytes(self, name: str, pid: str) -> bytes | None:
        """The bytes stored (`put_bytes`), or None."""
        n = self.ids.get(pid)
        where = self._where.get(name)
        if n is None or where is None or n >= len(where[0]) or where[0][n] < 0:
            return None
        return self._file.read(where[0][n], where[1][n])

    def close(self) -> None:
        self._file.close()


class SpooledItems(Sequence[Item]):
    """The report's prompts, each made from the spool when read."""

    def __init__(self, ids: list[str], make: Callable[[str], Item]) -> None:
        self._ids = ids
        self._make = make

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice):
            return [self._make(pid) for pid in self._ids[index]]
        return self._make(self._ids[index])

    def __iter__(self) -> Iterator[Item]:
        for pid in self._ids:
            yield self._make(pid)

    def ids(self) -> list[str]:
        return self._ids

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class SpooledCells(Mapping[tuple[str, str], CellResult]):
    """(item id, model) → the cell, made from the spool when read (`make(item, model)`), with the
    tokens and durations the run's journal adds (`add_usage`, summed in the journal's order, as they
    would be on the cell)."""

    def __init__(self, item_ids: list[str], models: list[str], make: Callable[[str, str], CellResult],
                 numbers: dict[str, int] | None = None) -> None:
        """`numbers`: the spool's prompt numbers, used as the items' positions when they are (the spool
        numbers the config's prompts first, in order): one dict of 100,000 ids less."""
        if numbers is None or any(numbers.get(pid) != n for n, pid in enumerate(item_ids)):
            numbers = {pid: n for n, pid in enumerate(item_ids)}
        self._items = numbers  # may hold more ids, numbered after these
        self._item_ids = item_ids
        self._models = {m: n for n, m in enumerate(models)}
        self._make = make
        # per cell: tokens in, tokens out, duration, cost (lists, so each sum keeps its type: ints stay ints)
        self._usage: tuple[list[Any], list[Any], list[Any], list[Any]] | None = None

    def _index(self, key: tuple[str, str]) -> int | None:
        if not isinstance(key, tuple) or len(key) != 2:
            return None
        n, m = self._items.get(key[0]), self._models.get(key[1])
        if n is None or m is None or n >= len(self._item_ids):
            return None
        return n * len(self._models) + m

    def __getitem__(self, key: tuple[str, str]) -> CellResult:
        k = self._index(key)
        if k is None:
            raise KeyError(key)
        cell = self._make(*key)
        if self._usage is not None:
            tin, tout, ms, cost = self._usage
            if tin[k] is not None:
                cell.tokens_in = tin[k]
            if tout[k] is not None:
                cell.tokens_out = tout[k]
            if ms[k] is not None:
                cell.duration_ms = ms[k]
            if cost[k] is not None:
                cell.cost_usd = cost[k]
        return cell

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for pid in self._item_ids:
            for m in self._models:
                yield (pid, m)

    def __len__(self) -> int:
        return len(self._item_ids) * len(self._models)

    def __contains__(self, key: object) -> bool:
        return self._index(key) is not None  # type: ignore[arg-type]

    def add_usage(self, item: str, model: str, tokens: Any, ms: Any, cost: Any) -> None:
        """One journal record's usage, summed as sources._add_usage sums it on a cell."""
        k = self._index((item, model))
        if k is None:
            return
        if self._usage is None:
            size = len(self)
            self._usage = ([None] * size, [None] * size, [None] * size, [None] * size)
        tin, tout, ms_, cost_ = self._usage
        if tokens is not None:
            tin[k] = (tin[k] or 0) + tokens[0]
            tout[k] = (tout[k] or 0) + tokens[1]
        if ms is not None:
            ms_[k] = (ms_[k] or 0.0) + ms
        if cost is not None:
            cost_[k] = (cost_[k] or 0.0) + cost
