"""The one HTTP client a run shares, and the single POST-JSON exchange every HTTP provider goes through.

One `httpx.AsyncClient` per run, its pool sized to the run's concurrency: a client per call would pay a
TCP handshake and pool set-up each time and cap throughput far below the runner's target.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any

import httpx

from evalspec import __version__ as _version
from evalspec.jsonio import dumps_bytes, loads
from evalspec.providers.base import (
    AUTH,
    BAD_REQUEST,
    BAD_RESPONSE,
    CONFIG,
    CONNECTION,
    NOT_FOUND,
    RATE_LIMIT,
    SERVER,
    TIMEOUT,
    ChatRequest,
    ChatResult,
    ProviderError,
    RetryCallback,
)
from evalspec.providers.retry import retry_after_from_headers

DEFAULT_TIMEOUT = 30.0  # seconds per call, the reference client's default
DEFAULT_CONCURRENCY = 32
TRANSPORTS = ("http11", "httpx")
USER_AGENT = f"evalspec/{_version}"


class _NoCookies(httpx.Cookies):
    """A cookie store that keeps nothing."""

    def extract_cookies(self, response: httpx.Response) -> None:
        pass


class StatelessClient(httpx.AsyncClient):
    """httpx.AsyncClient without a cookie jar.

    LLM APIs are stateless; a jar only lets one call's Set-Cookie (load balancers, bot filters) leak into
    later calls, and httpx parses every response through urllib's cookie machinery, which costs ~15% of
    the client's CPU at 2,000 calls/s.
    """

    @property
    def cookies(self) -> httpx.Cookies:
        jar = self.__dict__.get("_no_cookies")
        if jar is None:
            jar = self.__dict__["_no_cookies"] = _NoCookies()
        return jar

    @cookies.setter
    def cookies(self, value: Any) -> None:  # httpx's API allows assignment; nothing is kept
        pass


def make_client(
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: str | httpx.AsyncBaseTransport = "http11",
    verify: bool = True,
) -> httpx.AsyncClient:
    """The shared client for a run: at most `concurrency` requests in flight, connections kept alive.

    transport: "http11" (default; our HTTP/1.1 transport, see http11.py for why), "httpx" (httpx's own:
    150–340 calls/s here, a fifteenth of ours), or any httpx transport instance (tests pass
    httpx.MockTransport).
    Close it with `await client.aclose()`.
    """
    concurrency = max(1, int(concurrency))
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency, keepalive_expiry=30.0
    )
    kwargs: dict[str, Any] = {
        "timeout": httpx.Timeout(timeout),
        "headers": {"user-agent": USER_AGENT},
        "follow_redirects": False,
    }
    if isinstance(transport, httpx.AsyncBaseTransport):
        return StatelessClient(transport=transport, **kwargs)
    if transport == "http11":
        from evalspec.providers.http11 import Http11Transport

        return StatelessClient(transport=Http11Transport(limits=limits, verify=verify), **kwargs)
    if transport == "httpx":
        return StatelessClient(limits=limits, verify=verify, **kwargs)
    raise ValueError(f"unknown transport {transport!r}; choose one of {', '.join(TRANSPORTS)}")


def transport_name(client: httpx.AsyncClient) -> str:
    t = getattr(client, "_transport", None)
    return getattr(t, "name", None) or type(t).__name__


_KIND_BY_STATUS = {401: AUTH, 403: AUTH, 404: NOT_FOUND, 429: RATE_LIMIT}


def _retryable(status: int) -> bool:
    # 408 request timeout and 409 conflict (Anthropic's "try again") are transient too.
    return status in (408, 409, 429) or status >= 500


def _error_detail(content: bytes) -> str:
    """The human part of an error body: `{"error": {"message": …}}` (OpenAI, Anthropic, Google), or text."""
    try:
        data = json.loads(content)
    except ValueError:
        return content[:300].decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("msg") or err.get("detail")
            if msg:
                return str(msg)[:500]
        elif isinstance(err, str):
            return err[:500]
    return json.dumps(data)[:300]


async def post_json(
    client: httpx.AsyncClient,
    provider: str,
    url: str | httpx.URL,
    payload: Mapping[str, Any],
    headers: httpx.Headers | Mapping[str, str],
    timeout: float,
) -> tuple[dict[str, Any], float]:
    """POST `payload` as JSON; return (parsed JSON object, latency in ms) or raise ProviderError.

    The whole exchange runs under one deadline of `timeout` seconds (httpx's timeouts are per phase, so
    a server trickling bytes could otherwise hold a call far longer than asked).
    """
    body = dumps_bytes(payload)
    # Built by hand rather than with client.post(): with headers already merged with the client's
    # (HttpProvider.request_headers) this skips httpx's per-call merging, a fifth of the client's CPU.
    request = httpx.Request("POST", url, headers=headers, content=body, extensions={"timeout": _timeouts(timeout)})
    t0 = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            resp = await client.send(request)
    except (TimeoutError, httpx.TimeoutException):
        raise ProviderError(
            TIMEOUT, f"{provider}: no answer within {timeout:g} s", None, True, provider=provider
        ) from None
    except httpx.TransportError as exc:
        # `from None`: the chained exception would print the URL, which for custom models may carry a key.
        raise ProviderError(
            CONNECTION,
            f"{provider}: connection failed ({type(exc).__name__}: {exc or 'no detail'}) to {_origin(url)}",
            None,
            True,
            provider=provider,
        ) from None
    latency_ms = (time.perf_counter() - t0) * 1000.0
    status = resp.status_code
    if status >= 300:
        kind = _KIND_BY_STATUS.get(status) or (SERVER if status >= 500 else BAD_REQUEST)
        retryable = _retryable(status)
        raise ProviderError(
            kind,
            f"{provider}: HTTP {status}: {_error_detail(resp.content) or resp.reason_phrase}",
            status,
            retryable,
            retry_after=retry_after_from_headers(resp.headers) if retryable else None,
            provider=provider,
        )
    try:
        data = loads(resp.content)
    except ValueError:
        snippet = resp.content[:200].decode("utf-8", "replace")
        raise ProviderError(
            BAD_RESPONSE,
            f"{provider}: the answer is not valid JSON (HTTP {status}, {len(resp.content)} bytes): {snippet!r}",
            status,
            False,
            provider=provider,
        ) from None
    if not isinstance(data, dict):
        raise ProviderError(
            BAD_RESPONSE, f"{provider}: expected a JSON object, got {type(data).__name__}", status, False,
            provider=provider,
        )
    return data, latency_ms


_TIMEOUTS: dict[float, dict[str, float]] = {}


def _timeouts(seconds: float) -> dict[str, float]:
    t = _TIMEOUTS.get(seconds)
    if t is None:
        t = _TIMEOUTS[seconds] = {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}
    return t


def _origin(url: str | httpx.URL) -> str:
    u = httpx.URL(url)
    return f"{u.scheme}://{u.netloc.decode('ascii', 'replace')}"


class HttpProvider:
    """Shared plumbing of the HTTP providers: the client (shared, or owned and opened lazily), the
    per-call timeout, the bound model, and a repr that never shows a key."""

    name: str = "http"

    def __init__(
        self,
        *,
        client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        model: str | None = None,
    ) -> None:
        self._client = client
        self._owns_client = client is None
        self.timeout = float(timeout)
        # A provider built from an AgentV target is bound to the target's model; ChatRequest.model is
        # then ignored. Providers from `provider:model` ids are unbound and use ChatRequest.model.
        self.bound_model = model or None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = make_client(timeout=self.timeout)
        return self._client

    _headers: dict[str, str] = {}
    _merged: httpx.Headers | None = None

    @property
    def request_headers(self) -> httpx.Headers:
        """The client's default headers overlaid with this provider's, merged once."""
        if self._merged is None:
            merged = httpx.Headers(self.client.headers)
            merged.update(self._headers)
            self._merged = merged
        return self._merged

    def model_for(self, requested: str | None) -> str:
        model = self.bound_model or requested
        if not model:
            raise ProviderError(CONFIG, f"{self.name}: no model given", provider=self.name)
        return model

    async def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> ChatResult:
        """POST the provider's request body to its chat endpoint and parse the answer; subclasses
        give `chat_url`, `body` and `parse`."""
        data, latency_ms = await post_json(
            self.client, self.name, self.chat_url_for(req), self.body(req), self.request_headers,
            req.timeout or self.timeout,
        )
        return self.parse(data, latency_ms)

    def chat_url_for(self, req: ChatRequest) -> str | httpx.URL:
        raise NotImplementedError

    def body(self, req: ChatRequest) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, data: dict[str, Any], latency_ms: float) -> ChatResult:
        raise NotImplementedError

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name}

    def __repr__(self) -> str:
        ident = ", ".join(f"{k}={v!r}" for k, v in self.identity().items())
        return f"{type(self).__name__}({ident})"
