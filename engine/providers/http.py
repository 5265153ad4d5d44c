"""The one HTTP client a run shares, and the single POST-JSON exchange every HTTP provider goes through.

One `httpx.AsyncClient` per run, its pool sized to the run's concurrency: a client per call would pay a
TCP handshake and pool set-up each time and cap throughput far below the runner's target.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import re
import ssl
import sys
import time
from collections.abc import Callable, Mapping
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
from evalspec.providers.rate_limits import AdaptiveLimit
from evalspec.providers.redact import clip, is_sensitive_header
from evalspec.providers.retry import retry_after_from_headers

DEFAULT_TIMEOUT = 30.0  # seconds per call, the reference client's default
DEFAULT_CONCURRENCY = 32
# The largest answer read, in bytes (after gzip/deflate decoding, so a compressed bomb counts at its
# real size). A real chat answer is far smaller (100,000 output tokens are ~0.5 MB of JSON); a bigger
# one is a misbehaving server, and without a cap six 50 MB answers took a run to 2.7 GB.
# What an HTTP/1.1 header value may hold: ASCII without control characters (spaces and tabs allowed).
_SENDABLE_HEADER = re.compile(r"[\x20-\x7e\t]*")
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
TRANSPORTS = ("aiohttp", "httpx")
USER_AGENT = f"evalspec/{_version}"


class _NoCookies(httpx.Cookies):
    """A cookie store that keeps nothing."""

    def extract_cookies(self, response: httpx.Response) -> None:
        pass


class StatelessClient(httpx.AsyncClient):
    """httpx.AsyncClient without a cookie jar, carrying the run's response size cap.

    LLM APIs are stateless; a jar only lets one call's Set-Cookie (load balancers, bot filters) leak into
    later calls, and httpx parses every response through urllib's cookie machinery, which costs ~15% of
    the client's CPU at 2,000 calls/s.
    """

    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    @property
    def cookies(self) -> httpx.Cookies:
        jar = self.__dict__.get("_no_cookies")
        if jar is None:
            jar = self.__dict__["_no_cookies"] = _NoCookies()
        return jar

    @cookies.setter
    def cookies(self, value: Any) -> None:  # httpx's API allows assignment; nothing is kept
        pass

    async def send_streaming(self, request: httpx.Request) -> httpx.Response:
        """Send `request`; the answer's body is left to read (and the answer to close) by the caller."""
        return await self.send(request, stream=True)


_LIMITS = httpx.Limits()  # httpx's defaults; make_client always passes its own


