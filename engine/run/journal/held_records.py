"""Journal records held back so that what belongs together goes out in one write.

A Weval cell's generated turn waits for its score (or the next await: another turn, a judge), and a
call's usage record for the answer or judgement it paid for: nothing else can happen in between, so
nothing received can be lost by waiting, and a cell costs one journal write instead of several.
"""

from __future__ import annotations

from .records import Record
from .run_store import Journal


class HeldRecords:
    def __init__(self) -> None:
        self.journal: Journal | None = None  # set once the pipeline has opened it
        self._records: list[Record] = []

    def hold(self, record: Record) -> None:
        self._records.append(record)

    def flush(self) -> None:
        """Write what is held, in the order it came."""
        if self._records and self.journal is not None:
            self.journal.write(*self._records)
            self._records = []
