"""What the server keeps per document about its runs: the engine's RunBoard and the task running."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from evalspec.ide.runs import RunBoard


@dataclass(eq=False)
class DocumentRuns:
    board: RunBoard = field(default_factory=RunBoard)
    task: asyncio.Task[None] | None = None
    files: list[str] = field(default_factory=list)  # result files of the last finished run

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()