class AiohttpClient(StatelessClient):
    """The default: httpx's API over aiohttp (`httpx-aiohttp`'s transport), as the OpenAI and Anthropic
    SDKs do. httpx still reads HTTP_PROXY / HTTPS_PROXY / ALL_PROXY / NO_PROXY and mounts one transport
    per proxy, so these two hooks build every transport, direct or through a proxy.

    Provider calls without a proxy (`post_json`) go to the direct transport's aiohttp session itself
    (`post_direct`): wrapping each exchange in httpx's Request and Response, its byte stream and its
    exception mapping costs as much client CPU as aiohttp's own HTTP work (ARCHITECTURE.md)."""

    _direct: httpx.AsyncBaseTransport | None = None
    _proxied = False
    _session: Any = None
    _make_session: Callable[[], Any] | None = None

    def _init_transport(self, verify: Any = True, cert: Any = None, trust_env: bool = True,
                        http1: bool = True, http2: bool = False, limits: httpx.Limits = _LIMITS,
                        transport: httpx.AsyncBaseTransport | None = None, **_: Any) -> httpx.AsyncBaseTransport:
        if transport is None:
            # One aiohttp session (one connection pool) for the direct transport and post_direct.
            self._make_session = _session_factory(verify, limits)
            transport = _aiohttp_transport(verify, limits, None, self.aiohttp_session)
        self._direct = transport
        return transport

    def _init_proxy_transport(self, proxy: httpx.Proxy, verify: Any = True, cert: Any = None,
                              trust_env: bool = True, http1: bool = True, http2: bool = False,
                              limits: httpx.Limits = _LIMITS, **_: Any) -> httpx.AsyncBaseTransport:
        self._proxied = True
        return _aiohttp_transport(verify, limits, proxy, _session_factory(verify, limits))

    def aiohttp_session(self) -> Any:
        """The direct transport's aiohttp session, made on first use (in the running loop)."""
        if self._session is None:
            assert self._make_session is not None
            self._session = self._make_session()
        return self._session

    @property
    def direct(self) -> bool:
        """Whether provider calls may skip httpx: no proxy configured and our own session underneath."""
        return not self._proxied and self._make_session is not None

    async def send_streaming(self, request: httpx.Request) -> httpx.Response:
        # Straight to the transport when no proxy is configured: AsyncClient.send's layers (auth flow,
        # redirect loop, event hooks, cookie extraction, timer) do nothing for a provider call, which
        # sets its own headers and timeouts, but cost 0.15 ms of the ~0.5 ms of client CPU a call takes.
        if self._proxied or self._direct is None:
            return await super().send_streaming(request)
        return await self._direct.handle_async_request(request)

    async def post_direct(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float,
                          cap: int) -> tuple[int, str, Mapping[str, str], bytes]:
        """POST on the aiohttp session: (status, reason, headers, the decoded body, at most `cap` bytes)."""
        async with self.aiohttp_session().request("POST", url, data=body, headers=headers, allow_redirects=False,
                                          timeout=_client_timeout(timeout)) as resp:
            declared = resp.content_length
            if declared is not None and declared > cap and "content-encoding" not in resp.headers:
                raise _TooLarge(resp.status, f"announced {_size(declared)}")
            chunks: list[bytes] = []
            size = 0
            async for chunk in resp.content.iter_any():
                size += len(chunk)
                if size > cap:
                    raise _TooLarge(resp.status, f"more than {_size(cap)} received")
                chunks.append(chunk)
            content = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            return resp.status, resp.reason or "", resp.headers, content

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            session, self._session = self._session, None
            if session is not None and not session.closed:
                await session.close()


_CLIENT_TIMEOUTS: dict[float, Any] = {}


def _client_timeout(seconds: float) -> Any:
    """aiohttp's per-phase timeouts, as httpx-aiohttp sets them (the whole call is under asyncio.timeout)."""
    t = _CLIENT_TIMEOUTS.get(seconds)
    if t is None:
        import aiohttp

        t = _CLIENT_TIMEOUTS[seconds] = aiohttp.ClientTimeout(total=None, connect=seconds, sock_connect=seconds,
                                                              sock_read=seconds)
    return t


# AiohttpTransport turns its `verify` into an SSL context at once (certifi's bundle: 50-250 ms here) and
# uses it only for a session it makes itself; ours come from _session_factory, so it gets this
# fail-closed placeholder (it verifies and trusts no CA) and no time is spent.
_UNUSED_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _aiohttp_transport(verify: Any, limits: httpx.Limits, proxy: httpx.Proxy | None,
                       session: Callable[[], Any]) -> httpx.AsyncBaseTransport:
    from httpx_aiohttp import AiohttpTransport

    return AiohttpTransport(verify=_UNUSED_TLS, limits=limits, proxy=proxy, client=session)


def _session_factory(verify: Any, limits: httpx.Limits) -> Callable[[], Any]:
    """The aiohttp session of one transport, made on its first request (it must be made in the loop)."""

    def make() -> Any:
        import aiohttp

        connector = aiohttp.TCPConnector(
            limit=limits.max_connections or 0,
            keepalive_timeout=limits.keepalive_expiry if limits.keepalive_expiry is not None else 15.0,
            ssl=tls_setting(verify),
        )
        connector._factory = functools.partial(_pool_safe_handler(), loop=asyncio.get_running_loop())
        # No cookie jar here either; env proxies are httpx's (trust_env=False keeps aiohttp from
        # applying them a second time).
        return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False)

    return make


_HANDLER: type | None = None


