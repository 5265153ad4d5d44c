"""Gemini Batch API (Google AI, `generativelanguage.googleapis.com`): a JSONL input file uploaded through
the Files API's resumable upload, `models/{model}:batchGenerateContent`, the batch polled as a
long-running operation (`batches/{id}`) until it ends, then its responses file downloaded.

    upload   POST {root}/upload/v1beta/files   X-Goog-Upload-Protocol: resumable, Command: start
             → the `X-Goog-Upload-URL` header; POST the bytes there with Command: upload, finalize
             → {"file": {"name": "files/…"}}
    create   POST {root}/v1beta/models/{model}:batchGenerateContent
             {"batch": {"displayName": key, "inputConfig": {"fileName": "files/…"}}} → an Operation
    poll     GET {root}/v1beta/batches/{id} → {"name", "metadata": {"state": BATCH_STATE_…,
             "batchStats": {…}, "displayName", "createTime"}, "done", "response": {"responsesFile"}}
    results  GET {root}/download/v1beta/{responsesFile}:download?alt=media → JSONL lines
             {"key", "response": GenerateContentResponse} or {"key", "error": Status}
    cancel   POST {root}/v1beta/batches/{id}:cancel;  list  GET {root}/v1beta/batches → {"operations"}

A line is `{"key": custom_id, "request": body}` with exactly the body the chat provider POSTs to
`:generateContent`, and each response is read by its own parser, so the answers are an interactive
run's. The batch's `displayName` is the run's key: a run killed between creating a batch and
journaling its name finds it again by listing the batches (`find`).

The batch is made per model (the model is in the creation's URL), so a client is made for one model
(`batch_api_for(..., model=)`); reading, cancelling and listing need none. The Vertex AI batch
prediction API (Cloud Storage or BigQuery in and out) is another service and is not driven.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from typing import Any
from urllib.parse import quote

import httpx

from ..jsonio import dumps_bytes
from ..providers.base import BAD_RESPONSE, ProviderError
from ..providers.google import GoogleProvider
from .api import GOOGLE_MAX_BYTES, GOOGLE_MAX_REQUESTS, BatchStatus, ItemResult, Limits
from .http_batches import LIST_PAGES, statuses_listed
from .part_file import LINES, PartFile, part_file
from .wire import jsonl_lines, request_headers, request_json

ENDED = frozenset({"succeeded", "failed", "cancelled", "expired"})


class GoogleBatches:
    api = "google"
    framing = LINES
    tagged = False  # its displayName is the run's key

    def __init__(self, provider: GoogleProvider, model: str | None = None, limits: Limits | None = None) -> None:
        self.provider = provider
        self.name = provider.name
        self.model = model
        self.limits = limits or Limits(GOOGLE_MAX_REQUESTS, GOOGLE_MAX_BYTES)
        api_base = provider.models_url.removesuffix("/models")  # …/v1beta
        root, _, version = api_base.rpartition("/")
        self.api_base = api_base
        self.upload_url = f"{root}/upload/{version}/files"
        self.download_base = f"{root}/download/{version}"

    @property
    def _headers(self) -> Mapping[str, str]:
        return self.provider.request_headers

    @property
    def _timeout(self) -> float:
        return float(self.provider.timeout)

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        return dumps_bytes({"key": custom_id, "request": body}) + b"\n"

    async def upload(self, key: str, requests: PartFile | Iterable[bytes]) -> str | None:
        with part_file(requests, self.framing) as part:
            return await self._upload(key, part)

    async def _upload(self, key: str, part: PartFile) -> str:
        start = httpx.Headers(self._headers)
        start.update({"x-goog-upload-protocol": "resumable", "x-goog-upload-command": "start",
                      "x-goog-upload-header-content-length": str(part.length),
                      "x-goog-upload-header-content-type": "application/jsonl",
                      "content-type": "application/json"})
        got = await request_headers(self.provider.client, self.name, "POST", self.upload_url, start, self._timeout,
                                    payload={"file": {"displayName": key}})
        session = got.get("x-goog-upload-url")
        if not session:
            raise ProviderError(BAD_RESPONSE, f"{self.name}: the upload was not started (no X-Goog-Upload-URL)",
                                200, False, provider=self.name)
        try:
            target = httpx.URL(session)
        except httpx.InvalidURL:
            raise ProviderError(BAD_RESPONSE, f"{self.name}: the upload URL it named is not valid", 200, False,
                                provider=self.name) from None
        if _origin(target) != _origin(httpx.URL(self.upload_url)):
            # The session URL carries the upload's authority; anywhere else is not where the key points.
            raise ProviderError(BAD_RESPONSE, f"{self.name}: the upload URL points to another host ({target.host})",
                                200, False, provider=self.name)
        headers = {"x-goog-upload-offset": "0", "x-goog-upload-command": "upload, finalize",
                   "content-type": "application/jsonl"}
        answer = await request_json(self.provider.client, self.name, "POST", target, headers,
                                    max(self._timeout, 300.0), content=part.chunks(), length=part.length)
        file = answer.get("file")
        name = file.get("name") if isinstance(file, dict) else None
        if not isinstance(name, str) or not name:
            raise ProviderError(BAD_RESPONSE, f"{self.name}: the file upload answered without a file name", 200,
                                False, provider=self.name)
        return name

    async def create(self, key: str, requests: PartFile | Iterable[bytes], file_id: str | None) -> BatchStatus:
        # The target's own model when it names one (an AgentV target), else the one the requests are for.
        name = self.provider.model_for(self.model or None).removeprefix("models/")
        url = f"{self.provider.models_url}/{quote(name, safe='-._~')}:batchGenerateContent"
        data = await request_json(self.provider.client, self.name, "POST", url, self._headers,
                                  max(self._timeout, 300.0),
                                  payload={"batch": {"displayName": key, "inputConfig": {"fileName": file_id}}})
        return self._status(data)

    async def get(self, batch_id: str) -> BatchStatus:
        data = await request_json(self.provider.client, self.name, "GET", f"{self.api_base}/{_name(batch_id)}",
                                  self._headers, self._timeout)
        return self._status(data)

    async def cancel(self, batch_id: str) -> BatchStatus:
        await request_json(self.provider.client, self.name, "POST", f"{self.api_base}/{_name(batch_id)}:cancel",
                           self._headers, self._timeout, payload={})
        return await self.get(batch_id)  # the answer to a cancel is `{}`: the batch says where it is

    async def find(self, key: str, *, created_after: float, total: int,
                   taken: frozenset[str] = frozenset()) -> BatchStatus | None:
        async with contextlib.aclosing(self._listed()) as listed:
            async for item in listed:
                status = self._status(item)
                if status.key == key and status.id not in taken:
                    return status
        return None

    async def listed(self, created_after: float | None) -> list[BatchStatus]:
        return await statuses_listed(self._listed(), self._status, created_after)

    async def first_custom_id(self, status: BatchStatus) -> str | None:
        return None  # its displayName names it (`key`)

    async def _listed(self) -> AsyncGenerator[dict[str, Any], None]:
        token: str | None = None
        for _ in range(LIST_PAGES):
            params = {"pageSize": "100", **({"pageToken": token} if token else {})}
            data = await request_json(self.provider.client, self.name, "GET",
                                      httpx.URL(f"{self.api_base}/batches", params=params), self._headers,
                                      self._timeout)
            items = data.get("operations") or data.get("batches")
            if not isinstance(items, list) or not items:
                return
            for item in items:
                if isinstance(item, dict):
                    yield item
            token = data.get("nextPageToken") if isinstance(data.get("nextPageToken"), str) else None
            if not token:
                return

    async def results(self, status: BatchStatus) -> AsyncIterator[ItemResult]:
        if not status.output_file:
            return  # expired, failed or cancelled before any output: every request is unanswered
        url = f"{self.download_base}/{_name(status.output_file)}:download"
        async for rec in jsonl_lines(self.provider.client, self.name, httpx.URL(url, params={"alt": "media"}),
                                     self._headers, max(self._timeout, 120.0)):
            yield _item(rec)

    def _status(self, data: dict[str, Any]) -> BatchStatus:
        """An Operation (create, get, list) as a BatchStatus. The batch itself is its `metadata`; an
        answer that gives the batch unwrapped reads the same."""
        meta = _dict(data.get("metadata")) or data
        name = data.get("name") or meta.get("name")
        if not isinstance(name, str) or not name:
            raise ProviderError(BAD_RESPONSE, f"{self.name}: a batch without a name: {str(data)[:200]}", 200, False,
                                provider=self.name)
        raw_state = meta.get("state") or data.get("state")
        state = _state(raw_state) if isinstance(raw_state, str) else ("done" if data.get("done") else "pending")
        stats = _dict(meta.get("batchStats"))
        counts: dict[str, int] = {}
        for ours, theirs in (("total", "requestCount"), ("completed", "successfulRequestCount"),
                             ("failed", "failedRequestCount"), ("pending", "pendingRequestCount")):
            value = _int(stats.get(theirs))
            if value is not None:
                counts[ours] = value
        counts.setdefault("completed", 0)
        counts.setdefault("failed", 0)
        # Where the REST guide reads the responses file (`response.responsesFile`), and where the
        # batch resource and the SDKs keep it (`output.responsesFile`, `dest.fileName`).
        response = _dict(data.get("response"))
        found = (response.get("responsesFile") or _dict(response.get("output")).get("responsesFile")
                 or _dict(meta.get("output")).get("responsesFile") or _dict(meta.get("dest")).get("fileName"))
        error = _dict(data.get("error"))
        detail = str(error.get("message") or error.get("status") or "") or None
        key = meta.get("displayName")
        return BatchStatus(id=name, state=state, ended=state in ENDED or data.get("done") is True, counts=counts,
                           key=key if isinstance(key, str) else None, created_at=_timestamp(meta.get("createTime")),
                           output_file=found if isinstance(found, str) and found else None, detail=detail)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


def _name(resource: str) -> str:
    """A resource name as a path (`batches/123`, `files/abc`): its segments quoted, never `..`."""
    return "/".join(quote(part, safe="-._~") for part in resource.split("/") if part not in ("", ".", ".."))


def _state(raw: str) -> str:
    """`BATCH_STATE_RUNNING` (REST) or `JOB_STATE_RUNNING` (the SDKs' word) → `running`."""
    return raw.removeprefix("BATCH_STATE_").removeprefix("JOB_STATE_").lower()


def _int(value: Any) -> int | None:
    """int64 fields come as strings in JSON."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _timestamp(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    text = value.strip().replace("Z", "+00:00")
    if "." in text:  # RFC 3339 allows up to 9 fractional digits; Python reads 6
        head, _, rest = text.partition(".")
        digits = "".join(c for c in rest if c.isdigit())
        text = f"{head}.{digits[:6]}{rest[len(digits):]}"
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _item(rec: dict[str, Any]) -> ItemResult:
    key = rec.get("key")
    if key is None and isinstance(rec.get("metadata"), dict):
        key = rec["metadata"].get("key")
    custom_id = str(key or "")
    response = rec.get("response")
    if isinstance(response, dict):
        return ItemResult(custom_id, response)
    error = rec.get("error")
    if isinstance(error, dict):
        code = error.get("status") or error.get("code") or "error"
        return ItemResult(custom_id, None, f"{code}: {error.get('message') or ''}".strip())
    return ItemResult(custom_id, None, "no answer in the result")
