"""Bounded retries with exponential back-off and jitter, honouring Retry-After.

Retried: 429, 408/409, 5xx, timeouts and connection errors (ProviderError.retryable). Everything else
(401, 400, a malformed answer, a missing key) fails at once: repeating it cannot help and only burns
quota. Each retry is announced to `on_retry(attempt, delay, reason)` before the wait, so the runner can
show "retrying in 2.0 s (429)".

Two budgets bound a call: `max_retries` for errors (5xx, timeouts, connections) and
`max_throttle_retries` for rate-limit answers (429, 529, 503 with Retry-After: a storm is expected
to pass, an error is not), and `max_wait` seconds of back-off in all. A call that runs out fails with
the last error and says why it stopped. With an `AdaptiveLimit` (rate_limits.py) each attempt takes a
slot of the provider's lane, released before any wait, so waiting calls hold no slot.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from evalspec.providers.base import (
    CONFIG,
    ChatRequest,
    ChatResult,
    EmbeddingProvider,
    Provider,
    ProviderError,
    RetryCallback,
    cache_identity,
)
from evalspec.providers.rate_limits import DEFAULT_MAX_WAIT, AdaptiveLimit, is_throttle

T = TypeVar("T")



@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 2  # the reference client retries twice
    base_delay: float = 1.0  # first back-off, doubled each retry
    max_delay: float = 30.0  # cap on any computed back-off
    max_retry_after: float = 60.0  # cap on a server's Retry-After (a day-long ban is not worth waiting)
    jitter: float = 0.2  # ± fraction of the back-off, so many workers do not retry in lockstep
    max_throttle_retries: int = 6  # retries of rate-limit answers (429, 529, 503 + Retry-After)
    max_wait: float = DEFAULT_MAX_WAIT  # seconds of back-off one call may spend in all

    def delay_for(self, attempt: int, retry_after: float | None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if retry_after is not None:
            # The server said when; do as told (capped). No jitter: waiting less would be refused again.
            return max(0.0, min(retry_after, self.max_retry_after))
        backoff = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        if self.jitter:
            r = (rng or random).uniform(-self.jitter, self.jitter)
            backoff = backoff * (1.0 + r)
        return max(0.0, min(backoff, self.max_delay))


DEFAULT_POLICY = RetryPolicy()
NO_RETRY = RetryPolicy(max_retries=0, max_throttle_retries=0)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Retry-After is delta-seconds ("2", some servers send "0.5") or an HTTP date. None if unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def retry_after_from_headers(headers: Mapping[str, str]) -> float | None:
    # OpenAI also sends `retry-after-ms`, more precise than the whole seconds of Retry-After.
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def reason_of(err: ProviderError) -> str:
    return str(err.status) if err.status is not None else err.kind


async def retry_call(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy = DEFAULT_POLICY,
    on_retry: RetryCallback | None = None,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    limit: AdaptiveLimit | None = None,
) -> T:
    """Run `call` until it succeeds, a non-retryable ProviderError occurs, or a budget runs out. With
    `limit`, each attempt holds one of its slots (a retry queues ahead of first attempts)."""
    errors = throttles = 0
    waited = 0.0
    while True:
        if limit is not None:
            await limit.acquire(retry=errors + throttles > 0)
        try:
            return await call()
        except ProviderError as err:
            if not err.retryable:
                raise
            throttled = is_throttle(err.status, err.retry_after)
            if throttled:
                throttles += 1
                budget, used = policy.max_throttle_retries, throttles
            else:
                errors += 1
                budget, used = policy.max_retries, errors
            attempts = errors + throttles
            if used > budget:
                if attempts == 1:
                    raise
                raise _gave_up(err, f"gave up after {attempts} attempts"
                                    + (f", {waited:.1f} s of waiting" if waited >= 0.05 else "")) from None
            delay = policy.delay_for(used, err.retry_after)
            if waited + delay > policy.max_wait:
                raise _gave_up(err, f"gave up after {attempts} attempt(s): waiting {delay:.1f} s more would pass "
                                    f"the limit of {policy.max_wait:g} s of waiting per call") from None
            waited += delay
            reason = reason_of(err)  # `err` is unbound after the except block
        finally:
            if limit is not None:
                limit.release()
        if on_retry is not None:
            res = on_retry(attempts, delay, reason)
            if asyncio.iscoroutine(res):
                await res
        await sleep(delay)


def _gave_up(err: ProviderError, why: str) -> ProviderError:
    """`err` with the reason retrying stopped appended (kind and status kept: the cell shows both)."""
    return ProviderError(err.kind, f"{err.message} ({why})", err.status, err.retryable,
                         retry_after=err.retry_after, provider=err.provider)


class RetryingProvider:
    """Wraps any provider with a RetryPolicy. `chat(req, on_retry=…)` reports per call."""

    def __init__(
        self, inner: Provider, policy: RetryPolicy = DEFAULT_POLICY, on_retry: RetryCallback | None = None
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.on_retry = on_retry
        self.name: str = inner.name
        # The provider's lane (rate_limits.py), set by the runner for the key this provider calls with.
        self.limit: AdaptiveLimit | None = None

    def identity(self) -> dict[str, Any]:
        return cache_identity(self.inner)

    def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> Coroutine[Any, Any, ChatResult]:
        # retry_call's coroutine itself (a frame less on every call's every resumption)
        return retry_call(lambda: self.inner.chat(req), self.policy, on_retry or self.on_retry, limit=self.limit)

    async def embed(self, texts: Sequence[str], *, model: str | None = None) -> list[list[float]]:
        inner = self.inner
        if not isinstance(inner, EmbeddingProvider):
            raise ProviderError(CONFIG, f"{self.name}: no embeddings endpoint")
        return await retry_call(lambda: inner.embed(texts, model=model), self.policy, self.on_retry,
                                limit=self.limit)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    def __repr__(self) -> str:
        return f"RetryingProvider({self.inner!r}, max_retries={self.policy.max_retries})"
