"""Retries: 429 + Retry-After honoured, 5xx back-off, timeouts, connection errors, non-retryable 4xx."""

from __future__ import annotations

import random
import socket

import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatRequest, RetryPolicy, provider_for_model
from evalspec.providers.base import BAD_REQUEST, CONNECTION, RATE_LIMIT, SERVER, TIMEOUT, ProviderError
from evalspec.providers.retry import NO_RETRY, parse_retry_after, retry_after_from_headers

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05, max_retry_after=5.0)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[int, float, str]] = []

    def __call__(self, attempt: int, delay: float, reason: str) -> None:
        self.calls.append((attempt, delay, reason))


async def test_429_retry_after_is_honoured(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.rate_limited(0.2))
    b = provider_for_model("openai:m", client=client, env=env, retry=FAST)
    seen = Recorder()
    res = await b.provider.chat(ChatRequest.of("m", "q"), on_retry=seen)
    assert res.text == "ECHO: q"
    assert seen.calls == [(1, 0.2, "429")]
    first, second = fake.requests
    # Not a speed check: the client must actually have waited what the server asked before retrying.
    assert second.at - first.at >= 0.19


async def test_retry_after_ms_is_preferred(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.rate_limited(7, retry_after_ms=150))
    b = provider_for_model("openai:m", client=client, env=env, retry=FAST)
    seen = Recorder()
    await b.provider.chat(ChatRequest.of("m", "q"), on_retry=seen)
    assert seen.calls == [(1, 0.15, "429")]


async def test_retry_after_is_capped(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.rate_limited(3600))
    policy = RetryPolicy(max_retries=1, max_retry_after=0.05)
    b = provider_for_model("openai:m", client=client, env=env, retry=policy)
    seen = Recorder()
    await b.provider.chat(ChatRequest.of("m", "q"), on_retry=seen)
    assert seen.calls == [(1, 0.05, "429")]


async def test_500_then_success_with_exponential_back_off(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.server_error(500), Reply.server_error(503))
    b = provider_for_model("anthropic:c", client=client, env=env, retry=FAST)
    seen = Recorder()
    res = await b.provider.chat(ChatRequest.of("c", "q"), on_retry=seen)
    assert res.text == "ECHO: q"
    assert [(a, r) for a, _, r in seen.calls] == [(1, "500"), (2, "503")]
    assert all(0 < d <= FAST.max_delay for _, d, _ in seen.calls)
    assert fake.count == 3


async def test_retries_are_bounded(fake: FakeProvider, client, env) -> None:
    fake.then(*[Reply.server_error(502)] * 5)
    b = provider_for_model("openai:m", client=client, env=env, retry=FAST)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    assert (e.value.kind, e.value.status, e.value.retryable) == (SERVER, 502, True)
    assert fake.count == 3  # one try + max_retries


async def test_429_without_retries_reports_retry_after(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.rate_limited(2))
    b = provider_for_model("openai:m", client=client, env=env, retry=NO_RETRY)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    assert (e.value.kind, e.value.retry_after) == (RATE_LIMIT, 2.0)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_other_4xx_fail_at_once(fake: FakeProvider, client, env, status: int) -> None:
    fake.then(Reply.error(status, "nope"))
    b = provider_for_model("openai:m", client=client, env=env, retry=FAST)
    seen = Recorder()
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"), on_retry=seen)
    assert e.value.status == status and not e.value.retryable
    assert "nope" in e.value.message
    assert fake.count == 1 and seen.calls == []
    if status == 400:
        assert e.value.kind == BAD_REQUEST


async def test_timeout_is_an_error_and_is_retried(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.hang(5))
    b = provider_for_model("openai:m", client=client, env=env, timeout=0.3, retry=NO_RETRY)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    assert (e.value.kind, e.value.retryable) == (TIMEOUT, True)
    assert "0.3 s" in e.value.message

    fake.then(Reply.hang(5))
    b = provider_for_model("openai:m", client=client, env=env, timeout=0.3, retry=FAST)
    seen = Recorder()
    res = await b.provider.chat(ChatRequest.of("m", "again"), on_retry=seen)
    assert res.text == "ECHO: again"
    assert [r for _, _, r in seen.calls] == ["timeout"]


async def test_connection_refused(client, env) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    env = {**env, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    b = provider_for_model("openai:m", client=client, env=env, retry=FAST)
    seen = Recorder()
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"), on_retry=seen)
    assert (e.value.kind, e.value.retryable) == (CONNECTION, True)
    assert [r for _, _, r in seen.calls] == ["connection", "connection"]


async def test_server_closing_the_connection_is_retried(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.close())
    b = provider_for_model("openai:m", client=client, env=env, retry=FAST)
    seen = Recorder()
    assert (await b.provider.chat(ChatRequest.of("m", "q"), on_retry=seen)).text == "ECHO: q"
    assert [r for _, _, r in seen.calls] == ["connection"]


def test_parse_retry_after() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.2") == 0.2
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    now = 784111777.0  # Sun, 06 Nov 1994 08:49:37 GMT
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:40 GMT", now=now) == 3.0
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now=now) == 0.0
    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"}) == 0.25


def test_back_off_doubles_with_bounded_jitter() -> None:
    p = RetryPolicy(base_delay=1.0, max_delay=30.0, jitter=0.2)
    rng = random.Random(7)
    for attempt, nominal in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0)):
        for _ in range(50):
            d = p.delay_for(attempt, None, rng)
            assert nominal * 0.8 <= d <= nominal * 1.2
    assert p.delay_for(10, None, rng) <= 30.0
    assert RetryPolicy(jitter=0).delay_for(3, None) == 4.0
    assert p.delay_for(1, 0.2) == 0.2  # a server's Retry-After is used as given
