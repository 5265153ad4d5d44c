"""The one HTTP client a run shares, and the single POST-JSON exchange every HTTP provider goes through.

One client per run, its pool sized to the run's concurrency: a client per call would pay a TCP handshake
and pool set-up each time and cap throughput far below the runner's target. Without a proxy it is
aiohttp's session itself (DirectClient) and httpx is not imported; httpx's client (httpx_client.py) is
loaded for a proxy, another transport, or where httpx's API is asked for.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import ssl
import sys
import time
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from evalspec import __version__ as _version
from evalspec.jsonio import dumps_bytes, loads
from evalspec.providers.aiohttp_session import TooLarge as _TooLarge
from evalspec.providers.aiohttp_session import describe_size as _size
from evalspec.providers.aiohttp_session import load_aiohttp as _load_aiohttp
from evalspec.providers.aiohttp_session import post_aiohttp as _post_aiohttp
from evalspec.providers.aiohttp_session import session_factory as _session_factory
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
from evalspec.providers.http_errors import describe_failure, transport_failure
from evalspec.providers.rate_limits import AdaptiveLimit
from evalspec.providers.redact import clip, is_sensitive_header
from evalspec.providers.retry import retry_after_from_headers

if TYPE_CHECKING:
    import httpx
    import yarl

    from evalspec.providers import http_process

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


_CLIENTS = itertools.count()


class DirectClient:
    """The default client: aiohttp's session itself, used when no proxy is configured (no HTTP_PROXY,
    HTTPS_PROXY or ALL_PROXY). Provider calls (`post_json`) go straight to the session (`post_direct`);
    httpx is not imported. Anything else asked of it (httpx's API: `send`, `get`, `build_request`… for the
    batch APIs, Weval `$call` services, tests) goes to an httpx client over the same session and pool,
    built on first use (`httpx_client`, providers/httpx_client.py)."""

    direct = True

    def __init__(self, concurrency: int, timeout: float, verify: bool | ssl.SSLContext,
                 max_response_bytes: int) -> None:
        self.concurrency = concurrency
        self.timeout = timeout
        self.verify = verify
        self.max_response_bytes = max_response_bytes
        # What httpx's client sends by default (Accept-Encoding: what aiohttp decodes, wire_headers), so
        # that a call is the same bytes whichever client carries it.
        self.headers: dict[str, str] = {"accept": "*/*", "accept-encoding": ", ".join(_aiohttp_decodes(ordered=True)),
                                         "connection": "keep-alive", "user-agent": USER_AGENT}
        self._make_session = _session_factory(verify, concurrency, 30.0)
        self._session: Any = None
        self._httpx: Any = None
        self._remote: http_process.HttpProcess | None = None  # the run's HTTP process, once asked (post_direct)
        self._remote_tried: asyncio.AbstractEventLoop | None = None  # the loop it was asked in
        # its session in the HTTP process: this client's own (a number), TLS checked or not, the pool's size
        self._remote_key = (next(_CLIENTS), bool(verify), concurrency)

    def aiohttp_session(self) -> Any:
        """The aiohttp session, made on first use (in the running loop)."""
        if self._session is None:
            self._session = self._make_session()
        return self._session

    def post_direct(self, url: Any, body: bytes, headers: Mapping[str, str],
                    cap: int) -> Awaitable[tuple[int, str, Mapping[str, str], bytes]]:
        """POST on the aiohttp session: (status, reason, headers, the decoded body, at most `cap` bytes),
        under the caller's deadline (aiohttp_session.post_aiohttp) — in the run's HTTP process when it has
        one (http_process.py), else here."""
        remote = self._remote
        if remote is None and self._remote_tried is None:
            remote = self._find_remote()
        if remote is not None and not remote.ended:
            return remote.post(self._remote_key, *_url_text(url), body, headers, cap)
        return _post_aiohttp(self.aiohttp_session(), url, body, headers, cap)

    def starting(self) -> Awaitable[None] | None:
        """While the run's HTTP process is starting, what to await before a call's deadline is armed (its
        start is not the call's time); None once it is ready, or when the calls are this process's."""
        remote = self._remote
        if remote is None and self._remote_tried is None:
            remote = self._find_remote()
        return None if remote is None or remote.said_ready or remote.ended else remote.ready()

    def _find_remote(self) -> http_process.HttpProcess | None:
        loop = asyncio.get_running_loop()
        if self._remote_tried is loop:
            return None
        self._remote_tried = loop
        if isinstance(self.verify, bool):  # (a TLS context of its own cannot cross to another process)
            from evalspec.providers import http_process

            self._remote = http_process.for_loop(loop)
        return self._remote

    def httpx_client(self) -> httpx.AsyncClient:
        """httpx's client over this client's aiohttp session (one pool), made on first use."""
        if self._httpx is None:
            from evalspec.providers.httpx_client import build

            view = build("aiohttp", self.concurrency, self.timeout, self.verify, {"user-agent": USER_AGENT})
            view.max_response_bytes = self.max_response_bytes
            view._make_session = self.aiohttp_session  # type: ignore[attr-defined]
            self._httpx = view
        return self._httpx

    def __getattr__(self, name: str) -> Any:  # httpx's API, from the httpx client over the same session
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.httpx_client(), name)

    async def aclose(self) -> None:
        remote, self._remote = self._remote, None
        if remote is not None:
            await remote.close_session(self._remote_key)
        try:
            if self._httpx is not None:
                await self._httpx.aclose()
        finally:
            session, self._session = self._session, None
            if session is not None and not session.closed:
                await session.close()


HttpClient: TypeAlias = "httpx.AsyncClient | DirectClient"


def _env_proxied() -> bool:
    """Whether the environment names a proxy: httpx mounts one for http, https or all in getproxies()
    (urllib's reading of *_PROXY, the same function httpx calls; NO_PROXY alone mounts none)."""
    from urllib.request import getproxies

    proxies = getproxies()
    return any(proxies.get(scheme) for scheme in ("http", "https", "all"))


def make_client(
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: str | httpx.AsyncBaseTransport = "aiohttp",
    verify: bool | ssl.SSLContext = True,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> HttpClient:
    """The shared client for a run: at most `concurrency` requests in flight, connections kept alive,
    answers larger than `max_response_bytes` refused (post_json reads at most that much).

    transport: "aiohttp" (default: aiohttp's session itself, DirectClient; httpx over aiohttp where a
    proxy is configured, see ARCHITECTURE.md for why), "httpx" (httpx's own: 150–340 calls/s here, a
    tenth of aiohttp's), or any httpx transport instance (tests pass httpx.MockTransport).
    Close it with `await client.aclose()`.
    """
    concurrency = max(1, int(concurrency))
    cap = max(1, int(max_response_bytes))
    if isinstance(transport, str) and transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; choose one of {', '.join(TRANSPORTS)}")
    if transport == "aiohttp" and not _env_proxied():
        return DirectClient(concurrency, timeout, verify, cap)
    from evalspec.providers import httpx_client

    try:  # httpx reads HTTP_PROXY, HTTPS_PROXY, ALL_PROXY here: one it cannot parse was a traceback
        client = httpx_client.build(transport, concurrency, timeout, verify, {"user-agent": USER_AGENT})
    except httpx_client.httpx.InvalidURL as exc:
        raise ProviderError(CONFIG, f"a proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) is not a valid URL "
                                    f"({exc.__class__.__name__}; not shown)") from None
    client.max_response_bytes = cap
    return client


def transport_name(client: HttpClient) -> str:
    if isinstance(client, DirectClient):
        return "aiohttp"
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
    client: HttpClient,
    provider: str,
    url: str | httpx.URL | yarl.URL,
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
    direct = getattr(client, "direct", False)
    if direct and (starting := client.starting()) is not None:  # type: ignore[union-attr]
        await starting  # the run's HTTP process (http_process.py) is not ready yet: not the call's time
    generation = limit.generation if limit is not None else 0
    # The one deadline, kept as `async with asyncio.timeout(timeout)` keeps it (the same TimerHandle and
    # the same TimeoutError when it cancelled the exchange and nothing else cancelled the task meanwhile),
    # without a Timeout object and its two awaited methods a call.
    loop = asyncio.get_running_loop()
    task = asyncio.current_task(loop)
    if task is None:
        raise RuntimeError("post_json must run inside a task")
    cancelling = task.cancelling()
    expired: list[bool] = []
    deadline = loop.call_at(loop.time() + timeout, _expire, task, expired)
    t0 = time.perf_counter()
    try:
        try:
            if direct:
                # Without a proxy, the default client's calls go straight to aiohttp (DirectClient.post_direct).
                status, reason, resp_headers, content = await client.post_direct(  # type: ignore[union-attr]
                    _for_aiohttp(url), body, headers if isinstance(headers, dict) else dict(headers.items()), cap)
            else:
                status, reason, resp_headers, content = await _send(client, url, body, headers, timeout, cap)
        except BaseException as exc:
            deadline.cancel()
            if expired and task.uncancel() <= cancelling and type(exc) is asyncio.CancelledError:
                raise TimeoutError from exc
            raise
        deadline.cancel()
        if expired:
            task.uncancel()
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


def _expire(task: asyncio.Task[Any], expired: list[bool]) -> None:
    """post_json's deadline passed: the exchange is cancelled (asyncio.timeout's `_on_timeout`)."""
    task.cancel()
    expired.append(True)


async def _send(client: HttpClient, url: str | httpx.URL | yarl.URL, body: bytes, headers: Mapping[str, str],
                timeout: float, cap: int) -> tuple[int, str, Mapping[str, str], bytes]:
    """The exchange through httpx (a proxy, or a client with a transport of its own)."""
    from evalspec.providers.httpx_client import send

    resp = await send(client, url, body, headers, _timeouts(timeout))
    try:
        content = await _read_capped(resp, cap)
    finally:
        await resp.aclose()
    return resp.status_code, resp.reason_phrase, resp.headers, content


async def request_capped(client: HttpClient, method: str, url: str, *, json: Any, headers: Mapping[str, str],
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


def wire_headers(client: HttpClient, headers: Mapping[str, str]) -> dict[str, str]:
    """Merged headers as a provider sends them: a plain dict (lower-case names), which aiohttp takes as it
    is. Over aiohttp, Accept-Encoding keeps only what aiohttp decodes too (httpx lists what httpx decodes,
    zstd through `zstandard`, which aiohttp does not use), so that the answer is readable either way."""
    plain = dict(headers.items())
    accepted = plain.get("accept-encoding")
    if accepted is not None and (isinstance(client, DirectClient) or type(client).__name__ == "AiohttpClient"):
        decodes = _aiohttp_decodes()
        plain["accept-encoding"] = ", ".join(e for e in (x.strip() for x in accepted.split(","))
                                             if e.lower() in decodes)
    return plain


def _aiohttp_decodes(ordered: bool = False) -> list[str]:
    """The content codings aiohttp decodes (identity too unless `ordered`: then as httpx lists them)."""
    _load_aiohttp()
    from aiohttp import compression_utils

    return (["gzip", "deflate"] + (["br"] if compression_utils.HAS_BROTLI else [])
            + (["zstd"] if compression_utils.HAS_ZSTD else []) + ([] if ordered else ["identity"]))


def transport_error(exc: BaseException, provider: str, url: str | httpx.URL | yarl.URL, timeout: float) -> ProviderError | None:
    """The ProviderError (timeout or connection, retryable) for an exception of the HTTP stack; None for
    anything else (a bug, to be raised as it is). Raise it `from None`: the chained exception would
    print the URL, which for custom models may carry a key."""
    kind = transport_failure(exc)
    if kind is None:
        return None
    if kind == TIMEOUT:
        return ProviderError(TIMEOUT, f"{provider}: no answer within {timeout:g} s", None, True, provider=provider)
    return ProviderError(
        CONNECTION, f"{provider}: connection failed ({describe_failure(exc)}) to {_origin(url)}", None, True,
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


async def _read_capped(resp: httpx.Response, cap: int) -> bytes:  # httpx's answer (_send, request_capped)
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


_TIMEOUTS: dict[float, dict[str, float]] = {}


def _timeouts(seconds: float) -> dict[str, float]:
    t = _TIMEOUTS.get(seconds)
    if t is None:
        t = _TIMEOUTS[seconds] = {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}
    return t


def _url_text(url: str | yarl.URL) -> tuple[str, bool]:
    """The URL as text for the HTTP process, and whether it is already encoded (a yarl.URL's text is)."""
    return (url, False) if isinstance(url, str) else (str(url), True)


def _for_aiohttp(url: str | httpx.URL | yarl.URL) -> Any:
    """The URL as aiohttp takes it: a str or a yarl.URL as it is, httpx's URL as text."""
    httpx = sys.modules.get("httpx")
    return str(url) if httpx is not None and isinstance(url, httpx.URL) else url


_MAX_URL_LENGTH = 65536  # httpx's limit, kept


def endpoint_url(url: str, provider: str) -> yarl.URL:
    """`url` (a base URL from the environment, a custom model's `url`, a target's `endpoint`) parsed (by
    yarl, as aiohttp does; httpx's refusals kept: over 64 KB, a control character), or a ProviderError
    (config) naming the provider: a URL that cannot be parsed (an unclosed `[`, a port out of range) was
    an InvalidURL traceback that stopped the whole run, and a user name or password in it was refused by
    aiohttp with a ValueError, or sent and then printed with the URL in connection errors. Neither part of
    the URL is shown in the message."""
    from yarl import URL

    try:
        if len(url) > _MAX_URL_LENGTH or any(c.isascii() and not c.isprintable() for c in url):
            raise ValueError("not a URL httpx would send")
        parsed = URL(url)
        parsed.port  # noqa: B018 -- a port out of range or not a number raises here
    except (ValueError, TypeError) as exc:
        raise ProviderError(CONFIG, f"{provider}: the endpoint URL is not valid ({exc.__class__.__name__}; "
                                    "check its *_BASE_URL variable, `url` or `endpoint`)", provider=provider) from None
    if parsed.raw_user or parsed.raw_password:
        raise ProviderError(CONFIG, f"{provider}: the endpoint URL holds a user name or password (not shown); put "
                                    "credentials in the API key variable or the headers", provider=provider)
    return parsed


def _origin(url: str | httpx.URL | yarl.URL) -> str:
    """scheme://host[:port] (the port when not the scheme's default), never the path, query or userinfo."""
    from yarl import URL

    try:
        u = url if isinstance(url, URL) else URL(str(url))
        return f"{u.scheme}://{u.host_port_subcomponent or ''}"
    except (ValueError, TypeError):
        return "a URL that cannot be parsed"


class HttpProvider:
    """Shared plumbing of the HTTP providers: the client (shared, or owned and opened lazily), the
    per-call timeout, the bound model, and a repr that never shows a key."""

    name: str = "http"

    def __init__(
        self,
        *,
        client: HttpClient | None = None,
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
    def client(self) -> HttpClient:
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
            # As httpx.Headers(client.headers).update(self._headers) merges (lower-case names, a name of
            # the provider's replacing the client's at the end, a name given twice joined with ", ").
            own: dict[str, str] = {}
            for name, value in self._headers.items():
                key = name.lower()
                own[key] = f"{own[key]}, {value}" if key in own else value
            merged = {k.lower(): v for k, v in self.client.headers.items() if k.lower() not in own}
            merged.update(own)
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

    def chat_url_for(self, req: ChatRequest) -> str | httpx.URL | yarl.URL:
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
