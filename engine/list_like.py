"""A read-only sequence that behaves as a list does where a run compares or prints it: the plan's cells and
a file's items kept on disk both stand in for the lists they replaced."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar, TypeVar

T = TypeVar("T")


class ListLike(Sequence[T]):
    """Iteration by position, equality with any sequence of equal items (as a list's), no hash."""

    _unit: ClassVar[str] = "items"  # what __repr__ counts

    def __iter__(self) -> Iterator[T]:
        for k in range(len(self)):
            yield self[k]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self)} {self._unit}>"
