"""Batch mode for the calls a cell can only name while it runs: AgentV judges and trials after the first.

The answer phases of generate/batch_stage.py need every request known before the cells run. An AgentV judge's
request holds the cell's answer and the judge's prompt (a template file, a prompt script), an llm-judge
aggregator's holds its children's results, and a trial after the first is asked only when the one
before did not stop the test (pass_at_k stops at the first pass): the cell has to run to know them. So in
batch mode the cells run, and each such call joins the next *round* instead of being sent: when every
running cell waits on the round (or nothing has changed for QUIET seconds), the round goes out through a
BatchStage (its custom_id → cell mapping journaled before anything is sent, its batch ids as creation
returns them, resumed from the journal by `--resume`; whatever a batch does not answer goes the
interactive way with its retries) and the cells carry on with the answers. The same request, the same
answer, read by the same code: the results are an interactive run's.

A cell takes part only once registered (`enter`): the runner leaves out the cells it must not hold
waiting (a test in a workspace, whose folder or turn it holds), and their calls go one by one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Container
from typing import TYPE_CHECKING

from ...providers.base import ChatResult
from ..events import Cell, Event

if TYPE_CHECKING:
    from .batch_stage import BatchRequest, BatchStage, Slot

# Seconds without a change (a cell starting, ending or asking) after which a round goes out although
# some running cell does not wait on it (one busy with a long interactive call or a script).
QUIET = 2.0
# Seconds without a change, once every running cell waits on the round, before it goes out.
SETTLE = 0.02


class BatchRounds:
    def __init__(self, make_stage: Callable[[], BatchStage], emit: Callable[[Event], None],
                 journaled: Container[Slot]) -> None:
        self._make_stage = make_stage
        self._emit = emit
        self.journaled = journaled  # the calls an earlier run of the journal put in a batch
        self._live: set[Cell] = set()
        self._waiting: dict[Cell, int] = {}  # cell → its calls queued for the next round (not the one out)
        self._queued: dict[Slot, BatchRequest] = {}
        self._next: asyncio.Future[BatchStage] | None = None
        self._sending: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.rounds = 0
        self._version = 0  # changes so far: a timer set before the last one is stale

    # --- the cells --------------------------------------------------------------------------------
    def enter(self, cell: Cell) -> None:
        self._live.add(cell)
        self._changed()

    def leave(self, cell: Cell) -> None:
        self._live.discard(cell)
        self._changed()

    def takes_part(self, cell: Cell) -> bool:
        return cell in self._live

    async def ask(self, request: BatchRequest, *, purpose: str = "generate", label: str = "") -> ChatResult | None:
        """The answer to `request` from the next round's batches; None when the call is to be made
        interactively (the cell takes no part, the model is not batched, or its batch did not answer).
        Raises the ProviderError the interactive call would have raised for the same answer."""
        cell, slot = request.cell, (request.cell, request.turn)
        if cell not in self._live or not (request.submit or slot in self.journaled):
            return None
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        round_ = self._next
        self._queued[slot] = request
        self._waiting[cell] = self._waiting.get(cell, 0) + 1
        self._changed()
        # Shielded: a cancelled cell must not cancel the round the other cells wait on.
        stage = await asyncio.shield(round_)
        return stage.take(cell, request.turn, purpose=purpose, label=label)

    # --- the rounds -------------------------------------------------------------------------------
    def _changed(self) -> None:
        self._version += 1
        if self._sending is not None or not self._queued:
            return
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        if self._live and all(c in self._waiting for c in self._live):
            # Every cell waits; the other branches of a cell's assertions (scored side by side) are about
            # to ask too: the round goes once nothing has changed for SETTLE.
            self._timer = loop.call_later(SETTLE, self._settled, self._version)
        else:
            self._timer = loop.call_later(QUIET, self._settled, self._version)

    def _settled(self, version: int) -> None:
        self._timer = None
        if version == self._version and self._sending is None and self._queued:
            self._send()

    def _send(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        requests, self._queued, self._waiting = list(self._queued.values()), {}, {}
        round_, self._next = self._next, None
        assert round_ is not None
        self.rounds += 1
        self._sending = asyncio.ensure_future(self._run(requests, round_))

    async def _run(self, requests: list[BatchRequest], round_: asyncio.Future[BatchStage]) -> None:
        stage = self._make_stage()
        try:
            async for event in stage.run(requests):
                self._emit(event)
        except asyncio.CancelledError:
            round_.cancel()
            raise
        except BaseException as exc:  # a bug: the cells waiting on the round fail with it
            round_.set_exception(exc)
        else:
            round_.set_result(stage)
        finally:
            self._sending = None
        self._changed()  # the calls queued meanwhile

    async def close(self) -> None:
        """The run stopped: no round is sent any more (the batches already created keep running for
        `--resume`, or are cancelled by the CLI)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task, self._sending = self._sending, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._queued = {}
