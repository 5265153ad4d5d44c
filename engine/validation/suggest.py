"""'Did you mean …?': the closest known name to a misspelt one."""

from __future__ import annotations

import contextvars
import difflib
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _folded(name: str) -> str:
    """Compare names without case, `-`/`_` or camelCase differences."""
    return _CAMEL.sub("_", name).lower().replace("-", "_")


@lru_cache(maxsize=256)
def _folded_pool(candidates: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(candidate, folded) without repeats: folded once per list of names, since a file with 100,000
    unknown keys asks about the same list every time."""
    return tuple((c, _folded(c)) for c in dict.fromkeys(candidates))


# Searches one analysis may make (see `searches_limited`): [how many are left], or None for no limit.
_left: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("evalspec_suggestions_left", default=None)
SEARCHES_PER_ANALYSIS = 5000


@contextmanager
def searches_limited(n: int = SEARCHES_PER_ANALYSIS) -> Iterator[None]:
    """At most `n` searches in this block (one analysis), then no more hints: a 4 MB file of 400,000
    unknown keys spent over a minute on them, and past the first thousand of a kind its findings are
    not shown (analysis.capped)."""
    token = _left.set([n])
    try:
        yield
    finally:
        _left.reset(token)


def closest(name: str, candidates: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The best candidate for `name`, or None when nothing is close enough to be a useful hint (or
    the analysis has made its searches)."""
    left = _left.get()
    if left is not None:
        if left[0] <= 0:
            return None
        left[0] -= 1
    return _closest(name, tuple(candidates), cutoff)


@lru_cache(maxsize=4096)  # the same wrong value repeated (a model id in 100,000 places) is asked once
def _closest(name: str, candidates: tuple[str, ...], cutoff: float) -> str | None:
    pool = [(c, f) for c, f in _folded_pool(candidates) if c != name]
    folded = _folded(name)
    for c, f in pool:
        if f == folded:
            return c
    by_fold = {f: c for c, f in pool}
    match = difflib.get_close_matches(folded, list(by_fold), n=1, cutoff=cutoff)
    if match:
        return by_fold[match[0]]
    # A short prefix typed so far ("shou") is still worth naming.
    starts = [c for c, f in pool if len(name) >= 3 and f.startswith(folded)]
    return starts[0] if len(starts) == 1 else None
