"""The batch API clients against the fake batch server on loopback: real HTTP, real uploads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalspec.batch import Limits, batch_api_for, split
from evalspec.providers.base import ChatRequest
from evalspec.providers.factory import provider_for_model
from evalspec.providers.http import make_client
from tests.fakebatch import FakeBatchServer, anthropic_message, google_response, openai_completion


@pytest.fixture
def fake() -> Iterator[FakeBatchServer]:
    with FakeBatchServer() as server:
        yield server


def _api(fake: FakeBatchServer, model: str, client, limits: Limits | None = None):
    binding = provider_for_model(model, client=client, env=fake.env())
    api = batch_api_for(binding.provider, limits=limits, model=binding.model_name)
    assert api is not None
    return binding, api


async def _run(api, bodies, key="k1"):
    encoded = [api.encode(f"c{i}", b) for i, b in enumerate(bodies)]
    file_id = await api.upload(key, encoded)
    status = await api.create(key, encoded, file_id)
    states = [status.state]
    while not status.ended:
        status = await api.get(status.id)
        states.append(status.state)
    items = [r async for r in api.results(status)]
    return status, states, items


async def test_openai_upload_states_and_results(fake: FakeBatchServer) -> None:
    client = make_client(4)
    try:
        _, api = _api(fake, "openai:gpt-4o-mini", client)
        raw = api.provider  # type: ignore[attr-defined]
        bodies = [raw.body(ChatRequest.of("gpt-4o-mini", f"question {i}")) for i in range(5)]
        status, states, items = await _run(api, bodies)
    finally:
        await client.aclose()
    assert states == ["validating", "in_progress", "finalizing", "completed"]
    assert fake.uploads == 1 and fake.creations == 1
    batch = next(iter(fake.batches.values()))
    assert batch.metadata["evalspec_key"] == "k1"  # what find() looks for after a kill
    assert [b for _, b in batch.items] == bodies  # the very bodies the chat provider sends
    assert status.counts == {"total": 5, "completed": 5, "failed": 0}
    by_id = {r.custom_id: r for r in items}
    assert by_id["c3"].body == openai_completion(bodies[3])
    assert raw.parse(by_id["c3"].body, 0.0).text == "Answer (gpt-4o-mini) to: question 3"


async def test_openai_partial_failure_and_expiry(fake: FakeBatchServer) -> None:
    fake.fail_when("bad")
    client = make_client(4)
    try:
        _, api = _api(fake, "openai:gpt-4o-mini", client)
        raw = api.provider  # type: ignore[attr-defined]
        bodies = [raw.body(ChatRequest.of("gpt-4o-mini", t)) for t in ("ok 1", "bad 2", "ok 3", "ok 4")]
        status, _, items = await _run(api, bodies)
        assert status.state == "completed" and status.counts["failed"] == 1
        failed = [r for r in items if r.body is None]
        assert [r.custom_id for r in failed] == ["c1"] and "HTTP 500" in (failed[0].error or "")
        fake.expire_next = 1
        status, states, items = await _run(api, bodies, key="k2")
        assert states[-1] == "expired"
        assert sorted(r.custom_id for r in items if r.body is not None) == ["c0"]  # c1 failed, c2, c3 expired
        assert any("batch_expired" in (r.error or "") for r in items)
    finally:
        await client.aclose()


async def test_openai_find_by_metadata_and_cancel(fake: FakeBatchServer) -> None:
    fake.hold = True
    client = make_client(4)
    try:
        _, api = _api(fake, "openai:gpt-4o-mini", client)
        raw = api.provider  # type: ignore[attr-defined]
        enc = [api.encode("c0", raw.body(ChatRequest.of("gpt-4o-mini", "x")))]
        for key in ("a", "b", "c"):
            await api.create(key, enc, await api.upload(key, enc))
        found = await api.find("b", created_after=0.0, total=1)
        assert found is not None and found.key == "b"
        assert await api.find("nope", created_after=0.0, total=1) is None
        cancelled = await api.cancel(found.id)
        assert cancelled.state == "cancelling"
        fake.hold = False
        final = await api.get(found.id)
        assert final.state == "cancelled" and final.ended
    finally:
        await client.aclose()


async def test_anthropic_batch(fake: FakeBatchServer) -> None:
    fake.fail_when("bad")
    client = make_client(4)
    try:
        _, api = _api(fake, "anthropic:claude-3-5-haiku-latest", client)
        raw = api.provider  # type: ignore[attr-defined]
        bodies = [raw.body(ChatRequest.of("claude-3-5-haiku-latest", t, system="be brief")) for t in ("a", "bad", "c")]
        status, states, items = await _run(api, bodies)
        assert states == ["in_progress", "ended"]
        assert fake.uploads == 0 and fake.creations == 1
        assert status.counts["succeeded"] == 2 and status.counts["errored"] == 1
        by_id = {r.custom_id: r for r in items}
        assert by_id["c2"].body == anthropic_message(bodies[2])
        assert by_id["c1"].body is None and "api_error" in (by_id["c1"].error or "")
        found = await api.find("any", created_after=0.0, total=3)
        assert found is not None and found.id == status.id
        assert await api.find("any", created_after=0.0, total=3, taken=frozenset({status.id})) is None
        fake.hold = True
        enc = [api.encode("c0", bodies[0]), api.encode("c1", bodies[2])]
        held = await api.create("k", enc, None)
        assert (await api.cancel(held.id)).state == "canceling"
        fake.hold = False
        ended = await api.get(held.id)
        items = [r async for r in api.results(ended)]
        assert ended.state == "ended" and [r.error for r in items] == [None, "canceled"]
    finally:
        await client.aclose()


async def test_google_resumable_upload_states_results_and_failures(fake: FakeBatchServer) -> None:
    fake.fail_when("bad")
    client = make_client(4)
    try:
        _, api = _api(fake, "google:gemini-2.5-flash", client)
        raw = api.provider  # type: ignore[attr-defined]
        bodies = [raw.body(ChatRequest.of("gemini-2.5-flash", t, system="be brief")) for t in ("q 1", "bad 2", "q 3")]
        status, states, items = await _run(api, bodies, key="gk1")
        assert states == ["pending", "running", "succeeded"]
        assert fake.uploads == 1 and fake.creations == 1 and not fake.uploads_started  # the session finalized
        batch = next(iter(fake.batches.values()))
        assert batch.id == status.id and status.id.startswith("batches/") and status.key == "gk1"
        assert [b for _, b in batch.items] == [{"model": "gemini-2.5-flash", **b} for b in bodies]  # the chat bodies
        assert status.counts == {"total": 3, "completed": 2, "failed": 1, "pending": 0}
        assert status.progress() == "succeeded 3/3 (1 failed)"
        by_id = {r.custom_id: r for r in items}
        assert by_id["c2"].body == google_response(bodies[2], "gemini-2.5-flash")
        assert raw.parse(by_id["c2"].body, 0.0).text == "Answer (gemini-2.5-flash) to: q 3"
        assert by_id["c1"].body is None and "INTERNAL" in (by_id["c1"].error or "")
        # Expired (no responses file) and failed batches answer nothing: every request goes back.
        fake.expire_next = 1
        status, states, items = await _run(api, bodies, key="gk2")
        assert states[-1] == "expired" and status.ended and items == []
        fake.fail_next = 1
        status, states, items = await _run(api, bodies, key="gk3")
        assert states[-1] == "failed" and status.detail == "the batch failed" and items == []
        # Found again by its displayName (the run's key) after a kill; cancelled, it ends with what it did.
        fake.hold = True
        enc = [api.encode("c0", bodies[0]), api.encode("c1", bodies[2])]
        held = await api.create("gk4", enc, await api.upload("gk4", enc))
        found = await api.find("gk4", created_after=0.0, total=2)
        assert found is not None and found.id == held.id
        assert await api.find("gk4", created_after=0.0, total=2, taken=frozenset({held.id})) is None
        assert (await api.cancel(held.id)).state == "pending"
        fake.hold = False
        await api.get(held.id)
        ended = await api.get(held.id)
        items = [r async for r in api.results(ended)]
        assert ended.state == "cancelled" and ended.ended and [r.custom_id for r in items] == ["c0"]
    finally:
        await client.aclose()


def test_split_respects_requests_and_bytes() -> None:
    assert split([10] * 7, Limits(3, 10_000)) == [(0, 3), (3, 6), (6, 7)]
    assert split([10] * 7, Limits(100, 25)) == [(0, 2), (2, 4), (4, 6), (6, 7)]
    assert split([50, 1, 1], Limits(100, 25)) == [(0, 1), (1, 3)]  # too big alone: a batch of its own
    assert split([], Limits(1, 1)) == []
    assert Limits(50_000, 200).capped(10, None) == Limits(10, 200)
    assert Limits(50_000, 200).capped(90_000, 10**9) == Limits(50_000, 200)  # never above the provider's


def test_no_batch_api_for_other_providers(fake: FakeBatchServer) -> None:
    env = {**fake.env(), "MISTRAL_API_KEY": "x"}
    assert batch_api_for(provider_for_model("echo").provider) is None
    assert batch_api_for(provider_for_model("mistral:mistral-small", env=env).provider) is None
