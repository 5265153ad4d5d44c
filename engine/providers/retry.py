"""Bounded retries with exponential back-off and jitter, honouring Retry-After.

Retried: 429, 408/409, 5xx, timeouts and connection errors (ProviderError.retryable). Everything else
(401, 400, a malformed answer, a missing key) fails at once: repeating it cannot help and only burns
quota. Each retry is announced to `on_retry(attempt, delay, reason)` before the wait, so the runner can
show "retrying in 2.0 s (429)".
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
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

T = TypeVar("T")



@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 2  # the reference client retries twice
    base_delay: float = 1.0  # first back-off, doubled each retry
    max_delay: float = 30.0  # cap on any computed back-off
    max_retry_after: float = 60.0  # cap on a server's Retry-After (a day-long ban is not worth waiting)
    jitter: float = 0.2  # ± fraction of the back-off, so many workers do not retry in lockstep

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
NO_RETRY = RetryPolicy(max_retries=0)


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
) -> T:
    """Run `call` until it succeeds, a non-retryable ProviderError occurs, or retries run out."""
    attempt = 0
    while True:
        try:
            return await call()
        except ProviderError as err:
            if not err.retryable or attempt >= policy.max_retries:
                raise
            attempt += 1
            delay = policy.delay_for(attempt, err.retry_after)
            if on_retry is not None:
                res = on_retry(attempt, delay, reason_of(err))
                if asyncio.iscoroutine(res):
                    await res
            await sleep(delay)


class RetryingProvider:
    """Wraps any provider with a RetryPolicy. `chat(req, on_retry=…)` reports per call."""

    def __init__(
        self, inner: Provider, policy: RetryPolicy = DEFAULT_POLICY, on_retry: RetryCallback | None = None
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.on_retry = on_retry
        self.name: str = inner.name

    def identity(self) -> dict[str, Any]:
        return cache_identity(self.inner)

    async def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> ChatResult:
        return await retry_call(lambda: self.inner.chat(req), self.policy, on_retry or self.on_retry)

    async def embed(self, texts: Sequence[str], *, model: str | None = None) -> list[list[float]]:
        inner = self.inner
        if not isinstance(inner, EmbeddingProvider):
            raise ProviderError(CONFIG, f"{self.name}: no embeddings endpoint")
        return await retry_call(lambda: inner.embed(texts, model=model), self.policy, self.on_retry)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    def __repr__(self) -> str:
        return f"RetryingProvider({self.inner!r}, max_retries={self.policy.max_retries})"
