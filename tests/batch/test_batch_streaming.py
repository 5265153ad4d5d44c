"""Batch mode holds neither a phase's requests nor a batch's body in memory (issue 12, item 5).

The stage reads its requests one at a time and keeps none of them once encoded (their encoded form is
in a part file on disk); each client sends a batch's body streamed from that file, a chunk at a time,
with its Content-Length. Real HTTP against the fake batch server on loopback; the server checks every
item it receives.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from evalspec.batch import PartFile, batch_api_for
from evalspec.batch.part_file import CHUNK
from evalspec.providers.base import ChatMessage, ChatRequest, ChatResult
from evalspec.providers.factory import provider_for_model
from evalspec.providers.http import make_client
from evalspec.run.events import Cell
from evalspec.run.generate.batch_stage import BatchRequest, BatchStage
from evalspec.run.generate.calls import Calls
from evalspec.run.journal.records import BatchPlanned
from evalspec.run.options import RunOptions
from tests.fakebatch import FakeBatchServer
from tests.run_records import journal_at


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBatchServer]:
    with FakeBatchServer(polls_per_state=1) as server:
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        yield server


class TrackedRequest(ChatRequest):
    """A ChatRequest a test can hold a weak reference to (ChatRequest has slots and no __weakref__)."""

    __slots__ = ("__weakref__",)


class Recorded(httpx.AsyncByteStream):
    """A request's body stream that notes the size of every chunk the transport reads from it."""

    def __init__(self, inner: httpx.AsyncByteStream, sizes: list[int]) -> None:
        self.inner = inner
        self.sizes = sizes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.sizes.append(len(chunk))
            yield chunk


async def test_the_stage_keeps_no_request_once_it_is_encoded(tmp_path: Path, fake: FakeBatchServer) -> None:
    n = 300
    model = "openai:gpt-4o-mini"
    options = RunOptions(batch=True, batch_poll=0.05, max_retries=0)
    calls = Calls(options, lambda event: None, concurrency=4)
    refs: list[weakref.ref[ChatRequest]] = []
    alive_at_end: list[int] = []

    def requests() -> Iterator[BatchRequest]:
        provider = calls.model(model).provider
        for i in range(n):
            req = TrackedRequest("gpt-4o-mini", (ChatMessage("user", f"question {i}"),), system="Answer briefly.")
            refs.append(weakref.ref(req))
            yield BatchRequest(Cell(f"p{i}", model), 0, model, model, provider, req)
        # The stage asks for the next one: every request before the last is encoded and let go (today's
        # stage kept them all until its batches ended).
        gc.collect()
        alive_at_end.append(sum(1 for r in refs if r() is not None))

    journal_path = tmp_path / "run.run.db"
    try:
        with journal_at(journal_path, fresh=True) as journal:
            stage = BatchStage(calls=calls, journal=journal, journal_path=journal_path, options=options)
            [event async for event in stage.run(requests())]
            answers = [stage.take(Cell(f"p{i}", model), 0) for i in range(n)]
    finally:
        await calls.aclose()
    assert len(refs) == n and alive_at_end and alive_at_end[0] <= 1
    assert all(isinstance(a, ChatResult) for a in answers)
    assert [a.text for a in answers if a is not None] == [f"Answer (gpt-4o-mini) to: question {i}" for i in range(n)]
    assert fake.creations == 1 and sum(len(b.items) for b in fake.batches.values()) == n


class RecordingTransport(httpx.AsyncBaseTransport):
    """httpx-aiohttp's transport (the run's), noting each request whose body is a stream: its path, its
    Content-Length and the size of every chunk read from it. (The run's own client goes to this transport
    without httpx's event hooks.)"""

    def __init__(self) -> None:
        from httpx_aiohttp import AiohttpTransport

        self.inner = AiohttpTransport()
        self.streamed: list[tuple[str, int, list[int]]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            request.content  # noqa: B018 (raises when the body is a stream, not bytes in memory)
        except httpx.RequestNotRead:
            sizes: list[int] = []
            assert isinstance(request.stream, httpx.AsyncByteStream)
            request.stream = Recorded(request.stream, sizes)
            self.streamed.append((request.url.path, int(request.headers["content-length"]), sizes))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest",
                                   "google:gemini-2.5-flash"])
