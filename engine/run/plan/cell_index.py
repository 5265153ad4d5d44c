"""Each cell's place in a plan's tasks, and per-cell numbers kept in arrays by that place.

A run keeps a few numbers per cell until it ends: its score (weval_stages.py), where its results wait on
disk (write/cell_store.py), where its batch answers wait (generate/waiting_answers.py). As dicts keyed by
the cell each was ~80 bytes a cell (the dict's entry and an int or float object): ~16 MB each at the
200,000 cells of a 100,000-prompt blueprint with two models. Here they are 8 bytes a cell in an array,
found through one `CellIndex`.

A Weval plan's tasks come prompt by prompt, each prompt with the same effective models in the same order
(plan/weval.py; a shard keeps whole prompts), so the index is a dict of the prompts' first places and
one of the models' offsets (~85 bytes a prompt, not a cell). A plan laid out otherwise (a replay's
models differ per prompt) is indexed cell by cell.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

from ..events import Cell

Key = tuple[str, str]  # a Cell, or the same (item, model) as a plain tuple


class CellIndex:
    def __init__(self, tasks: Sequence[Any]) -> None:
        """`tasks`: the plan's tasks (each with a `cell`)."""
        self._tasks = tasks
        self.cell = _cell_reader(tasks)  # cell(n): the cell of task n
        self._first: dict[str, int] | None = None  # item → its first cell's place
        self._offsets: dict[str, int] = {}  # model → its place among an item's cells
        self._where: dict[Key, int] | None = None  # the plan not laid out item by item: each cell's place
        if not self._regular():
            self._first = None
            self._where = {self.cell(n): n for n in range(len(tasks))}

    def _regular(self) -> bool:
        cell_at = self.cell
        n = len(self._tasks)
        if not n:
            self._first = {}
            return True
        item = cell_at(0).item
        width = 0
        while width < n and cell_at(width).item == item:
            model = cell_at(width).model
            if model in self._offsets:
                return False
            self._offsets[model] = width
            width += 1
        if n % width:
            return False
        models = list(self._offsets)
        first: dict[str, int] = {}
        for start in range(0, n, width):
            item = cell_at(start).item
            if item in first:
                return False
            for j in range(width):
                cell = cell_at(start + j)
                if cell.item != item or cell.model != models[j]:
                    return False
            first[item] = start
        self._first = first
        return True

    def __len__(self) -> int:
        return len(self._tasks)

    def get(self, cell: Key) -> int | None:
        """The cell's place in the tasks, None for a cell the plan does not have."""
        if self._first is not None:
            start = self._first.get(cell[0])
            if start is None:
                return None
            offset = self._offsets.get(cell[1])
            return None if offset is None else start + offset
        assert self._where is not None
        return self._where.get(cell)

    def item_positions(self) -> Mapping[str, int] | None:
        """Each item's position among the plan's items (its tasks' `index`), read from this index (a dict
        of them was ~8 MB at 100,000 prompts, made again to write the results); None for a plan not laid
        out item by item."""
        return _ItemPositions(self._first, self._tasks) if self._first is not None else None


def _cell_reader(tasks: Sequence[Any]) -> Callable[[int], Cell]:
    """What reads task n's cell: the plan's list of cells (WevalTasks), its cell without a task
    (AgentvTasks), else the task's; a task is made each time one of those is read."""
    cells = getattr(tasks, "cells", None)
    if cells is not None:
        found: Callable[[int], Cell] = cells().__getitem__
        return found
    cell_at = getattr(tasks, "cell_at", None)
    if cell_at is not None:
        at: Callable[[int], Cell] = cell_at
        return at
    return lambda n: tasks[n].cell


class _ItemPositions(Mapping[str, int]):
    def __init__(self, first: dict[str, int], tasks: Sequence[Any]) -> None:
        self._first = first
        self._tasks = tasks

    def __getitem__(self, item: str) -> int:
        at = getattr(self._tasks, "prompt_index", None)  # WevalTasks: without making the task
        found: int = at(self._first[item]) if at is not None else self._tasks[self._first[item]].index
        return found

    def __contains__(self, item: object) -> bool:
        return item in self._first

    def __iter__(self) -> Iterator[str]:
        return iter(self._first)

    def __len__(self) -> int:
        return len(self._first)


class CellOffsets(MutableMapping[Key, int]):
    """A dict of cell → non-negative int (an offset and size on disk), as an array by the cell's place;
    a key the index does not have (a key-point extraction's cell) goes to a dict beside."""

    def __init__(self, index: CellIndex) -> None:
        self._index = index
        self._values = array("Q", bytes(8 * len(index)))  # the value + 1; 0: no value
        self._count = 0
        self._other: dict[Key, int] = {}

    def get(self, key: Key, default: Any = None) -> Any:
        n = self._index.get(key)
        if n is None:
            return self._other.get(key, default)
        value = self._values[n]
        return value - 1 if value else default

    def __getitem__(self, key: Key) -> int:
        value: int | None = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self.get(key) is not None

    def __setitem__(self, key: Key, value: int) -> None:
        n = self._index.get(key)
        if n is None:
            self._other[key] = value
            return
        if not self._values[n]:
            self._count += 1
        self._values[n] = value + 1

    def __delitem__(self, key: Key) -> None:
        n = self._index.get(key)
        if n is None:
            del self._other[key]
        elif not self._values[n]:
            raise KeyError(key)
        else:
            self._values[n] = 0
            self._count -= 1

    def __len__(self) -> int:
        return self._count + len(self._other)

    def __iter__(self) -> Iterator[Key]:
        """The keys with a value: the plan's cells in its order, then the others."""
        values = self._values
        for n in range(len(values)):
            if values[n]:
                yield self._index.cell(n)
        yield from list(self._other)

    def clear(self) -> None:
        self._values = array("Q", bytes(8 * len(self._index)))
        self._count = 0
        self._other.clear()


_UNSET, _NONE, _SET = 0, 1, 2


class CellScores:
    """A dict of cell → score (a float or None: not scored) for the plan's cells, as an array by place."""

    def __init__(self, index: CellIndex) -> None:
        self._index = index
        self._scores = array("d", bytes(8 * len(index)))
        self._state = bytearray(len(index))

    def _place(self, cell: Key) -> int:
        n = self._index.get(cell)
        if n is None:
            raise KeyError(cell)
        return n

    def __setitem__(self, cell: Key, score: float | None) -> None:
        n = self._place(cell)
        if score is None:
            self._state[n] = _NONE
        else:
            self._state[n] = _SET
            self._scores[n] = score

    def __getitem__(self, cell: Key) -> float | None:
        n = self._place(cell)
        state = self._state[n]
        if state == _UNSET:
            raise KeyError(cell)
        return self._scores[n] if state == _SET else None

    def __contains__(self, cell: object) -> bool:
        if not (isinstance(cell, tuple) and len(cell) == 2):
            return False
        n = self._index.get(cell)
        return n is not None and self._state[n] != _UNSET

    def get(self, cell: Key, default: Any = None) -> Any:
        """The cell's score (None: not scored), `default` when none was set (one lookup, not two)."""
        n = self._index.get(cell)
        if n is None:
            return default
        state = self._state[n]
        if state == _UNSET:
            return default
        return self._scores[n] if state == _SET else None

    def __len__(self) -> int:
        return len(self._state) - self._state.count(_UNSET)
