"""Provider calls for one run: the shared HTTP client, the limits, retries surfaced as events.

Every call of a run (answers, judges, key-point extraction, embeddings) goes through `Calls`: one
global limit (`--concurrency`) and one limit per provider, one client (providers/http.py) sized to the
concurrency, bounded retries from providers/retry.py reported as `Retrying` events, the per-call
timeout of the providers, and the response cache when `--cache` is on.

HTTP providers are limited per provider and key by an adaptive lane (providers/rate_limits.py) instead
of the fixed per-provider limit: it halves on 429s, honours Retry-After, slows down when rate-limit
headers run low, recovers step by step, and each change is a `RateLimit` event. Every model and judge
calling with one key shares its lane (`lanes`, keyed by `HttpProvider.quota_key()`). A lane's slot is
taken per attempt, then the global limit, so a call waiting to retry holds neither.
`--fixed-concurrency` (options.adaptive_concurrency False) keeps the fixed limits.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...providers.base import CONFIG, ChatRequest, ChatResult, EmbeddingProvider, Provider, ProviderError
from ..events import CallStarted, Cell, Event, RateLimit, Retrying
from ..options import RunOptions

if TYPE_CHECKING:
    from ...providers.factory import ModelBinding

Emit = Callable[[Event], None]
OFFLINE = frozenset({"echo"})


def provider_key(model: str) -> str:
    """The provider a model id is limited under: `openai` for `openai:gpt-4o-mini`."""
    head, sep, _ = model.partition(":")
    return head.strip().lower() if sep else model


class Calls:
    def __init__(self, options: RunOptions, emit: Emit, *, concurrency: int) -> None:
        from ...providers.retry import RetryPolicy

        self.options = options
        self.emit = emit
        self.concurrency = max(1, concurrency)
        self._global = asyncio.Semaphore(self.concurrency)
        self._per_provider: dict[str, asyncio.Semaphore] = {}
        self._client: Any = None
        self._cache: Any = None
        self._bindings: dict[str, Any] = {}
        self.policy = RetryPolicy(max_retries=max(0, options.max_retries),
                                  max_throttle_retries=max(0, options.max_rate_limit_retries),
                                  max_wait=max(0.0, options.max_wait))
        self.lanes: dict[str, Any] = {}  # quota key → AdaptiveLimit
        self._lane_of: dict[int, tuple[Any, Any]] = {}  # id(provider) → (provider, AdaptiveLimit or None)
        self.calls = 0  # requests that reached a provider (cache hits excluded)
        self.cached = 0
        self.spend: Any = None  # spend.Spend: every chat call's usage and cost (cost/guard.py sets it)

    def share(self, part: int, parts: int) -> None:
        """This process makes `part` (0-based) of `parts` processes' share of the calls in flight: the global
        limit and each provider's, split so that together they are the run's (run/split.py). Before any
        call: the limits are made again."""
        def of(n: int) -> int:
            return max(1, n // parts + (1 if part < n % parts else 0))

        self.concurrency = of(self.concurrency)
        self._global = asyncio.Semaphore(self.concurrency)
        self._per_provider.clear()
        self.options = dataclasses.replace(self.options, provider_concurrency={
            key: of(n) for key, n in self.options.provider_concurrency.items()})

    # --- set-up -----------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            from ...providers.http import make_client

            self._client = make_client(self.concurrency, timeout=self.options.timeout,
                                       transport=self.options.transport,
                                       max_response_bytes=self.options.max_response_bytes)
        return self._client

    @property
    def cache(self) -> Any:
        if self._cache is None and self.options.cache:
            from ...providers.cache import ResponseCache

            self._cache = ResponseCache(self.options.cache_path)
        return self._cache

    def model(self, model: str | Mapping[str, Any], *, cache: bool = True) -> ModelBinding:
        """A ModelBinding for a `provider:model` id or a custom model object. Raises ProviderError
        (missing key, unknown provider) before any HTTP; the error is remembered for the next asker.
        `cache=False` (a prompt's `noCache`) bypasses the response cache for this binding."""
        key = model if isinstance(model, str) else str(model.get("id"))
        if not cache:
            key = f"{key}\x00nocache"
        got = self._bindings.get(key)
        if got is None:
            from ...providers.factory import provider_for_model

            # Offline models need no HTTP client: do not build one (its TLS set-up alone costs ~50 ms).
            offline = isinstance(model, str) and provider_key(model) in OFFLINE
            try:
                got = provider_for_model(model, client=None if offline else self.client, env=self.options.env,
                                         timeout=self.options.timeout, retry=self.policy,
                                         cache=None if offline or not cache else self.cache)
            except ProviderError as err:
                got = err
            except (ValueError, TypeError) as err:
                got = ProviderError(CONFIG, f"{key}: {err}")
            self._bindings[key] = got
        if isinstance(got, ProviderError):
            raise got
        return got

    def target(self, name: str, target: Mapping[str, Any], base_dir: Any = None, *, key: str | None = None
               ) -> Provider:
        """A provider for an AgentV target (targets.yaml entry), kept under `key` (default `target:<name>`).
        Raises ProviderError."""
        key = key or f"target:{name}"
        got = self._bindings.get(key)
        if got is None:
            from ...providers.targets import provider_from_target

            try:
                got = provider_from_target(target, client=self.client, env=self.options.env, base_dir=base_dir,
                                           timeout=self.options.timeout, retry=self.policy, cache=self.cache)
            except ProviderError as err:
                got = err
            self._bindings[key] = got
        if isinstance(got, ProviderError):
            raise got
        return got

    def _limit(self, key: str) -> asyncio.Semaphore:
        sem = self._per_provider.get(key)
        if sem is None:
            n = self.options.provider_concurrency.get(key, self.concurrency)
            sem = self._per_provider[key] = asyncio.Semaphore(max(1, min(n, self.concurrency)))
        return sem

    def lane(self, provider: Any, limit_key: str) -> Any:
        """The adaptive lane of an HTTP provider's key (made on first use, and attached to the provider's
        retry wrapper and HTTP client), None for other providers or with --fixed-concurrency."""
        got = self._lane_of.get(id(provider))
        if got is not None:
            return got[1]
        lane = None
        if self.options.adaptive_concurrency:
            from ...providers.http import HttpProvider
            from ...providers.retry import RetryingProvider

            retrying, node = None, provider
            for _ in range(8):  # the wrappers of providers/factory.py: cache → retry → HTTP
                if isinstance(node, RetryingProvider):
                    retrying = node
                if isinstance(node, HttpProvider) or node is None:
                    break
                node = getattr(node, "inner", None)
            if retrying is not None and isinstance(node, HttpProvider):
                key = node.quota_key()
                lane = self.lanes.get(key)
                if lane is None:
                    lane = self.lanes[key] = self._new_lane(limit_key)
                retrying.limit = node.rate_limit = lane
        self._lane_of[id(provider)] = (provider, lane)  # the provider is kept so that its id stays its own
        return lane

    def _new_lane(self, limit_key: str) -> Any:
        from ...providers.rate_limits import AdaptiveLimit, LimitChange

        taken = sum(1 for lane in self.lanes.values() if lane.label.split(" #")[0] == limit_key)
        label = f"{limit_key} #{taken + 1}" if taken else limit_key
        ceiling = max(1, min(self.options.provider_concurrency.get(limit_key, self.concurrency), self.concurrency))
        emit = self.emit

        def on_change(c: LimitChange) -> None:
            emit(RateLimit(c.lane, c.reason, c.after, c.before, c.ceiling, c.wait, c.throttled, c.gave_up, c.pace))

        return AdaptiveLimit(label, ceiling, on_change=on_change, shared=self._global, max_wait=self.policy.max_wait)

    # --- calls ------------------------------------------------------------------------------------
    async def chat(self, provider: Provider, req: ChatRequest, cell: Cell, *, limit_key: str,
                   purpose: str = "generate", model_label: str = "") -> ChatResult:
        """One chat call under the limits. Raises ProviderError."""
        emit = self.emit

        def on_retry(attempt: int, delay: float, reason: str) -> None:
            emit(Retrying(cell, attempt, delay, reason, purpose))

        if self.lane(provider, limit_key) is not None:
            # The lane takes its slot and the global one per attempt (inside the provider's retries).
            emit(CallStarted(cell, purpose, model_label))
            result = await provider.chat(req, on_retry=on_retry)
        else:
            async with self._limit(limit_key), self._global:
                emit(CallStarted(cell, purpose, model_label))
                result = await provider.chat(req, on_retry=on_retry)
        if result.cached:
            self.cached += 1
        else:
            self.calls += 1
        if self.spend is not None:
            self.spend.record(purpose, model_label, cell, model=req.model, reported=result.raw_model,
                              input_tokens=result.usage.input_tokens, output_tokens=result.usage.output_tokens,
                              cached=result.cached)
        return result

    async def embed(self, provider: Provider, texts: Sequence[str], model_name: str, *, limit_key: str,
                    cell: Cell) -> list[list[float]]:
        if not isinstance(provider, EmbeddingProvider):
            raise ProviderError(CONFIG, f"{provider_key(model_name) or model_name}: no embeddings endpoint")
        if self.lane(provider, limit_key) is not None:
            self.emit(CallStarted(cell, "embed", model_name))
            vectors = await provider.embed(list(texts), model=model_name)
        else:
            async with self._limit(limit_key), self._global:
                self.emit(CallStarted(cell, "embed", model_name))
                vectors = await provider.embed(list(texts), model=model_name)
        self.calls += 1
        if self.spend is not None:  # priced like any call; an answer that reports no usage costs "unknown"
            usage = getattr(vectors, "usage", None)
            self.spend.record("embed", cell.model, cell, model=model_name, reported=getattr(vectors, "model", None),
                              input_tokens=usage.input_tokens if usage is not None else None, output_tokens=0)
        return vectors

    async def aclose(self) -> None:
        if self._cache is not None:
            self._cache.close()
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()
