"""What the server keeps per document about its runs: the engine's RunBoard and the task running."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from evalspec.ide.runs import RunBoard, RunItem


@dataclass(eq=False)
class DocumentRuns:
    board: RunBoard = field(default_factory=RunBoard)
    task: asyncio.Task[None] | None = None
    files: list[str] = field(default_factory=list)  # result files of the last run
    items: list[RunItem] = field(default_factory=list)  # as last analysed: to follow renamed ids
    generation: int = 0  # bumped whenever the board changes (the worker's copy is replaced then)
    restored: bool = False  # earlier runs' results were looked for on disk
    restore_tries: int = 0  # looks that got no answer (run.py asks again, a few times)
    planning: bool = False  # the task is planning the run: the board still shows the last one

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()
