"""Adaptive concurrency (providers/rate_limits.py) and its bounds in retry_call: header parsing, halving
once per wave, Retry-After pauses, pacing on low headroom, recovery, giving up; and the real HTTP client
against rate-limited servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest
from fakeprovider import FakeProvider, RateLimitedFake, Reply

from evalspec.providers import ChatRequest, RetryPolicy, provider_for_model
from evalspec.providers.base import RATE_LIMIT, ProviderError
from evalspec.providers.rate_limits import (
    AdaptiveLimit,
    LimitChange,
    is_throttle,
    parse_duration,
    parse_reset_time,
    rate_limit_headers,
    read_headroom,
)
from evalspec.providers.retry import parse_retry_after, retry_call


def test_go_durations_of_openai_reset_headers() -> None:
    assert parse_duration("1s") == 1.0
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("120ms") == pytest.approx(0.12)
    assert parse_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert parse_duration("0.5") == 0.5
    assert parse_duration("20us") == pytest.approx(2e-5)
    for bad in ("", None, "soon", "5 s", "1x", "-3", "s"):
        assert parse_duration(bad) is None, bad


def test_rfc3339_reset_times_of_anthropic() -> None:
    now = 1_700_000_000.0
    assert parse_reset_time("2023-11-14T22:13:25Z", now=now) == pytest.approx(5.0)
    assert parse_reset_time("2023-11-14T23:13:20+01:00", now=now) == pytest.approx(0.0)
    assert parse_reset_time("2023-11-14T22:13:10Z", now=now) == 0.0  # in the past: now
    assert parse_reset_time("2023-11-14T22:13:25", now=now) is None  # no zone: unusable
    assert parse_reset_time("tomorrow", now=now) is None


def test_retry_after_as_an_http_date() -> None:
    now = time.time()
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0


def test_headroom_from_openai_and_anthropic_headers() -> None:
    raw = {"X-RateLimit-Limit-Requests": "500", "x-ratelimit-remaining-requests": "12",
           "x-ratelimit-reset-requests": "1.5s", "x-ratelimit-limit-tokens": "30000",
           "x-ratelimit-remaining-tokens": "29000", "x-ratelimit-reset-tokens": "6m0s", "content-type": "x"}
    found = rate_limit_headers(raw)
    assert found is not None and "content-type" not in found
    quotas = {q.quota: q for q in read_headroom(found)}
    assert (quotas["requests"].remaining, quotas["requests"].limit, quotas["requests"].reset) == (12, 500, 1.5)
    assert (quotas["tokens"].remaining, quotas["tokens"].reset) == (29000, 360.0)
    assert quotas["requests"].low(concurrency=32) and not quotas["tokens"].low(concurrency=32)

    anthropic = {"anthropic-ratelimit-input-tokens-limit": "40000",
                 "anthropic-ratelimit-input-tokens-remaining": "0",
                 "anthropic-ratelimit-input-tokens-reset": "2099-01-01T00:00:00Z"}
    (q,) = read_headroom(rate_limit_headers(anthropic) or {})
    assert (q.quota, q.exhausted, q.limit) == ("input tokens", True, 40000) and q.reset and q.reset > 1e6
    assert rate_limit_headers({"content-type": "application/json"}) is None


def test_what_counts_as_throttled() -> None:
    assert is_throttle(429) and is_throttle(529) and is_throttle(503, 2.0)
    assert not is_throttle(503) and not is_throttle(500, 1.0) and not is_throttle(None)


def _lane(ceiling: int = 8, **kw: object) -> tuple[AdaptiveLimit, list[LimitChange]]:
    seen: list[LimitChange] = []
    return AdaptiveLimit("openai", ceiling, on_change=seen.append, **kw), seen  # type: ignore[arg-type]


async def test_a_burst_of_429s_halves_once_and_retry_after_pauses_everyone() -> None:
    lane, seen = _lane(8)
    gens = [await lane.acquire() for _ in range(8)]
    for g in gens:  # eight calls of one wave all answered 429, Retry-After 0.3 s
        lane.observe(429, {}, g, retry_after=0.3)
        lane.release()
    assert lane.limit == 4  # one halving, not three
    changes = [(c.reason, c.before, c.after, c.wait) for c in seen if c.after != c.before or c.wait]
    # The first 429 alone pauses (its Retry-After) without halving; the second makes it a storm (the
    # pause it reports is what is left of the first one's).
    assert [c[:3] for c in changes] == [("429", 8, 8), ("429", 8, 4)]
    assert changes[0][3] == 0.3 and 0.25 <= changes[1][3] <= 0.3
    assert len(seen) == 8 and seen[-1].throttled == 8  # each 429 is counted, unchanged ones included
    t0 = time.monotonic()
    await lane.acquire()  # nobody starts before the Retry-After is over
    assert time.monotonic() - t0 >= 0.28
    lane.observe(429, {}, lane.generation)  # a call of the new wave is refused too: halve again
    lane.release()
    assert lane.limit == 2 and seen[-1].after == 2


async def test_isolated_429s_do_not_halve_but_a_storm_does() -> None:
    lane, seen = _lane(30)
    for n in range(500):  # 2 % of the answers throttled, one at a time, Retry-After 0
        g = await lane.acquire()
        lane.observe(429 if n % 50 == 25 else 200, {}, g, retry_after=0.0 if n % 50 == 25 else None)
        lane.release()
    assert lane.limit == 30 and lane.throttled == 10 and all(c.after == c.before for c in seen)
    for _ in range(6):  # then the quota is hit: answer after answer is 429
        g = await lane.acquire()
        lane.observe(429, {}, g, retry_after=0.0)
        lane.release()
    assert lane.limit < 30 and any(c.after < c.before for c in seen)


async def test_the_limit_bounds_calls_in_flight_and_recovers_additively() -> None:
    lane, seen = _lane(4)
    lane.limit = 2
    peak = 0

    async def call() -> None:
        nonlocal peak
        g = await lane.acquire()
        peak = max(peak, lane.in_flight)
        await asyncio.sleep(0.01)
        lane.observe(200, {}, g)
        lane.release()

    await asyncio.gather(*(call() for _ in range(12)))
    assert peak <= 4 and lane.limit == 4  # 2 successes → 3, 3 more → 4, then the ceiling holds
    assert [(c.reason, c.before, c.after) for c in seen] == [("recovering", 2, 3), ("recovering", 3, 4)]


async def test_low_requests_headroom_paces_calls_before_any_429() -> None:
    lane, seen = _lane(8)
    g = await lane.acquire()
    # 5 of 100 left, full again in 1 s: 95 requests refill per second → one start every ~11.6 ms.
    lane.observe(200, {"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "5",
                       "x-ratelimit-reset-requests": "1s"}, g)
    lane.release()
    assert lane.interval == pytest.approx(1.1 / 95)
    assert seen[-1].pace == pytest.approx(95 / 1.1, rel=0.01) and "requests remaining 5 of 100" in seen[-1].reason
    t0 = time.monotonic()
    for _ in range(6):
        await lane.acquire()
        lane.release()
    assert time.monotonic() - t0 >= 5 * lane.interval * 0.9  # spaced, not at once
    assert lane.limit == 8  # pacing, not a lower concurrency
    g = lane.generation
    lane.observe(200, {"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "90"}, g)
    assert lane.interval == 0.0 and "pacing ended" in seen[-1].reason


async def test_an_exhausted_token_quota_pauses_until_its_reset() -> None:
    lane, seen = _lane(8)
    g = await lane.acquire()
    lane.observe(200, {"anthropic-ratelimit-tokens-limit": "1000", "anthropic-ratelimit-tokens-remaining": "0",
                       "anthropic-ratelimit-tokens-reset": _rfc3339(time.time() + 0.4)}, g)
    lane.release()
    assert lane.limit == 4 and 0.3 <= seen[-1].wait <= 0.41 and seen[-1].reason == "tokens remaining 0 of 1,000"
    t0 = time.monotonic()
    await lane.acquire()
    assert time.monotonic() - t0 >= 0.25


def _rfc3339(t: float) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(t, datetime.UTC).isoformat().replace("+00:00", "Z")


async def test_a_lane_with_nothing_but_429s_gives_up_and_fails_its_waiters() -> None:
    lane, seen = _lane(1, max_wait=0.2)
    g = await lane.acquire()
    lane.observe(429, {}, g, retry_after=0.05)
    lane.release()
    await asyncio.sleep(0.25)
    g = await lane.acquire()
    waiter = asyncio.ensure_future(lane.acquire())  # waits for the one slot
    await asyncio.sleep(0)
    lane.observe(429, {}, g, retry_after=0.3)  # no success since the first 429, 0.25 s ago: give up
    lane.release()
    with pytest.raises(ProviderError) as e:
        await waiter
    assert e.value.kind == RATE_LIMIT and "gave up" in e.value.message and "--retry-errors" in e.value.message
    with pytest.raises(ProviderError):
        await lane.acquire()
    assert seen[-1].gave_up


async def test_a_cancelled_waiter_hands_its_slot_on() -> None:
    lane, _ = _lane(1)
    await lane.acquire()
    first = asyncio.ensure_future(lane.acquire())
    second = asyncio.ensure_future(lane.acquire())
    await asyncio.sleep(0)
    first.cancel()
    lane.release()
    await asyncio.wait_for(second, 1)
    assert lane.in_flight == 1


async def test_throttle_retries_have_their_own_budget_and_the_bound_is_named() -> None:
    calls = 0

    async def refused() -> str:
        nonlocal calls
        calls += 1
        raise ProviderError(RATE_LIMIT, "openai: HTTP 429: slow down", 429, True, retry_after=0.0)

    policy = RetryPolicy(max_retries=0, max_throttle_retries=3, max_wait=5.0)
    with pytest.raises(ProviderError) as e:
        await retry_call(refused, policy)
    assert calls == 4 and "gave up after 4 attempts" in e.value.message and e.value.status == 429

    calls = 0
    waits = RetryPolicy(max_throttle_retries=10, max_wait=1.0, max_retry_after=60)

    async def long_retry_after() -> str:
        nonlocal calls
        calls += 1
        raise ProviderError(RATE_LIMIT, "openai: HTTP 429: slow down", 429, True, retry_after=30.0)

    with pytest.raises(ProviderError) as e:
        await retry_call(long_retry_after, waits, sleep=_no_sleep)
    assert calls == 1 and "limit of 1 s of waiting per call" in e.value.message


async def _no_sleep(_: float) -> None:
    return None


async def test_the_real_client_paces_under_an_openai_quota(client, env) -> None:
    with RateLimitedFake(5, 0.5, latency=0.02) as fake:
        binding = provider_for_model("openai:m", client=client, env={**env, "OPENAI_BASE_URL": fake.url("/v1")},
                                     retry=RetryPolicy(max_retries=0, max_throttle_retries=8, max_wait=10))
        lane, seen = _lane(8)
        binding.provider.limit = lane  # type: ignore[attr-defined]
        binding.provider.inner.rate_limit = lane  # type: ignore[attr-defined]
        answers = await asyncio.gather(*(binding.provider.chat(ChatRequest.of("m", f"q{i}")) for i in range(30)))
        assert [a.text for a in answers] == [f"ECHO: q{i}" for i in range(30)]
        assert any(c.pace for c in seen)
        # The first wave meets the wall; once paced, few more requests are refused.
        assert fake.refused <= 10, fake.refused


async def test_insufficient_quota_is_not_retried(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.raw(429, {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}},
                        **{"retry-after": "1"}))
    b = provider_for_model("openai:m", client=client, env=env, retry=RetryPolicy(max_throttle_retries=5))
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    assert (e.value.kind, e.value.retryable, fake.count) == (RATE_LIMIT, False, 1)
    assert "quota is used up" in e.value.message


async def test_a_reset_header_of_hours_pauses_no_longer_than_max_wait() -> None:
    """The attack run's second round: `x-ratelimit-reset-requests: 99999h` on a 429 paused the lane for
    its 60 s cap although --max-wait was 0.3 s: the lane noticed it had given up only when the pause
    ended. A waiter now fails with the lane once max_wait has passed."""
    lane, seen = _lane(1, max_wait=0.3)
    g = await lane.acquire()
    lane.observe(429, {"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "0",
                       "x-ratelimit-reset-requests": "99999h"}, g)
    lane.release()
    assert lane.paused_until - asyncio.get_running_loop().time() <= 0.3  # not the 60 s cap
    with pytest.raises(ProviderError) as e:
        await asyncio.wait_for(lane.acquire(), 30)  # a guard against the hang, not a timing
    assert "gave up" in e.value.message and seen[-1].gave_up
