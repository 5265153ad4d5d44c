"""An httpx transport that sends requests with aiohttp.

Why: httpx's own transport (httpcore) tops out near 300 calls/s on this kind of machine, far from the
2,000 calls in well under 2 s the runner needs; aiohttp's HTTP/1.1 client (C parser, lean connection
pool) reaches it while we keep httpx's API everywhere else (request building, timeouts, exceptions,
content decoding, testability with httpx.MockTransport).

It is deliberately small: HTTP/1.1 only, bodies read whole (LLM APIs answer with one JSON document; we
do not stream), no redirects (httpx handles them above us when asked), no cookies (evaluation calls are
stateless). The response body is handed back still encoded, so httpx's own gzip/deflate/br decoding
applies exactly as with its default transport.
"""

from __future__ import annotations

import ssl
import urllib.request
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httpx

# httpx fills these in; aiohttp computes its own from the URL and body.
_SKIP_REQUEST_HEADERS = frozenset({b"host", b"content-length", b"transfer-encoding", b"connection"})


class AiohttpTransport(httpx.AsyncBaseTransport):
    name = "aiohttp"

    def __init__(
        self,
        *,
        limits: httpx.Limits | None = None,
        verify: bool | ssl.SSLContext = True,
        trust_env: bool = True,
    ) -> None:
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._max_connections = limits.max_connections or 0  # 0 = unlimited in aiohttp
        self._keepalive_expiry = limits.keepalive_expiry or 5.0
        if verify is True:
            self._ssl: bool | ssl.SSLContext = True  # aiohttp's default, certifi-free system store
        elif verify is False:
            self._ssl = False
        else:
            self._ssl = verify
        # Proxies from HTTP(S)_PROXY / NO_PROXY, as httpx does, read once here: aiohttp's own trust_env
        # re-reads the environment on every request, which cost a third of our throughput.
        self._env_proxies = urllib.request.getproxies_environment() if trust_env else {}
        self._proxy_by_origin: dict[tuple[str, str], str | None] = {}
        self._session: aiohttp.ClientSession | None = None
        self._timeouts: dict[tuple[Any, ...], aiohttp.ClientTimeout] = {}

    def _open(self) -> aiohttp.ClientSession:
        # Created lazily: an aiohttp session belongs to the event loop it is created in.
        connector = aiohttp.TCPConnector(
            limit=self._max_connections,
            limit_per_host=0,
            keepalive_timeout=self._keepalive_expiry,
            ssl=self._ssl,
            ttl_dns_cache=300,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,  # httpx decodes, see module doc
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,  # see _proxy_for
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding"),  # httpx's are used
            timeout=aiohttp.ClientTimeout(total=None),
        )
        return self._session

    def _timeout(self, ext: dict[str, float | None] | None) -> aiohttp.ClientTimeout:
        # httpx passes {connect, read, write, pool}; aiohttp's sock_connect/sock_read mean the same as
        # httpx's connect/read, and its `connect` covers waiting for a pooled connection plus connecting.
        ext = ext or {}
        key = (ext.get("connect"), ext.get("read"), ext.get("pool"))
        t = self._timeouts.get(key)
        if t is None:
            connect, read, pool = key
            t = aiohttp.ClientTimeout(
                total=None,
                sock_connect=connect,
                sock_read=read,
                connect=None if pool is None else pool + (connect or 0.0),
            )
            if len(self._timeouts) < 64:
                self._timeouts[key] = t
        return t

    def _proxy_for(self, url: str) -> str | None:
        if not self._env_proxies:
            return None
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc)
        if key not in self._proxy_by_origin:
            proxy = self._env_proxies.get(parts.scheme) or self._env_proxies.get("all")
            if proxy and urllib.request.proxy_bypass_environment(parts.hostname or "", self._env_proxies):
                proxy = None
            self._proxy_by_origin[key] = proxy
        return self._proxy_by_origin[key]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._session or self._open()
        url = str(request.url)
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in request.headers.raw
            if k.lower() not in _SKIP_REQUEST_HEADERS
        ]
        try:
            body: bytes | None = request.content
        except httpx.RequestNotRead:
            body = await request.aread()
        try:
            async with session.request(
                request.method,
                url,
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=self._timeout(request.extensions.get("timeout")),
                server_hostname=request.extensions.get("sni_hostname"),
                proxy=self._proxy_for(url),
            ) as resp:
                content = await resp.read()
                status, raw_headers, reason = resp.status, resp.raw_headers, resp.reason
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "connect timed out", request=request) from exc
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise httpx.ReadTimeout(str(exc) or "read timed out", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc
        except aiohttp.ServerDisconnectedError as exc:
            raise httpx.RemoteProtocolError(str(exc) or "server disconnected", request=request) from exc
        except aiohttp.ClientPayloadError as exc:
            raise httpx.ReadError(str(exc), request=request) from exc
        except aiohttp.ClientResponseError as exc:  # unparsable status line or headers
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        except aiohttp.InvalidURL as exc:
            raise httpx.UnsupportedProtocol(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:  # ClientOSError and friends: the connection broke
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc

        extensions: dict[str, Any] = {"http_version": b"HTTP/1.1"}
        if reason:
            extensions["reason_phrase"] = reason.encode("latin-1", "replace")
        return httpx.Response(status, headers=raw_headers, content=content, extensions=extensions)

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
