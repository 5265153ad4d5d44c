"""`--prompt` / `--test` selection: ids matched against globs (`p1`, `safety-*`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase


def selected(item_id: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(fnmatchcase(item_id, p) for p in patterns)


def unmatched(patterns: Sequence[str], ids: Iterable[str]) -> list[str]:
    """Patterns that select nothing (a typo the user should hear about)."""
    ids = list(ids)
    return [p for p in patterns if not any(fnmatchcase(i, p) for i in ids)]
