"""The OpenAI Batch API: a JSONL input file uploaded through the Files API (`purpose: batch`), a batch on
`/v1/chat/completions` with a 24 h window, polled until it ends, then its output and error files.

Each batch carries the run's key in its `metadata`, so a run killed between creating a batch and
journaling its id finds it again by listing the batches (`find`) instead of submitting it twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx

from ..jsonio import dumps_bytes
from ..providers.base import BAD_RESPONSE, ProviderError
from ..providers.openai_compat import OpenAICompatProvider
from .api import OPENAI_MAX_BYTES, OPENAI_MAX_REQUESTS, BatchStatus, ItemResult, Limits
from .http_batches import HttpBatches
from .part_file import LINES, PartFile, part_file
from .wire import jsonl_lines, request_json, segment

ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
METADATA_KEY = "evalspec_key"


class OpenAIBatches(HttpBatches):
    api = "openai"
    framing = LINES

    def __init__(self, provider: OpenAICompatProvider, limits: Limits | None = None) -> None:
        self.provider = provider
        self.name = provider.name
        self.limits = limits or Limits(OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES)
        base = provider.base_url
        self.files_url = f"{base}/files"
        self.batches_url = f"{base}/batches"

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        # The line ending makes a copy of orjson's result at its exact size (anthropic_batch.encode says why
        # that matters).
        return dumps_bytes({"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}) + b"\n"

    async def upload(self, key: str, requests: PartFile | Iterable[bytes]) -> str | None:
        headers = httpx.Headers(self._headers)
        headers.pop("content-type", None)  # httpx writes the multipart boundary
        with part_file(requests, self.framing) as part:
            # httpx streams a file field by chunks and knows its length (Content-Length, not chunked).
            data = await request_json(
                self.provider.client, self.name, "POST", self.files_url, headers, max(self._timeout, 300.0),
                data={"purpose": "batch"}, files={"file": (f"{key}.jsonl", part.file(), "application/jsonl")})
        file_id = data.get("id")
        if not isinstance(file_id, str) or not file_id:
            raise ProviderError(BAD_RESPONSE, f"{self.name}: the file upload answered without an id", 200, False,
                                provider=self.name)
        return file_id

    async def create(self, key: str, requests: PartFile | Iterable[bytes], file_id: str | None) -> BatchStatus:
        data = await request_json(
            self.provider.client, self.name, "POST", self.batches_url, self._headers, self._timeout,
            payload={"input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": COMPLETION_WINDOW,
                     "metadata": {METADATA_KEY: key, "source": "evalspec"}})
        return self._status(data)

    async def find(self, key: str, *, created_after: float, total: int,
                   taken: frozenset[str] = frozenset()) -> BatchStatus | None:
        async with contextlib.aclosing(self._listed(created_after)) as listed:
            async for item in listed:
                if isinstance(item.get("metadata"), dict) and item["metadata"].get(METADATA_KEY) == key \
                        and item.get("id") not in taken:
                    return self._status(item)
        return None

    async def first_custom_id(self, status: BatchStatus) -> str | None:
        return None  # its metadata names it (`key`)

    def _created(self, item: dict[str, Any]) -> float | None:
        created = item.get("created_at")
        return float(created) if isinstance(created, int | float) else None

    async def results(self, status: BatchStatus) -> AsyncIterator[ItemResult]:
        """Every item of the output file, then of the error file. An item whose answer is not a 200 is an
        error (its body is the error's, not an answer)."""
        for file_id in (status.output_file, status.error_file):
            if not file_id:
                continue
            url = f"{self.files_url}/{segment(file_id)}/content"
            async for rec in jsonl_lines(self.provider.client, self.name, url, self._headers,
                                         max(self._timeout, 120.0)):
                yield _item(rec)

    def _status(self, data: dict[str, Any]) -> BatchStatus:
        batch_id = data.get("id")
        state = data.get("status")
        if not isinstance(batch_id, str) or not isinstance(state, str):
            raise ProviderError(BAD_RESPONSE, f"{self.name}: a batch without id or status: {str(data)[:200]}",
                                200, False, provider=self.name)
        counts = data.get("request_counts") if isinstance(data.get("request_counts"), dict) else {}
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        errors = data.get("errors")
        detail = None
        if isinstance(errors, dict) and isinstance(errors.get("data"), list):
            detail = "; ".join(str(e.get("message") or e) for e in errors["data"][:3] if isinstance(e, dict)) or None
        return BatchStatus(
            id=batch_id, state=state, ended=state in ENDED,
            counts={k: int(v) for k, v in (counts or {}).items() if isinstance(v, int)},
            key=str(meta[METADATA_KEY]) if meta and METADATA_KEY in meta else None,
            created_at=self._created(data),
            output_file=_str(data.get("output_file_id")), error_file=_str(data.get("error_file_id")), detail=detail)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _item(rec: dict[str, Any]) -> ItemResult:
    custom_id = str(rec.get("custom_id") or "")
    response = rec.get("response")
    if isinstance(response, dict):
        status = response.get("status_code")
        body = response.get("body")
        if status == 200 and isinstance(body, dict):
            return ItemResult(custom_id, body)
        message = body.get("error", {}).get("message") if isinstance(body, dict) and \
            isinstance(body.get("error"), dict) else None
        return ItemResult(custom_id, None, f"HTTP {status}: {message or 'error'}")
    error = rec.get("error")
    if isinstance(error, dict):
        return ItemResult(custom_id, None, f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip())
    return ItemResult(custom_id, None, "no answer in the result")
