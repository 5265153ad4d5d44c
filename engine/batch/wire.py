"""The HTTP exchanges of the batch APIs, through httpx over the run's shared client (providers/http.py).

A chat call is one POST of JSON (`http.post_json`); a batch API also GETs objects, uploads a file as
multipart form data and reads result files that can be far larger than any chat answer. Result files
are read line by line as they stream in (`jsonl_lines`), so memory is bounded by the longest line, not
the file; every other answer is capped like a chat answer. A batch's own body (its input file, Anthropic's
creation) goes out streamed from its part file (batch/part_file.py) with its length known. Errors map to the same ProviderError kinds
(and retry decisions) as the chat providers'.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any, NoReturn
from urllib.parse import quote

import httpx

from ..jsonio import dumps_bytes, loads
from ..providers.base import BAD_RESPONSE, ProviderError
from ..providers.http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DirectClient,
    HttpClient,
    status_error,
    transport_error,
)
from ..providers.httpx_client import StatelessClient

# One line of a result file is one answer: the chat answers' cap applies to it.
MAX_LINE_BYTES = DEFAULT_MAX_RESPONSE_BYTES


def segment(value: str) -> str:
    """An id a batch service gave (a batch's, a file's) as one path segment: percent-quoted, so an id
    holding `/`, `..`, `?` or a line break can neither reach another path on the API's host nor make a
    URL httpx refuses (an InvalidURL traceback stopped the run)."""
    return quote(value, safe="-._~")


def _request(method: str, url: str | httpx.URL, provider: str, **kwargs: Any) -> httpx.Request:
    """The request, or a ProviderError when a URL the service named (a results_url, an upload URL) or built
    from what it sent does not parse."""
    try:
        return httpx.Request(method, url, **kwargs)
    except httpx.InvalidURL as exc:
        raise ProviderError(BAD_RESPONSE, f"{provider}: the batch service named a URL that is not valid "
                            f"({exc.__class__.__name__}: {str(exc)[:80]})", None, False, provider=provider) from None


async def _send(client: HttpClient, request: httpx.Request) -> httpx.Response:
    if isinstance(client, DirectClient):  # the run's default client: httpx's client over its session
        client = client.httpx_client()
    if isinstance(client, StatelessClient):
        return await client.send_streaming(request)
    return await client.send(request, stream=True)


async def request_json(
    client: HttpClient,
    provider: str,
    method: str,
    url: str | httpx.URL,
    headers: Mapping[str, str] | httpx.Headers,
    timeout: float,
    *,
    payload: Any = None,
    content: bytes | AsyncIterable[bytes] | None = None,
    length: int | None = None,
    files: Mapping[str, Any] | None = None,
    data: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One request whose answer is a JSON object; raises ProviderError (retryable where a retry can help).
    `content` may stream (an async iterable, a fresh one per call); `length` is then its size in bytes,
    sent as Content-Length (not chunked: the APIs read a batch body of a known size)."""
    if payload is not None:
        content = dumps_bytes(payload)
    if length is not None:
        headers = httpx.Headers(headers)
        headers["content-length"] = str(length)
    request = _request(method, url, provider, headers=headers, content=content, files=files, data=data,
                       extensions={"timeout": _phases(timeout)})
    cap = getattr(client, "max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)
    resp, body = await _exchange(client, provider, request, timeout, max(cap, DEFAULT_MAX_RESPONSE_BYTES))
    try:
        out = loads(body)
    except ValueError:
        out = None
    if not isinstance(out, dict):
        raise ProviderError(BAD_RESPONSE, f"{provider}: expected a JSON object from {method} {_path(url)}, got "
                            f"{body[:120]!r}", resp.status_code, False, provider=provider)
    return out


async def request_headers(
    client: HttpClient,
    provider: str,
    method: str,
    url: str | httpx.URL,
    headers: Mapping[str, str] | httpx.Headers,
    timeout: float,
    *,
    payload: Any = None,
) -> httpx.Headers:
    """One request whose answer says what it has to say in its headers (the start of Google's resumable
    upload: the upload URL); the body, capped, is read and dropped. Raises ProviderError as request_json."""
    request = _request(method, url, provider, headers=headers,
                       content=dumps_bytes(payload) if payload is not None else None, extensions={"timeout": _phases(timeout)})
    resp, _ = await _exchange(client, provider, request, timeout, 64 * 1024, cut=True)
    return resp.headers


def _raise_transport(exc: Exception, provider: str, url: str | httpx.URL, timeout: float) -> NoReturn:
    """`exc` as its ProviderError when the HTTP stack raised it (`from None`: the chained exception would print
    the URL), and as it is otherwise (a bug)."""
    failure = transport_error(exc, provider, url, timeout)
    if failure is None:
        raise exc
    raise failure from None


async def _exchange(client: HttpClient, provider: str, request: httpx.Request, timeout: float, cap: int,
                    *, cut: bool = False) -> tuple[httpx.Response, bytes]:
    """Send `request` and read its body (at most `cap` bytes; past it an error, or cut short with `cut`)
    within `timeout`; transport failures and answers of 300 and over raise ProviderError."""
    try:
        async with asyncio.timeout(timeout):
            resp = await _send(client, request)
            try:
                body = await _read_capped(resp, cap, provider, cut=cut)
            finally:
                await resp.aclose()
    except ProviderError:
        raise
    except Exception as exc:
        _raise_transport(exc, provider, request.url, timeout)
    if resp.status_code >= 300:
        raise status_error(provider, resp.status_code, resp.reason_phrase, resp.headers, body)
    return resp, body


async def jsonl_lines(
    client: HttpClient,
    provider: str,
    url: str | httpx.URL,
    headers: Mapping[str, str] | httpx.Headers,
    timeout: float,
) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of a JSONL file as it streams in. `timeout` bounds each read, not the whole file
    (a 200 MB result file takes its time). A line that is not a JSON object is skipped: the items it
    held are then missing from the results, and the caller sends them again interactively."""
    request = _request("GET", url, provider, headers=headers, extensions={"timeout": _phases(timeout)})
    try:
        async with asyncio.timeout(timeout):
            resp = await _send(client, request)
    except Exception as exc:
        _raise_transport(exc, provider, url, timeout)
    try:
        if resp.status_code >= 300:
            raise status_error(provider, resp.status_code, resp.reason_phrase, resp.headers,
                               await _read_capped(resp, 64 * 1024, provider, cut=True))
        pending = b""
        chunks = resp.aiter_bytes()
        while True:
            try:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancellation that comes as
                # the read completes, and a service streaming blank lines fast had the caller's deadline
                # (batch_stage's "no new answer") lost nearly every time (atk9r: a run held for good).
                async with asyncio.timeout(timeout):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                break
            except Exception as exc:
                _raise_transport(exc, provider, url, timeout)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if len(pending) > MAX_LINE_BYTES:
                raise ProviderError(BAD_RESPONSE, f"{provider}: a result line is longer than "
                                    f"{MAX_LINE_BYTES // 2**20} MB", resp.status_code, False, provider=provider)
            for line in lines:
                if (rec := _record(line)) is not None:
                    yield rec
        if (rec := _record(pending)) is not None:
            yield rec
    finally:
        await resp.aclose()


def _record(line: bytes) -> dict[str, Any] | None:
    line = line.strip()
    if not line:
        return None
    try:
        rec = loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


async def _read_capped(resp: httpx.Response, cap: int, provider: str, *, cut: bool = False) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > cap:
            if cut:
                break
            raise ProviderError(BAD_RESPONSE, f"{provider}: the answer is larger than {cap // 2**20} MB",
                                resp.status_code, False, provider=provider)
        chunks.append(chunk)
    return b"".join(chunks)


def _phases(seconds: float) -> dict[str, float]:
    return {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}


def _path(url: str | httpx.URL) -> str:
    return httpx.URL(url).path
