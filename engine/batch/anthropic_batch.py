"""Anthropic Message Batches: `POST /v1/messages/batches` with `requests: [{custom_id, params}]`, polled
until `processing_status` is `ended`, then the results JSONL from `results_url`.

A message batch has no metadata and no name (the list gives id, states, request_counts and times only).
A batch created just before a kill, whose id the journal never got, is found by listing the batches:
one created after the plan was journaled, with the plan's number of requests, that no other part of the
run has claimed. Once it has ended its results name it: every custom id carries its part's tag
(`<tag>-r<n>`, run/generate/batch_stage.py), read from the results' first line (`first_custom_id`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import Any

import httpx

from ..jsonio import dumps_bytes
from ..providers.anthropic import AnthropicProvider
from ..providers.base import BAD_RESPONSE, ProviderError
from .api import ANTHROPIC_MAX_BYTES, ANTHROPIC_MAX_REQUESTS, BatchStatus, ItemResult, Limits
from .http_batches import HttpBatches
from .part_file import Framing, PartFile, part_file
from .wire import jsonl_lines, request_json, segment


class AnthropicBatches(HttpBatches):
    api = "anthropic"
    framing = Framing(b'{"requests":[', b",", b"]}")  # the creation's body
    list_cursor = "after_id"
    tagged = True  # a message batch has no metadata: its results' custom ids say whose it is

    def __init__(self, provider: AnthropicProvider, limits: Limits | None = None) -> None:
        self.provider = provider
        self.name = provider.name
        self.limits = limits or Limits(ANTHROPIC_MAX_REQUESTS, ANTHROPIC_MAX_BYTES)
        self.batches_url = f"{provider.url.rstrip('/')}/batches"

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        return dumps_bytes({"custom_id": custom_id, "params": body})

    async def upload(self, key: str, requests: PartFile | Iterable[bytes]) -> str | None:
        return None  # the requests go in the creation's body

    async def create(self, key: str, requests: PartFile | Iterable[bytes], file_id: str | None) -> BatchStatus:
        with part_file(requests, self.framing) as part:  # the body, streamed from the batch's file
            data = await request_json(self.provider.client, self.name, "POST", self.batches_url, self._headers,
                                      max(self._timeout, 300.0), content=part.chunks(), length=part.length)
        return self._status(data)

    async def find(self, key: str, *, created_after: float, total: int,
                   taken: frozenset[str] = frozenset()) -> BatchStatus | None:
        async with contextlib.aclosing(self._listed(created_after)) as listed:
            async for item in listed:
                status = self._status(item)
                if status.id in taken or status.created_at is None or status.created_at < created_after - 5:
                    continue
                if sum(status.counts.values()) == total:
                    return status
        return None

    def _created(self, item: dict[str, Any]) -> float | None:
        return _timestamp(item.get("created_at"))

    async def first_custom_id(self, status: BatchStatus) -> str | None:
        # The results stream is closed after its first line: one line read, whatever the batch's size.
        results = self._results(status)
        try:
            async for item in results:
                return item.custom_id
        finally:
            await results.aclose()
        return None

    def results(self, status: BatchStatus) -> AsyncIterator[ItemResult]:
        return self._results(status)

    async def _results(self, status: BatchStatus) -> AsyncGenerator[ItemResult, None]:
        # The key goes with the request: only to the API's own host, whatever results_url names (and
        # the documented path when an ended batch names none).
        documented = f"{self.batches_url}/{segment(status.id)}/results"
        url = status.results_url or documented
        try:
            if httpx.URL(url).netloc != httpx.URL(self.batches_url).netloc:
                url = documented
        except httpx.InvalidURL:  # a results_url that does not parse: the documented path
            url = documented
        async for rec in jsonl_lines(self.provider.client, self.name, url, self._headers,
                                     max(self._timeout, 120.0)):
            yield _item(rec)

    def _status(self, data: dict[str, Any]) -> BatchStatus:
        batch_id = data.get("id")
        state = data.get("processing_status")
        if not isinstance(batch_id, str) or not isinstance(state, str):
            raise ProviderError(BAD_RESPONSE, f"{self.name}: a message batch without id or processing_status: "
                                f"{str(data)[:200]}", 200, False, provider=self.name)
        counts = data.get("request_counts") if isinstance(data.get("request_counts"), dict) else {}
        url = data.get("results_url")
        return BatchStatus(
            id=batch_id, state=state, ended=state == "ended",
            counts={k: int(v) for k, v in (counts or {}).items() if isinstance(v, int)},
            created_at=self._created(data),
            results_url=url if isinstance(url, str) and url else None)


def _timestamp(value: Any) -> float | None:
    """RFC 3339 (`2024-08-20T18:37:24.100435Z`) as Unix seconds."""
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _item(rec: dict[str, Any]) -> ItemResult:
    custom_id = str(rec.get("custom_id") or "")
    result = rec.get("result")
    if not isinstance(result, dict):
        return ItemResult(custom_id, None, "no result")
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return ItemResult(custom_id, result["message"])
    if kind == "errored":
        err = result.get("error")
        inner = err.get("error") if isinstance(err, dict) and isinstance(err.get("error"), dict) else err
        message = inner.get("message") if isinstance(inner, dict) else None
        etype = inner.get("type") if isinstance(inner, dict) else None
        return ItemResult(custom_id, None, f"errored: {etype or 'error'}: {message or ''}".strip())
    return ItemResult(custom_id, None, str(kind or "no result"))  # canceled, expired
