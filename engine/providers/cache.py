"""A response cache on disk: one append-only JSONL file, keyed on the whole request.

Key: an HMAC-SHA-256, under this user's cache secret (cache_secret.py), of a canonical JSON of {provider
identity (name, URL, bound model, provider parameters), model, system, messages, temperature, max_tokens,
extra}. Change any generation parameter and it is a different entry. API keys and headers are not part of
the identity, so nothing secret is hashed or stored; the HMAC's secret means an entry planted in a results
folder by someone else matches no request of yours (a plain SHA-256 could be computed by anyone).

Why JSONL: one `write()` of a whole line per new entry, on a file opened O_APPEND, is cheap at thousands
of entries and survives the process being killed mid-run: at worst the last line is cut short, and that
line is skipped on the next load. Errors are never cached; a failed call is tried again next run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalspec.appendlog import AppendLog, read_records
from evalspec.jsonio import dumps_bytes
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
from evalspec.providers.cache_secret import cache_secret

CACHE_VERSION = 2  # 2: keys made with this user's secret (cache_secret.py)


def _num(x: float | None) -> float | None:
    # 0 and 0.0 must hash alike; JSON writes them differently.
    return None if x is None else float(x)


def cache_key(identity: Mapping[str, Any], req: ChatRequest) -> str:
    doc = {
        "v": CACHE_VERSION,
        "provider": identity,
        "model": req.model,
        "system": req.system,
        "messages": [[m.role, m.content] for m in req.messages],
        "temperature": _num(req.temperature),
        "max_tokens": req.max_tokens,
        "extra": req.extra,
    }
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hmac.new(cache_secret(), blob.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


class ResponseCache:
    """Load once, append per new entry. Safe for many concurrent tasks in one event loop."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._entries: dict[str, dict[str, Any]] = {}
        self._log = AppendLog(self.path)
        self.hits = 0
        self.misses = 0
        self._load()

    def _load(self) -> None:
        for rec in read_records(self.path):  # lines cut short by a kill are skipped
            if isinstance(rec.get("k"), str) and "r" in rec:
                self._entries[rec["k"]] = rec["r"]

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> ChatResult | None:
        rec = self._entries.get(key)
        if rec is None:
            self.misses += 1
            return None
        self.hits += 1
        return ChatResult.from_json(rec, cached=True)

    def put(self, key: str, result: ChatResult, *, model: str | None = None) -> None:
        rec = result.to_json()
        self._entries[key] = rec
        line: dict[str, Any] = {"k": key, "t": round(time.time(), 3), "r": rec}
        if model:
            line["m"] = model  # for people reading the file; not used on load
        self._append(dumps_bytes(line) + b"\n")

    def _append(self, data: bytes) -> None:
        self._log.write(data)

    def close(self) -> None:
        self._log.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


class _LeaderCancelled(Exception):
    pass


class CachedProvider:
    """Serves repeated requests from a ResponseCache; asks `inner` (and stores its answer) otherwise.

    Identical requests in flight at the same time share one call. Keyword arguments of `chat` (such as
    `on_retry` for a RetryingProvider) are passed through to `inner`.
    """

    def __init__(self, inner: Provider, cache: ResponseCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name: str = inner.name
        self._identity = cache_identity(inner)
        self._inflight: dict[str, asyncio.Future[ChatResult]] = {}

    def identity(self) -> dict[str, Any]:
        return self._identity

    async def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> ChatResult:
        key = cache_key(self._identity, req)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        pending = self._inflight.get(key)
        if pending is not None:
            try:
                result = await asyncio.shield(pending)
            except _LeaderCancelled:
                pass  # the task making the call was cancelled, not us: make it ourselves
            else:
                return dataclasses.replace(result, cached=True)
        fut: asyncio.Future[ChatResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            result = await self.inner.chat(req, on_retry=on_retry)
        except BaseException as exc:
            fut.set_exception(_LeaderCancelled() if isinstance(exc, asyncio.CancelledError) else exc)
            fut.exception()  # mark it retrieved: there may be no waiter
            raise
        finally:
            if self._inflight.get(key) is fut:
                del self._inflight[key]
        self.cache.put(key, result, model=req.model)
        fut.set_result(result)
        return result

    async def embed(self, texts: Sequence[str], *, model: str | None = None) -> list[list[float]]:
        if not isinstance(self.inner, EmbeddingProvider):
            raise ProviderError(CONFIG, f"{self.name}: no embeddings endpoint")
        return await self.inner.embed(texts, model=model)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    def __repr__(self) -> str:
        return f"CachedProvider({self.inner!r}, {str(self.cache.path)!r})"
