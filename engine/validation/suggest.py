"""'Did you mean …?': the closest known name to a misspelt one."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _folded(name: str) -> str:
    """Compare names without case, `-`/`_` or camelCase differences."""
    return _CAMEL.sub("_", name).lower().replace("-", "_")


def closest(name: str, candidates: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The best candidate for `name`, or None when nothing is close enough to be a useful hint."""
    pool = [c for c in dict.fromkeys(candidates) if c != name]
    folded = _folded(name)
    for c in pool:
        if _folded(c) == folded:
            return c
    by_fold = {_folded(c): c for c in pool}
    match = difflib.get_close_matches(folded, list(by_fold), n=1, cutoff=cutoff)
    if match:
        return by_fold[match[0]]
    # A short prefix typed so far ("shou") is still worth naming.
    starts = [c for c in pool if len(name) >= 3 and _folded(c).startswith(folded)]
    return starts[0] if len(starts) == 1 else None