def _pool_safe_handler() -> type:
    """aiohttp's connection protocol, but a connection that received bytes while idle in the pool is not
    reused. aiohttp parses such bytes into a queued response and hands it to the next request on the
    connection: a server (or a proxy) writing a second answer after the first made the next prompt
    scored on another's text. HTTP/1.1 has no unrequested answers: the connection is closed instead."""
    global _HANDLER
    if _HANDLER is None:
        from aiohttp.client_proto import ResponseHandler

        class PoolSafeHandler(ResponseHandler):
            def is_connected(self) -> bool:  # asked by the pool before it hands the connection out
                return super().is_connected() and not (self._buffer or self._tail)

        _HANDLER = PoolSafeHandler
    return _HANDLER


def tls_setting(verify: Any) -> ssl.SSLContext | bool:
    """What aiohttp's connector gets as `ssl`: a given context; False to switch verification off; True
    for aiohttp's own context on the system's trust store (SSL_CERT_FILE / SSL_CERT_DIR included, so
    corporate CAs work; built when aiohttp is imported); certifi's bundle where the system has no store
    at all (python.org builds on macOS)."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is False:
        return False
    paths = ssl.get_default_verify_paths()
    if (paths.cafile and os.path.exists(paths.cafile)) or (paths.capath and os.path.isdir(paths.capath)
                                                          and any(os.scandir(paths.capath))):
        return True
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def make_client(
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: str | httpx.AsyncBaseTransport = "aiohttp",
    verify: bool | ssl.SSLContext = True,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> StatelessClient:
    """The shared client for a run: at most `concurrency` requests in flight, connections kept alive,
    answers larger than `max_response_bytes` refused (post_json reads at most that much).

    transport: "aiohttp" (default; httpx over aiohttp, see ARCHITECTURE.md for why), "httpx" (httpx's
    own: 150–340 calls/s here, a tenth of aiohttp's), or any httpx transport instance (tests pass
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
    client: StatelessClient
    try:  # httpx reads HTTP_PROXY, HTTPS_PROXY, ALL_PROXY here: one it cannot parse was a traceback
        if isinstance(transport, httpx.AsyncBaseTransport):
            client = StatelessClient(transport=transport, **kwargs)
        elif transport == "aiohttp":
            client = AiohttpClient(limits=limits, verify=verify, **kwargs)
        elif transport == "httpx":
            client = StatelessClient(limits=limits, verify=verify, **kwargs)
        else:
            raise ValueError(f"unknown transport {transport!r}; choose one of {', '.join(TRANSPORTS)}")
    except httpx.InvalidURL as exc:
        raise ProviderError(CONFIG, f"a proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) is not a valid URL "
                                    f"({exc.__class__.__name__}; not shown)") from None
    client.max_response_bytes = max(1, int(max_response_bytes))
    return client


def transport_name(client: httpx.AsyncClient) -> str:
    t = getattr(client, "_transport", None)
    if type(t).__name__ == "AiohttpTransport":
        return "aiohttp"
    return getattr(t, "name", None) or type(t).__name__


_KIND_BY_STATUS = {401: AUTH, 403: AUTH, 404: NOT_FOUND, 429: RATE_LIMIT}


def _retryable(status: int) -> bool:
    # 408 request timeout and 409 conflict (Anthropic's "try again") are transient too.
    return status in (408, 409, 429) or status >= 500


def _error_detail(content: bytes) -> str:
    """The human part of an error body: `{"error": {"message": …}}` (OpenAI, Anthropic, Google), or text."""
    try:
        data = loads(content)  # nested past the standard parser: a ValueError as well (jsonio)
    except ValueError:
        return clip(content[:4096].decode("utf-8", "replace"), 300).strip()
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("msg") or err.get("detail")
            if msg:
                return clip(str(msg), 500)
        elif isinstance(err, str):
            return clip(err, 500)
    return clip(json.dumps(data), 300)


async def post_json(
    client: httpx.AsyncClient,
    provider: str,
    url: str | httpx.URL,
    payload: Mapping[str, Any],
    headers: Mapping[str, str],
    timeout: float,
    *,
    limit: AdaptiveLimit | None = None,
) -> tuple[dict[str, Any], float]:
    """POST `payload` as JSON; return (parsed JSON object, latency in ms) or raise ProviderError.

    The whole exchange runs under one deadline of `timeout` seconds (httpx's timeouts are per phase, so
    a server trickling bytes could otherwise hold a call far longer than asked). `limit`, the lane of
    the provider's key, is told every answer's status and rate-limit headers (it adapts to them; the
    caller holds its slot).
    """
    body = dumps_bytes(payload)
    cap = getattr(client, "max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)
    # Without a proxy, the default client's calls go straight to aiohttp (AiohttpClient.post_direct).
    direct = client if isinstance(client, AiohttpClient) and client.direct else None
    generation = limit.generation if limit is not None else 0
    t0 = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            if direct is not None:
                status, reason, resp_headers, content = await direct.post_direct(
                    str(url), body, headers if isinstance(headers, dict) else dict(headers.items()), timeout, cap)
            else:
                status, reason, resp_headers, content = await _send(client, url, body, headers, timeout, cap)
    except _TooLarge as exc:
        raise ProviderError(
            BAD_RESPONSE,
            f"{provider}: the answer is larger than the {_size(cap)} limit ({exc}); nothing of it was kept "
            "(raise the limit with --max-response-mb)",
            exc.status, False, provider=provider,
        ) from None
    except Exception as exc:
        failure = transport_error(exc, provider, url, timeout)
        if failure is None:
            raise
        # `from None`: the chained exception would print the URL, which for custom models may carry a key.
        raise failure from None
    latency_ms = (time.perf_counter() - t0) * 1000.0
    if status >= 300:
        err = status_error(provider, status, reason, resp_headers, content)
        if limit is not None:
            limit.observe(status, resp_headers, generation, err.retry_after)
        raise err
    if limit is not None:
        limit.observe(status, resp_headers, generation)
    try:
        data = loads(content)
    except ValueError:
        snippet = clip(content[:4096].decode("utf-8", "replace"), 200)
        raise ProviderError(
            BAD_RESPONSE,
            f"{provider}: the answer is not valid JSON (HTTP {status}, {len(content)} bytes): {snippet!r}",
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


async def _send(client: httpx.AsyncClient, url: str | httpx.URL, body: bytes, headers: Mapping[str, str],
                timeout: float,
                cap: int) -> tuple[int, str, Mapping[str, str], bytes]:
    """The exchange through httpx (a proxy, or a client with a transport of its own)."""
    # Built by hand rather than with client.post(): with headers already merged with the client's
    # (HttpProvider.request_headers) this skips httpx's per-call merging, a fifth of the client's CPU.
    request = httpx.Request("POST", url, headers=headers, content=body, extensions={"timeout": _timeouts(timeout)})
    resp = await client.send_streaming(request) if isinstance(client, StatelessClient) else \
        await client.send(request, stream=True)
    try:
        content = await _read_capped(resp, cap)
    finally:
        await resp.aclose()
    return resp.status_code, resp.reason_phrase, resp.headers, content


async def request_capped(client: httpx.AsyncClient, method: str, url: str, *, json: Any, headers: Mapping[str, str],
                         timeout: float) -> tuple[int, bytes]:
    """One exchange that is not a provider call (a Weval `$call` service) under post_json's rules: one
    deadline of `timeout` seconds for all of it (TimeoutError past it) and the answer read to the
    client's size cap (_TooLarge past it). httpx's own timeouts are per read: a service dripping a byte
    a second, or sending blanks without end, held a run for ever or took it to 13 GB."""
    cap = getattr(client, "max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)
    async with asyncio.timeout(timeout):
        request = client.build_request(method, url, json=json, headers=headers, timeout=timeout)
        resp = await client.send(request, stream=True)
        try:
            content = await _read_capped(resp, cap)
        finally:
            await resp.aclose()
    return resp.status_code, content


def too_large(exc: BaseException) -> str | None:
    """What request_capped's refusal of an answer over the cap says, or None for another exception."""
    return f"the answer is larger than the size limit ({exc})" if isinstance(exc, _TooLarge) else None


def wire_headers(client: httpx.AsyncClient, headers: httpx.Headers) -> dict[str, str]:
    """Merged headers as a provider sends them: a plain dict (lower-case names), which aiohttp takes as it
    is. Over aiohttp, Accept-Encoding keeps only what aiohttp decodes too (httpx lists what httpx decodes,
    zstd through `zstandard`, which aiohttp does not use), so that the answer is readable either way."""
    plain = dict(headers.items())
    accepted = plain.get("accept-encoding")
    if accepted is not None and isinstance(client, AiohttpClient):
        decodes = _aiohttp_decodes()
        plain["accept-encoding"] = ", ".join(e for e in (x.strip() for x in accepted.split(","))
                                             if e.lower() in decodes)
    return plain


def _aiohttp_decodes() -> frozenset[str]:
    from aiohttp import compression_utils

    return frozenset({"gzip", "deflate", "identity"}
                     | ({"br"} if compression_utils.HAS_BROTLI else set())
                     | ({"zstd"} if compression_utils.HAS_ZSTD else set()))


def transport_error(exc: BaseException, provider: str, url: str | httpx.URL, timeout: float) -> ProviderError | None:
    """The ProviderError (timeout or connection, retryable) for an exception of the HTTP stack; None for
    anything else (a bug, to be raised as it is). Raise it `from None`: the chained exception would
    print the URL, which for custom models may carry a key."""
    kind = _transport_failure(exc)
    if kind is None:
        return None
    if kind == TIMEOUT:
        return ProviderError(TIMEOUT, f"{provider}: no answer within {timeout:g} s", None, True, provider=provider)
    return ProviderError(
        CONNECTION, f"{provider}: connection failed ({_describe(exc)}) to {_origin(url)}", None, True,
        provider=provider,
    )


def status_error(provider: str, status: int, reason: str, headers: Mapping[str, str], content: bytes) -> ProviderError:
    """The ProviderError for an answer with an error status (>= 300): its kind, whether a retry can help
    and the server's Retry-After."""
    kind = _KIND_BY_STATUS.get(status) or (SERVER if status >= 500 else BAD_REQUEST)
    retryable = _retryable(status)
    retry_after = retry_after_from_headers(headers) if retryable else None
    detail = _error_detail(content) or reason
    if status == 429 and b"insufficient_quota" in content:
        # OpenAI's "you exceeded your current quota": billing, not a rate. Waiting cannot help.
        retryable, retry_after = False, None
        detail += " (the account's quota is used up: retrying cannot help)"
    return ProviderError(kind, f"{provider}: HTTP {status}: {detail}", status, retryable, retry_after=retry_after,
                         provider=provider)


class _TooLarge(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


async def _read_capped(resp: httpx.Response, cap: int) -> bytes:
    """The decoded body, refused as soon as it passes `cap` bytes (announced or received): memory stays
    bounded by the cap, whatever the server sends."""
    declared = resp.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap and "content-encoding" not in resp.headers:
        raise _TooLarge(resp.status_code, f"announced {_size(int(declared))}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise _TooLarge(resp.status_code, f"more than {_size(cap)} received")
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.3g} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _transport_failure(exc: BaseException) -> str | None:
    """TIMEOUT or CONNECTION for an exception of the HTTP stack (httpx's, aiohttp's, the socket's), None
    for anything else (a bug, to be raised as it is)."""
    if isinstance(exc, TimeoutError):  # asyncio.timeout's deadline
        return TIMEOUT
    if isinstance(exc, httpx.TimeoutException):
        # httpx-aiohttp maps every aiohttp ClientConnectionError (a refused connection, a server that
        # hung up) to httpx.ConnectTimeout: only a real timeout underneath is one.
        cause = exc.__cause__
        return TIMEOUT if cause is None or isinstance(cause, TimeoutError) else CONNECTION
    if isinstance(exc, httpx.TransportError | httpx.DecodingError | OSError):
        return CONNECTION
    aiohttp = sys.modules.get("aiohttp")  # errors the transport does not map (a malformed status line)
    if aiohttp is not None and isinstance(exc, aiohttp.ClientError):
        return CONNECTION
    return None


def _describe(exc: BaseException) -> str:
    """One line naming what failed underneath (aiohttp's exception, which httpx-aiohttp chains)."""
    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) and exc.__cause__ is not None else exc
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None and isinstance(cause, aiohttp.ClientResponseError):
        text = cause.message  # its str() adds the URL, which for a custom model may carry a key
    elif aiohttp is not None and isinstance(cause, aiohttp.InvalidURL):
        text = "the URL is not valid"  # its str() is the URL itself
    else:
        text = str(cause)
    return f"{type(cause).__name__}: {' '.join(text.split()) or 'no detail'}"


_TIMEOUTS: dict[float, dict[str, float]] = {}


def _timeouts(seconds: float) -> dict[str, float]:
    t = _TIMEOUTS.get(seconds)
    if t is None:
        t = _TIMEOUTS[seconds] = {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}
    return t


def endpoint_url(url: str, provider: str) -> httpx.URL:
    """`url` (a base URL from the environment, a custom model's `url`, a target's `endpoint`) parsed, or
    a ProviderError (config) naming the provider: a URL httpx cannot parse (an unclosed `[`, a port out of
    range, a control character, over 64 KB) was an InvalidURL traceback that stopped the whole run, and a
    user name or password in it was refused by aiohttp with a ValueError, or sent and then printed with
    the URL in connection errors. Neither part of the URL is shown in the message."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise ProviderError(CONFIG, f"{provider}: the endpoint URL is not valid ({exc.__class__.__name__}; "
                                    "check its *_BASE_URL variable, `url` or `endpoint`)", provider=provider) from None
    if parsed.userinfo:
        raise ProviderError(CONFIG, f"{provider}: the endpoint URL holds a user name or password (not shown); put "
                                    "credentials in the API key variable or the headers", provider=provider)
    return parsed


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
        # The lane of this provider's key (rate_limits.py), set by the runner; None outside a run.
        self.rate_limit: AdaptiveLimit | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = make_client(timeout=self.timeout)
        return self._client

    _headers: dict[str, str] = {}
    _merged: dict[str, str] | None = None

    @property
    def request_headers(self) -> dict[str, str]:
        """The client's default headers overlaid with this provider's, merged once (wire_headers)."""
        if self._merged is None:
            for name, value in self._headers.items():
                if not _SENDABLE_HEADER.fullmatch(value):
                    # A key read with its trailing newline, or pasted with a non-ASCII character: HTTP
                    # cannot carry it (aiohttp and httpx raise, with the value in the message).
                    raise ProviderError(
                        CONFIG, f"{self.name}: the {name!r} header holds a line break, a control character or "
                        "a character outside ASCII (a stray newline in the API key's variable?); "
                        "it cannot be sent", provider=self.name)
            merged = httpx.Headers(self.client.headers)
            merged.update(self._headers)
            self._merged = wire_headers(self.client, merged)
        return self._merged

    def quota_key(self) -> str:
        """Whose rate limits this provider's calls count against: its host and the credentials it sends
        (hashed, never shown). Two models on one key share a key; two keys, or two hosts, do not."""
        url = getattr(self, "chat_url", None) or getattr(self, "url", None) or getattr(self, "models_url", None)
        origin = _origin(url) if url else self.name
        creds = sorted((k.lower(), v) for k, v in self._headers.items() if is_sensitive_header(k))
        return f"{origin}#{hashlib.blake2b(repr(creds).encode(), digest_size=8).hexdigest()}"

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
            req.timeout or self.timeout, limit=self.rate_limit,
        )
        try:
            return self.parse(data, latency_ms)
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
            # The parsers read every field through answer_fields; this is the net under a shape they
            # did not foresee: a bad answer is an error cell, never a crash of the run.
            raise ProviderError(
                BAD_RESPONSE, f"{self.name}: malformed answer ({type(exc).__name__}: {exc})", 200, False,
                provider=self.name,
            ) from None

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

    parameters: dict[str, Any] = {}

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name}

    def endpoint_identity(self, url: str) -> dict[str, Any]:
        """The identity of a provider that calls one endpoint: its name, the URL, then the parameters and
        the bound model when set. The key order is part of every cache key, so it never changes."""
        ident: dict[str, Any] = {"provider": self.name, "url": url}
        if self.parameters:
            ident["parameters"] = self.parameters
        if self.bound_model:
            ident["model"] = self.bound_model
        return ident

    def __repr__(self) -> str:
        ident = ", ".join(f"{k}={v!r}" for k, v in self.identity().items())
        return f"{type(self).__name__}({ident})"
