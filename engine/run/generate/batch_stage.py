"""Batch mode: a run's generation calls sent through the providers' batch APIs, before the cells run.

The runner lists the calls it is about to make (`BatchRequest`: the very ChatRequest its interactive
path would send); this stage groups them by model, splits them under the provider's limits, journals
each part's `custom_id` → cell mapping before anything is sent and each batch id the moment the
provider returns it (generate/batch_journal.py), polls until every batch has ended and turns each answer into a
ChatResult with the chat provider's own parser. The answers wait on disk (generate/waiting_answers.py) and
what the stage keeps of a request once encoded is its part's item (cell and turn, shared objects) and
its shape's number, so memory does not grow with the run's requests. The cells then run as usual and
`take()` hands them their answer instead of a call; whatever a batch did not answer (an errored or expired item, a
cancelled or failed batch, a model without a batch API) goes through the interactive path with its
retries, so the result files are the ones an interactive run writes.

A resumed run (`--resume`) polls the batches its journal names and never sends their requests again;
a part planned but without a journaled id (killed while creating it) is looked for at the provider
first (`BatchAPI.find`). A part's key is its content (`NewPart.key`: run label, phase, model, the
requests as sent), and a resumed run makes the parts its journal does not hold exactly as the first run
did (`Outgoing.skip`), so a part a damaged journal lost entirely is looked up by its key too before it
is sent (`_lookup`; Anthropic, whose batches keep no key, by the tag in its results' custom ids).
"""

from __future__ import annotations

import asyncio
import dataclasses
import fnmatch
import sys
import time
from array import array
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ...batch import BatchAPI, BatchStatus, Limits, PartFile, batch_api_for, http_provider
from ...providers.base import BAD_RESPONSE, ChatRequest, ChatResult, Provider, ProviderError
from ...providers.cache import CachedProvider
from ...providers.retry import retry_call
from ..events import BatchProgress, Cell, Event, Notice
from ..journal.records import BatchCreated, BatchEnded, BatchFileUploaded
from ..journal.run_store import Journal
from ..options import RunOptions
from .batch_journal import (
    BatchPart,
    JournaledBatches,
    Slot,
    journaled_batches,
    planned,
)
from .batch_parts import Outgoing, Wanted
from .calls import Calls
from .waiting_answers import WaitingAnswers

if TYPE_CHECKING:
    from ..plan.cell_index import CellIndex

T = TypeVar("T")
# Rounds in a row whose poll of a batch failed (each after the retry policy's retries) before its requests
# are sent one by one: a provider down for good must not hold the run forever.
MAX_FAILED_POLLS = 10
FIRST_POLL = 1.0  # seconds before the second look at a batch; doubled up to RunOptions.batch_poll
__all__ = ["BatchRequest", "BatchStage", "Slot", "journaled_slots"]


@dataclass(frozen=True, slots=True)
class BatchRequest:
    cell: Cell
    turn: int | str  # the generated turn, or the judge call (score_judges.judge_slot)
    model: str  # the model id as the plan names it
    spec: str | Mapping[str, Any]  # what Calls.model() binds (a custom model's object), or the target's name
    provider: Provider  # the (wrapped) provider the interactive call would use
    req: ChatRequest
    custom: bool = False  # an OpenAI-format endpoint the user says has the Batch API (an AgentV target)
    # False: only collected from a batch an earlier run of the journal sent (a `--resume` without
    # `--batch`), never sent in a new one.
    submit: bool = True


def wants_batch(options: RunOptions, model: str) -> bool:
    """Whether `model`'s calls go through its batch API: `--batch` (every model that has one) or one of
    the `--batch-model` patterns."""
    if options.batch:
        return True
    return any(fnmatch.fnmatchcase(model, pattern) for pattern in options.batch_models)


def journaled_slots(journal_path: Path, options: RunOptions) -> JournaledBatches:
    """The calls a resumed run's journal says were put in a batch (`slot in` it): they are collected from
    it even when the resumed run was started without `--batch`, so none is sent a second time. The stage
    is given the same object (`BatchStage(journaled=…)`): the journal is read once."""
    return journaled_batches(journal_path, options.resume)


def custom_batch(options: RunOptions, model: str) -> bool:
    """A model named in --batch-model is trusted to have a batch API even behind a custom URL."""
    return any(fnmatch.fnmatchcase(model, pattern) for pattern in options.batch_models)


