"""What a run's events say about the run as a whole: did any call get an answer?

A run in which every cell failed (no key for the only model, a gateway that is down, a replay file with
no answers) has measured nothing; `evalspec run` says so in one line with the cause and exits 3, rather
than printing `mean —` and exiting 0 as if the run had worked.
"""

from __future__ import annotations

from collections import Counter

from .events import CellFailed, Event, Response, Scored

_ANSWERED = (Response, Scored)  # a tuple: `Response | Scored` would be made at each event


class Outcome:
    """Fed every event of a run; `all_failed()` is the cause when no cell got an answer."""

    def __init__(self) -> None:
        self.answered = 0
        self.failures: dict[object, str] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, _ANSWERED):
            self.answered += 1
        elif isinstance(event, CellFailed) and event.kind != "not_run":  # a cost cap's cells were never tried
            # The same cause reads the same for every cell: the cell's model id is not part of it.
            model = getattr(event.cell, "model", "") or ""
            cause = event.error.replace(model, "<model>") if model else event.error
            self.failures[event.cell] = cause.removeprefix("Failed to get response for <model>: ")

    def all_failed(self) -> str | None:
        """One line naming the cause (the commonest error when they differ), or None."""
        if self.answered or not self.failures:
            return None
        counts = Counter(self.failures.values()).most_common()
        cause, n = counts[0]
        total = len(self.failures)
        if len(counts) == 1:
            return f"every call failed ({total} of {total} cells), nothing was scored: {cause}"
        return (f"every call failed ({total} of {total} cells, {len(counts)} different errors), nothing was "
                f"scored; the commonest ({n} cells): {cause}")