async def test_a_batch_body_is_streamed_from_its_file(model: str, fake: FakeBatchServer) -> None:
    transport = RecordingTransport()
    client = make_client(4, transport=transport)
    try:
        binding = provider_for_model(model, client=client, env=fake.env())
        api = batch_api_for(binding.provider, model=binding.model_name)
        assert api is not None
        raw = api.provider  # type: ignore[attr-defined]
        padding = "x" * 10_000  # 250 requests of ~10 KB: a ~2.5 MB body, several chunks
        bodies = [raw.body(ChatRequest.of(binding.model_name, f"question {i} {padding}")) for i in range(250)]
        part = PartFile(api.framing)
        for i, body in enumerate(bodies):
            part.add(api.encode(f"c{i}", body))
        try:
            file_id = await api.upload("k1", part)
            status = await api.create("k1", part, file_id)
        finally:
            part.close()
    finally:
        await client.aclose()
    sent = [(path, length, sizes) for path, length, sizes in transport.streamed if length > 1_000_000]
    assert len(sent) == 1  # the input file (OpenAI, Gemini) or the creation (Anthropic)
    _, length, sizes = sent[0]
    # The whole body (OpenAI: with its multipart form's few hundred bytes around it), chunk by chunk.
    assert sum(sizes) == length and part.length <= length < part.length + 1024
    assert len(sizes) >= 3 and max(sizes) <= CHUNK
    batch = fake.batches[status.id]
    assert len(batch.items) == len(bodies)  # every item arrived whole and read as its request
    assert [cid for cid, _ in batch.items] == [f"c{i}" for i in range(len(bodies))]


async def test_a_part_planned_but_never_created_is_sent_on_resume(tmp_path: Path, fake: FakeBatchServer) -> None:
    """Killed between journaling a part and creating its batch: the resumed stage asks the provider,
    finds nothing, and sends those requests (held until then, not encoded twice) in a new batch; the part
    the provider did create is polled, not sent again."""
    model = "anthropic:claude-3-5-haiku-latest"
    journal_path = tmp_path / "run.run.db"

    def requests(calls: Calls, n: int) -> Iterator[BatchRequest]:
        provider = calls.model(model).provider
        for i in range(n):
            req = ChatRequest.of("claude-3-5-haiku-latest", f"question {i}", system="Answer briefly.")
            yield BatchRequest(Cell(f"p{i}", model), 0, model, model, provider, req)

    async def stage_run(options: RunOptions, n: int) -> list[ChatResult | None]:
        calls = Calls(options, lambda event: None, concurrency=4)
        try:
            with journal_at(journal_path, fresh=not options.resume) as journal:
                stage = BatchStage(calls=calls, journal=journal, journal_path=journal_path, options=options)
                [event async for event in stage.run(requests(calls, n))]
                return [stage.take(Cell(f"p{i}", model), 0) for i in range(n)]
        finally:
            await calls.aclose()

    # A first run whose batch of 4 the provider created (then SIGKILLed before the answers were read) …
    fake.hold = True
    first = RunOptions(batch=True, batch_poll=0.05, max_retries=0, batch_max_requests=4)
    calls = Calls(first, lambda event: None, concurrency=4)
    try:
        with journal_at(journal_path, fresh=True) as journal:
            stage = BatchStage(calls=calls, journal=journal, journal_path=journal_path, options=first)
            events = stage.run(requests(calls, 4))
            await anext(events)  # the first progress event: the batch is created
            await events.aclose()
            # … and a second part journaled, never created.
            planned_only = BatchPlanned("evalspec-lost", model, 0.0, tuple(
                (f"r{i}", Cell(f"p{i}", model), 0) for i in range(4, 7)))
            journal.write(planned_only)
    finally:
        await calls.aclose()
    assert fake.creations == 1
    fake.hold = False
    answers = await stage_run(RunOptions(batch=True, batch_poll=0.05, max_retries=0, resume=True), 8)
    assert [a.text if a else None for a in answers] == [
        f"Answer (claude-3-5-haiku-latest) to: question {i}" for i in range(8)]
    assert fake.creations == 2 and not fake.duplicates()  # p4–p6 (never created) and p7 in one new batch
    assert sorted(len(b.items) for b in fake.batches.values()) == [4, 4]
