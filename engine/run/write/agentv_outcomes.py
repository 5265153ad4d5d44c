"""How each cell of an AgentV run ended, for the run's summary: a few bytes a cell, by its place in the plan.

The summary counts, per target, the cells scored, their mean score, their verdicts, the cells that
failed and those a cost cap kept from starting, and names the cells with checks not scored. Held as a
dict of Cells and two sets, that was ~200 bytes a cell for the whole run (20 MB at 100,000 cells); here
it is 10 bytes a cell in arrays indexed by `AgentvTask.position`.
"""

from __future__ import annotations

import math
from array import array

NONE, SCORED, FAILED, NOT_RUN = 0, 1, 2, 3  # how a cell ended (NOT_RUN: a cost cap; it counts as failed too)


class CellOutcomes:
    def __init__(self, cells: int) -> None:
        self._kind = array("b", [NONE]) * cells
        self._verdict = array("b", [0]) * cells  # an index in _verdicts
        self._score = array("d", [math.nan]) * cells  # NaN: no score
        self._unscored = array("b", [0]) * cells  # a row listing checks not scored (not an execution error)
        self._verdicts: list[str | None] = [None]

    def scored(self, n: int, score: float | None, verdict: str | None) -> None:
        self._kind[n] = SCORED
        self._score[n] = math.nan if score is None else score
        if verdict not in self._verdicts:
            self._verdicts.append(verdict)
        self._verdict[n] = self._verdicts.index(verdict)

    def failed(self, n: int, *, not_run: bool = False) -> None:
        self._kind[n] = NOT_RUN if not_run else FAILED

    def noted(self, n: int, unscored: bool) -> None:
        """Whether cell n's row lists checks not scored (and is not an execution error)."""
        self._unscored[n] = unscored

    def kind(self, n: int) -> int:
        return self._kind[n]

    def score(self, n: int) -> float | None:
        """Cell n's score, None when it has none (not scored, or it failed)."""
        value = self._score[n]
        return None if self._kind[n] != SCORED or math.isnan(value) else value

    def verdict(self, n: int) -> str | None:
        return self._verdicts[self._verdict[n]] if self._kind[n] == SCORED else None

    def unscored(self, n: int) -> bool:
        return bool(self._unscored[n])