class BatchStage:
    def __init__(self, *, calls: Calls, journal: Journal, journal_path: Path, options: RunOptions,
                 journaled: JournaledBatches | None = None, cells: CellIndex | None = None,
                 label: str | None = None, phase: int = 0, taken: set[str] | None = None) -> None:
        self.calls = calls
        self.journal = journal
        self.journal_path = journal_path
        # The run label, in every part's key: the journal's name is the label's.
        self.label = label if label is not None else journal_path.name.removesuffix(".run.db")
        # The phase's number in the run, in its parts' keys too: a later phase (an AgentV trial's round,
        # its judges) may ask exactly what an earlier one did, and must not take that batch for its own.
        # Counted by `run()`; an AgentV run makes a stage per round and numbers them (`phase`).
        self.phase = phase
        self.options = options
        self.policy = calls.policy
        # The parts an earlier run of the journal planned (--resume): read once, shared with the runner.
        self.journaled = journaled
        # the batches' answers, on disk until their cells take them (`cells`: the plan's, for an array by cell)
        self.waiting = WaitingAnswers(cells)
        self.answered = 0  # answers taken from batches
        self.unanswered = 0  # requests a batch did not answer (sent again one by one)
        self.batches = 0
        self._apis: dict[str, BatchAPI | None] = {}
        self._statuses: dict[str, tuple[str, BatchStatus]] = {}  # key → (model, last status)
        # What reading and pricing an answer need, one per model and provider (not one per request).
        self._shapes: list[_Asked] = []
        self._shape_numbers: dict[tuple[str, int, str], int] = {}
        self._turns: dict[int | str, int | str] = {}  # one object per slot's turn ("judge:0:…" comes 100,000 times)
        # Per part polled by the phase: the items it asks for.
        self._wanted: dict[str, Wanted] = {}
        # A resumed run's look at the provider (`_lookup`): the batches it lists (per client), the ids no
        # part may take again, how far back to list, and the first custom id of each ended batch read.
        self._listings: dict[int, list[BatchStatus]] = {}
        # Every batch the run knows is a part's (journaled, created, found): never taken for another part.
        # Shared by the stages of one run (`taken`).
        self._taken: set[str] = taken if taken is not None else set()
        self._bound: float | None = None
        self._first_ids: dict[str, str | None] = {}
        # Parts waiting for running batches that may be theirs (an API that names a batch only once it
        # ended), and those batches, polled with the rest (`_probe`).
        self._deferred: list[_Deferred] = []
        self._probes: dict[str, BatchAPI] = {}

    def forget_journaled(self) -> None:
        """After the last phase: the journal's parts and their slot keys are not needed again (the answers
        wait in `waiting`), so they are not kept to the end of the run. A phase run after this one reads
        nothing from the journal (`run` reads it again only when none was ever given)."""
        self.journaled = JournaledBatches()

    # --- what the cells ask -----------------------------------------------------------------------
    def take(self, cell: Cell, turn: int | str, *, purpose: str = "generate", label: str = "") -> ChatResult | None:
        """The batch's answer for this cell's turn (once), None when it must be asked interactively.
        Raises the ProviderError the interactive call would have raised for the same answer. The call
        is counted and its usage priced (at the batch price) as Calls.chat does for a call it makes."""
        waiting = self.waiting.pop(cell, turn)
        if waiting is None:
            return None
        asked = self._shapes[waiting[0]]
        got = self._parse(asked, waiting[1])
        self.calls.calls += 1
        if isinstance(got, ProviderError):
            raise got
        spend = self.calls.spend
        if spend is not None:
            spend.record(purpose, label, cell, model=asked.req_model, reported=got.raw_model,
                         input_tokens=got.usage.input_tokens, output_tokens=got.usage.output_tokens, batched=True)
        return got

    def has_answer(self, cell: Cell, turn: int | str) -> bool:
        """Whether a batch answered this cell's turn (its answer not taken yet)."""
        return self.waiting.peek(cell, turn) is not None

    def answer(self, cell: Cell, turn: int | str) -> ChatResult | ProviderError | None:
        """The batch's answer for this cell's turn, left for `take()` (a conversation's next turn, a judge
        read it before the cells run); None when no batch answered it."""
        waiting = self.waiting.peek(cell, turn)
        if waiting is None:
            return None
        return self._parse(self._shapes[waiting[0]], waiting[1])

    # --- the stage --------------------------------------------------------------------------------
    async def run(self, requests: Iterable[BatchRequest]) -> AsyncIterator[Event]:
        """One phase: `requests` (an iterable, read once: a phase can hold 800,000 judge calls) are encoded
        one by one into their model's part files on disk (`Outgoing`), and what the stage keeps of each is
        its part's item and its shape's number; then the journal's batches are resumed, the new ones sent,
        all polled, and their answers wait on disk (`waiting`) for the cells."""
        self.answered = self.unanswered = self.batches = 0  # counted per phase (answers, then judges)
        phase, self.phase = self.phase, self.phase + 1
        self._statuses = {}
        self._wanted = {}
        journaled = self.journaled
        if journaled is None and self.options.resume:
            journaled = self.journaled = journaled_batches(self.journal_path, True)
        # The slots an earlier run of the journal put in a batch it created are polled, never encoded again;
        # those of a part whose creation it never learnt wait as requests until the provider is asked.
        marks: dict[str, Wanted] = {}  # a journaled part's items asked now
        held: dict[Slot, BatchRequest] = {}
        outgoing: dict[str, Outgoing] = {}
        asked_any = False
        cell: Cell | None = None
        seen: set[int | str] = set()  # the current cell's slots (requests come cell by cell)
        try:
            for r in requests:
                turn = self._turns.setdefault(r.turn, r.turn)
                if r.cell != cell:
                    cell, seen = r.cell, set()
                if turn in seen:
                    continue
                seen.add(turn)
                slot = (r.cell, turn)
                asked_any = True
                api = self._api(r)
                shape = self._shape(r)
                key = _cache_key(r)
                found = journaled.find(slot) if journaled else None
                if found is not None:
                    part, i = found
                    mark = marks.get(part.key)
                    if mark is None:
                        mark = marks[part.key] = Wanted.journaled(len(part.items))
                    mark.ask(i, shape, key, r.cell, turn)
                if not r.submit:
                    continue
                if api is not None and found is not None:
                    self._outgoing(outgoing, r, api, phase).skip()  # its number stays the journaled part's
                    if found[0].batch_id is None:
                        held[slot] = r
                    continue
                self._outgoing(outgoing, r, api, phase).add(r.cell, turn, r.req, shape, key)
            if not asked_any:
                return
            pending: dict[str, tuple[BatchPart, BatchAPI]] = {}
            resumable = journaled.parts if journaled else {}
            self._taken.update(p.batch_id for p in resumable.values() if p.batch_id)
            # A resumed run asks the provider for the batches of the parts its journal does not name:
            # listed once per model and phase, back to the earliest part the journal still has.
            self._bound = min((p.planned_at for p in resumable.values() if p.planned_at), default=None)
            self._listings = {}
            for part in resumable.values():
                mark = marks.get(part.key)
                if mark is None:
                    continue
                api = self._apis.get(part.model)
                if api is None:
                    continue
                if part.batch_id is None:
                    # Its key in the list (Anthropic: the list, then the results' ids).
                    found_status = await self._lookup(api, part)
                    waiting = [held.pop(s) for s in mark.slots(part.items) if s in held]
                    if isinstance(found_status, set):  # batches that may be its, still running: wait for them
                        self._defer(part, api, mark, None, found_status)
                        yield self._deferred_notice(part, found_status)
                        continue
                    if found_status is None:
                        for r in waiting:  # never created (or cannot be told): its requests are planned again
                            self._outgoing(outgoing, r, api, phase).add(r.cell, self._turns[r.turn], r.req, self._shape(r),
                                                                 _cache_key(r))
                        continue
                    part.batch_id = found_status.id
                    self.journal.write(BatchCreated(part.key, found_status.id))
                    self._taken.add(found_status.id)
                    yield Notice(f"batch {found_status.id} ({part.model}, {len(part.items):,} requests) was created "
                                 "before the run stopped; polling it instead of sending its requests again")
                pending[part.key] = (part, api)
                self._wanted[part.key] = mark
            for r in held.values():  # in an unsure part the resumed run no longer asks for: sent anew
                self._outgoing(outgoing, r, self._apis.get(r.model), phase).add(r.cell, self._turns[r.turn], r.req,
                                                                        self._shape(r), _cache_key(r))
            held.clear()
            marks.clear()
            resumed = len(pending)
            if resumed:
                yield Notice(f"resuming {resumed} batch(es) from the journal; their requests are not sent again")
            async for event in self._submit(outgoing, pending):
                yield event
        finally:
            for out in outgoing.values():
                out.close()
        try:
            async for event in self._poll(pending):
                yield event
        finally:
            for deferred in self._deferred:
                if deferred.body is not None:
                    deferred.body.close()
            self._deferred.clear()
            self._probes.clear()
        if self.answered or self.unanswered:
            note = f"batch mode: {self.answered:,} answer(s) from {self.batches} batch(es)"
            if self.unanswered:
                note += f"; {self.unanswered:,} request(s) not answered by a batch are sent one by one"
            yield Notice(note)

    def _shape(self, request: BatchRequest) -> int:
        """The number of the request's shape: what reading and pricing its answer need."""
        key = (request.model, id(request.provider), request.req.model)
        n = self._shape_numbers.get(key)
        if n is None:
            n = self._shape_numbers[key] = len(self._shapes)
            self._shapes.append(_Asked(request.model, request.provider, request.req.model))
        return n

    def _outgoing(self, outgoing: dict[str, Outgoing], request: BatchRequest, api: BatchAPI | None,
                  phase: int) -> Outgoing:
        out = outgoing.get(request.model)
        if out is None:
            raw = http_provider(request.provider) if api is not None else None
            out = outgoing[request.model] = Outgoing(request.model, api, raw, f"{self.label}#{phase}")
        return out

    # --- submission -------------------------------------------------------------------------------
    async def _submit(self, outgoing: dict[str, Outgoing],
                      pending: dict[str, tuple[BatchPart, BatchAPI]]) -> AsyncIterator[Event]:
        for model, out in outgoing.items():
            if out.api is None:
                yield Notice(f"{model} has no batch API evalspec can drive (OpenAI, Anthropic and Google have); its "
                             f"{out.skipped:,} call(s) are made one by one", "warning")
                continue
            api = out.api
            for new in out.parts():
                items, wanted = new.items, new.wanted
                body: PartFile | None = new.file
                part = BatchPart(key=new.key, model=model, items=items, planned_at=time.time())
                # The mapping is on disk before a byte goes out: a kill from here on loses nothing.
                self.journal.write(planned(part))
                status: BatchStatus | ProviderError | set[str] | None = None
                try:
                    if self.options.resume:
                        # An earlier run of this label may have created it and its journal lost it (a
                        # full disk, a folder copied mid-run, the journal deleted): asked before sending.
                        status = await self._lookup(api, part)
                        if isinstance(status, set):
                            self._defer(part, api, wanted, body, status)
                            body = None
                            yield self._deferred_notice(part, status)
                            continue
                        if status is not None:
                            self._adopt(part, status)
                            yield self._found_notice(part, status)
                    if status is None:
                        status = await self._create(api, part, new.file)
                finally:
                    if body is not None:
                        body.close()
                assert not isinstance(status, set) and status is not None
                if isinstance(status, ProviderError):
                    self.unanswered += len(items)
                    yield Notice(f"{model}: the batch of {len(items):,} request(s) could not be created "
                                 f"({status.message}); they are sent one by one", "warning")
                    continue
                pending[part.key] = (part, api)
                self._wanted[part.key] = wanted
                self._statuses[part.key] = (model, status)
                yield self._progress()

    async def _create(self, api: BatchAPI, part: BatchPart, body: PartFile) -> BatchStatus | ProviderError:
        file_id = await self._call(lambda: api.upload(part.key, body))
        if isinstance(file_id, ProviderError):
            return file_id
        if file_id:
            part.file_id = file_id
            self.journal.write(BatchFileUploaded(part.key, file_id))
        attempt = 0
        while True:
            try:
                status = await api.create(part.key, body, file_id)
            except ProviderError as err:
                if not err.retryable or attempt >= self.policy.max_retries:
                    return err
                # The creation may have gone through with its answer lost: look before sending it again.
                found = await self._call(lambda: api.find(part.key, created_after=part.planned_at,
                                                          total=len(part.items)))
                if isinstance(found, BatchStatus):
                    status = found
                else:
                    attempt += 1
                    await asyncio.sleep(self.policy.delay_for(attempt, err.retry_after))
                    continue
            part.batch_id = status.id
            self.journal.write(BatchCreated(part.key, status.id))
            self._taken.add(status.id)
            self.batches += 1
            return status

    # --- a resumed run's look at the provider -------------------------------------------------------
    async def _lookup(self, api: BatchAPI, part: BatchPart) -> BatchStatus | set[str] | None:
        """The batch an earlier run of this label created for `part`, found at the provider; None when
        there is none (or the provider cannot be asked: then it is sent). An API that keeps the part's
        key (OpenAI metadata, Gemini displayName) names it in the list. Anthropic's list gives counts
        and times only: a batch of the part's size is its once its results' first custom id carries the
        part's tag (`tag_of`); while such batches still run, the set of their ids: the part waits for
        them (`_defer`) rather than risk sending its requests twice."""
        listed = self._listings.get(id(api))
        if listed is None:
            got = await self._call(lambda: api.listed(self._bound))
            listed = self._listings[id(api)] = [] if isinstance(got, ProviderError) else got
        if not api.tagged:
            return next((s for s in listed if s.key == part.key and s.id not in self._taken), None)
        size = len(part.items)
        running: set[str] = set()
        for status in listed:
            if status.id in self._taken or sum(status.counts.values()) != size:
                continue
            if not status.ended:
                running.add(status.id)
            elif self._belongs(part, await self._first_id(api, status)):
                return status
        return running or None

    async def _first_id(self, api: BatchAPI, status: BatchStatus) -> str | None:
        if status.id not in self._first_ids:
            got = await self._call(lambda: api.first_custom_id(status))
            self._first_ids[status.id] = None if isinstance(got, ProviderError) else got
        return self._first_ids[status.id]

    @staticmethod
    def _belongs(part: BatchPart, custom_id: str | None) -> bool:
        return custom_id is not None and part.items.index(custom_id) is not None

    def _adopt(self, part: BatchPart, status: BatchStatus) -> None:
        """`status` is the batch of `part`: journaled as created, never created again."""
        part.batch_id = status.id
        self.journal.write(BatchCreated(part.key, status.id))
        self._taken.add(status.id)
        self.batches += 1

    def _found_notice(self, part: BatchPart, status: BatchStatus) -> Notice:
        return Notice(f"batch {status.id} ({part.model}, {len(part.items):,} requests) found at the provider: an "
                      "earlier run of this label created it and its journal does not say; polling it instead of "
                      "sending its requests again")

    def _defer(self, part: BatchPart, api: BatchAPI, wanted: Wanted, body: PartFile | None,
               candidates: set[str]) -> None:
        self._deferred.append(_Deferred(part, api, wanted, body, set(candidates)))
        for batch_id in candidates:
            self._probes[batch_id] = api

    def _deferred_notice(self, part: BatchPart, candidates: set[str]) -> Notice:
        return Notice(f"{part.model}: {len(candidates)} running batch(es) at the provider of {len(part.items):,} "
                      "requests may hold a part the journal lost (Anthropic names a batch by its results only): "
                      "waiting for them to end before sending it")

    async def _probe(self, batch_id: str, status: BatchStatus | ProviderError, failures: dict[str, int],
                     pending: dict[str, tuple[BatchPart, BatchAPI]]) -> AsyncIterator[Event]:
        """A running batch that may be a deferred part's, polled: once it ended, its first custom id says
        whose it is; a part left with no batch that may be its is sent then (or, a journaled part's,
        its requests one by one)."""
        api = self._probes[batch_id]
        if isinstance(status, ProviderError):
            failures[batch_id] = failures.get(batch_id, 0) + 1
            if status.retryable and failures[batch_id] < MAX_FAILED_POLLS:
                return
        elif not status.ended:
            return
        del self._probes[batch_id]
        owner = None
        if isinstance(status, BatchStatus):
            first = await self._first_id(api, status)
            owner = next((d for d in self._deferred if self._belongs(d.part, first)), None)
        if owner is not None and isinstance(status, BatchStatus):
            self._deferred.remove(owner)
            self._adopt(owner.part, status)
            if owner.body is not None:
                owner.body.close()
            pending[owner.part.key] = (owner.part, owner.api)
            self._wanted[owner.part.key] = owner.wanted
            self._statuses[owner.part.key] = (owner.part.model, status)
            yield self._found_notice(owner.part, status)
        for deferred in list(self._deferred):
            deferred.candidates.discard(batch_id)
            if deferred.candidates:
                continue
            self._deferred.remove(deferred)
            part = deferred.part
            if deferred.body is None:  # a journaled part's requests: asked one by one
                self.unanswered += sum(1 for m in deferred.wanted.shapes if m)
                yield Notice(f"{part.model}: no batch at the provider holds the journaled part {part.key}; its "
                             f"{len(part.items):,} request(s) are sent one by one")
                continue
            try:
                created = await self._create(deferred.api, part, deferred.body)
            finally:
                deferred.body.close()
            if isinstance(created, ProviderError):
                self.unanswered += len(part.items)
                yield Notice(f"{part.model}: the batch of {len(part.items):,} request(s) could not be created "
                             f"({created.message}); they are sent one by one", "warning")
                continue
            pending[part.key] = (part, deferred.api)
            self._wanted[part.key] = deferred.wanted
            self._statuses[part.key] = (part.model, created)

    # --- polling and results ----------------------------------------------------------------------
    async def _poll(self, pending: dict[str, tuple[BatchPart, BatchAPI]]) -> AsyncIterator[Event]:
        # Soon after submission, then less and less often up to --batch-poll: a small batch is back in
        # seconds, a large one takes hours and needs no look every second.
        delay = min(FIRST_POLL, self.options.batch_poll)
        failures: dict[str, int] = {}  # key → polls in a row that failed (after their own retries)
        first = True
        while pending or self._probes:
            if not first:
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.options.batch_poll)
            first = False
            keys = list(pending)
            probes = list(self._probes)
            got = await asyncio.gather(*(self._status_of(*pending[k]) for k in keys),
                                       *(self._call(lambda i=i: self._probes[i].get(i)) for i in probes))  # type: ignore[misc]
            for batch_id, probed in zip(probes, got[len(keys):], strict=True):
                async for event in self._probe(batch_id, probed, failures, pending):
                    yield event
            for key, status in zip(keys, got[:len(keys)], strict=True):
                part, api = pending[key]
                if isinstance(status, ProviderError):
                    failures[key] = failures.get(key, 0) + 1
                    if status.retryable and failures[key] < MAX_FAILED_POLLS:
                        continue  # the next round asks again
                    del pending[key]
                    self._give_up(part)
                    yield Notice(f"batch {part.batch_id} ({part.model}) cannot be read ({status.message}); its "
                                 "requests are sent one by one", "warning")
                    continue
                failures.pop(key, None)
                self._statuses[key] = (part.model, status)
                if not status.ended:
                    continue
                del pending[key]
                if part.ended is None:
                    part.ended = status.to_json()
                    self.journal.write(BatchEnded(key, part.ended))
                note = await self._collect(part, api, status)
                if note:
                    yield Notice(note, "warning")
            yield self._progress()

    async def _status_of(self, part: BatchPart, api: BatchAPI) -> BatchStatus | ProviderError:
        if part.ended is not None:  # resumed after it ended: its results are read from its files again
            return _status_from_json(part.ended)
        assert part.batch_id is not None
        batch_id = part.batch_id
        return await self._call(lambda: api.get(batch_id))

    async def _collect(self, part: BatchPart, api: BatchAPI, status: BatchStatus) -> str | None:
        """Every answer of an ended batch, on disk for its cell (`waiting`); returns what the user should
        know when some requests were not answered."""
        wanted = self._wanted.pop(part.key, None) or Wanted(array("H"))
        marks = wanted.shapes
        items = part.items
        first_error: str | None = None
        got = 0
        left = sum(1 for m in marks if m)
        # A result file is read while it brings news: each read has its deadline, but a service that
        # sends lines of no use for ever (unknown ids, blanks, a byte at a time) would hold the run for
        # ever. Reading stops once every request is answered, and a file that brings no request of the
        # batch not seen before within the call timeout is given up (its requests go one by one).
        quiet = self.options.timeout
        seen = bytearray(len(marks))
        loop = asyncio.get_running_loop()
        news_by = loop.time() + quiet
        results = aiter(api.results(status))
        try:
            while left:
                try:
                    async with asyncio.timeout_at(news_by):
                        item = await anext(results)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    first_error = first_error or f"its results file brought no new answer for {quiet:g} s"
                    break
                i = items.index(item.custom_id)
                if i is None or i >= len(marks) or not marks[i]:
                    continue
                if not seen[i]:
                    seen[i] = 1
                    news_by = loop.time() + quiet
                if item.body is None:  # stays wanted: the interactive path asks for it
                    first_error = first_error or item.error
                    continue
                shape = marks[i] - 1
                marks[i] = 0
                left -= 1
                cell, turn = wanted.slot(items, i)
                key = wanted.keys[i] if wanted.keys is not None else None
                if key is not None:  # --cache: stored as the interactive call stores it, as it comes
                    self._parse(self._shapes[shape], item.body, cache_key=key)
                self.waiting.put(cell, turn, shape, item.body)
                got += 1
        except ProviderError as err:
            first_error = first_error or f"its results could not be read: {err.message}"
        finally:
            closing = getattr(results, "aclose", None)
            if closing is not None:
                await closing()
        unanswered = sum(1 for m in marks if m)
        self.answered += got
        self.unanswered += unanswered
        if not unanswered:
            return None
        why = status.detail or first_error or status.state
        return (f"batch {status.id} ({part.model}) ended {status.state}: {unanswered:,} of {len(part.items):,} "
                f"request(s) not answered ({why}); they are sent one by one")

    def _parse(self, asked: _Asked, body: dict[str, Any], *, cache_key: str | None = None) -> ChatResult | ProviderError:
        """The answer as the interactive call would have returned it: the chat provider's own parser."""
        provider = asked.provider
        raw = http_provider(provider)
        assert raw is not None  # only an HTTP provider's requests were batched (batch_api_for)
        try:
            result: ChatResult = raw.parse(body, 0.0)
            # One string for the model every answer names, not one per answer.
            result = dataclasses.replace(result, batched=True, raw_model=result.raw_model and sys.intern(result.raw_model))
        except ProviderError as err:
            return err
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
            return ProviderError(BAD_RESPONSE, f"{raw.name}: malformed answer ({type(exc).__name__}: {exc})", 200,
                                 False, provider=raw.name)
        if isinstance(provider, CachedProvider) and cache_key:  # --cache: stored as the interactive call stores it
            provider.cache.put(cache_key, result, model=asked.req_model)
        return result

    def _give_up(self, part: BatchPart) -> None:
        wanted = self._wanted.pop(part.key, None)
        if wanted is not None:
            self.unanswered += sum(1 for m in wanted.shapes if m)

    # --- plumbing ---------------------------------------------------------------------------------
    def _api(self, request: BatchRequest) -> BatchAPI | None:
        if request.model not in self._apis:
            limits = Limits(self.options.batch_max_requests or 10**9, self.options.batch_max_bytes or 10**12)
            self._apis[request.model] = batch_api_for(request.provider, limits=limits, model=request.req.model,
                                                      custom=request.custom or custom_batch(self.options, request.model))
        return self._apis[request.model]

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T | ProviderError:
        try:
            return await retry_call(call, self.policy)
        except ProviderError as err:
            return err

    def _progress(self) -> BatchProgress:
        return BatchProgress(tuple({"model": model, "id": status.id, "state": status.state, "ended": status.ended,
                                    "counts": dict(status.counts), "progress": status.progress()}
                                   for model, status in self._statuses.values()))


@dataclass(slots=True)
class _Deferred:
    """A part a resumed run neither found nor sent: batches that may be its still run (`candidates`)."""

    part: BatchPart
    api: BatchAPI
    wanted: Wanted
    body: PartFile | None  # its requests, to send if none is its; None: a journaled part's (sent one by one)
    candidates: set[str]


@dataclass(frozen=True, slots=True)
class _Asked:
    """What the stage keeps of a request once it is encoded: what reading and pricing its answer need."""

    model: str  # the model id as the plan names it
    provider: Provider  # the (wrapped) provider the interactive call would use: its parser, its cache
    req_model: str  # the provider's model name (the answer's price)


def _cache_key(request: BatchRequest) -> str | None:
    if not isinstance(request.provider, CachedProvider):
        return None
    from ...providers.cache import cache_key

    return cache_key(request.provider.identity(), request.req)


def _status_from_json(data: Mapping[str, Any]) -> BatchStatus:
    return BatchStatus(id=str(data.get("id")), state=str(data.get("state")), ended=True,
                       counts=dict(data.get("counts") or {}), output_file=data.get("output_file"),
                       error_file=data.get("error_file"), results_url=data.get("results_url"),
                       detail=data.get("detail"))
