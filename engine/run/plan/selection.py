"""`--prompt` / `--test` selection: ids matched against globs (`p1`, `safety-*`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase


def _matches(item_id: str, pattern: str) -> bool:
    # An exact id always selects itself, even one with glob characters (`case[1]`): a run lens asks
    # for one prompt by its id.
    return item_id == pattern or fnmatchcase(item_id, pattern)


def selected(item_id: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(_matches(item_id, p) for p in patterns)


def unmatched(patterns: Sequence[str], ids: Iterable[str]) -> list[str]:
    """Patterns that select nothing (a typo the user should hear about)."""
    ids = list(ids)
    return [p for p in patterns if not any(_matches(i, p) for i in ids)]
