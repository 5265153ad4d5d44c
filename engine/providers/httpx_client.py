"""httpx's client over aiohttp, loaded only where httpx's API is needed: a proxy (HTTP_PROXY, HTTPS_PROXY,
ALL_PROXY), `--transport httpx` or a transport of one's own (tests' httpx.MockTransport), and httpx's API
asked of the direct client (the batch APIs, Weval `$call` services: `DirectClient.httpx_client`).
A run without a proxy never imports this module (providers/http.py's DirectClient)."""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from evalspec.providers.aiohttp_session import load_aiohttp
from evalspec.providers.aiohttp_session import post_aiohttp as _post_aiohttp
from evalspec.providers.aiohttp_session import session_factory as _session_factory


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

    max_response_bytes: int = 8 * 1024 * 1024

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
    """httpx's API over aiohttp (`httpx-aiohttp`'s transport), as the OpenAI and Anthropic SDKs do. httpx
    reads HTTP_PROXY / HTTPS_PROXY / ALL_PROXY / NO_PROXY and mounts one transport per proxy, so these
    two hooks build every transport, direct or through a proxy.

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
            self._make_session = _session_factory(verify, limits.max_connections, limits.keepalive_expiry)
            transport = _aiohttp_transport(limits, None, self.aiohttp_session)
        self._direct = transport
        return transport

    def _init_proxy_transport(self, proxy: httpx.Proxy, verify: Any = True, cert: Any = None,
                              trust_env: bool = True, http1: bool = True, http2: bool = False,
                              limits: httpx.Limits = _LIMITS, **_: Any) -> httpx.AsyncBaseTransport:
        self._proxied = True
        return _aiohttp_transport(limits, proxy,
                                  _session_factory(verify, limits.max_connections, limits.keepalive_expiry))

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

    def post_direct(self, url: Any, body: bytes, headers: Mapping[str, str],
                    cap: int) -> Awaitable[tuple[int, str, Mapping[str, str], bytes]]:
        """POST on the aiohttp session: (status, reason, headers, the decoded body, at most `cap` bytes),
        under the caller's deadline (aiohttp_session.post_aiohttp)."""
        return _post_aiohttp(self.aiohttp_session(), url, body, headers, cap)

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            session, self._session = self._session, None
            if session is not None and not session.closed:
                await session.close()


# AiohttpTransport turns its `verify` into an SSL context at once (certifi's bundle: 50-250 ms here) and
# uses it only for a session it makes itself; ours come from _session_factory, so it gets this
# fail-closed placeholder (it verifies and trusts no CA) and no time is spent.
_UNUSED_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _aiohttp_transport(limits: httpx.Limits, proxy: httpx.Proxy | None,
                       session: Callable[[], Any]) -> httpx.AsyncBaseTransport:
    load_aiohttp()  # before httpx_aiohttp imports it (providers/aiohttp_session.py)
    from httpx_aiohttp import AiohttpTransport

    return AiohttpTransport(verify=_UNUSED_TLS, limits=limits, proxy=proxy, client=session)


def build(transport: str | httpx.AsyncBaseTransport, concurrency: int, timeout: float, verify: Any,
          headers: Mapping[str, str]) -> StatelessClient:
    """The httpx client make_client asked for; httpx reads the proxy variables here (InvalidURL)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency, keepalive_expiry=30.0)
    kwargs: dict[str, Any] = {"timeout": httpx.Timeout(timeout), "headers": dict(headers), "follow_redirects": False}
    if isinstance(transport, httpx.AsyncBaseTransport):
        return StatelessClient(transport=transport, **kwargs)
    if transport == "aiohttp":
        return AiohttpClient(limits=limits, verify=verify, **kwargs)
    return StatelessClient(limits=limits, verify=verify, **kwargs)


async def send(client: Any, url: Any, body: bytes, headers: Mapping[str, str],
               timeouts: dict[str, float]) -> httpx.Response:
    """A provider's POST through httpx (a proxy, or a client with a transport of its own); the answer is
    left open for the caller to read and close."""
    # Built by hand rather than with client.post(): with headers already merged with the client's
    # (HttpProvider.request_headers) this skips httpx's per-call merging, a fifth of the client's CPU.
    request = httpx.Request("POST", url if isinstance(url, str | httpx.URL) else str(url), headers=headers,
                            content=body, extensions={"timeout": timeouts})
    if isinstance(client, StatelessClient):
        return await client.send_streaming(request)
    return await client.send(request, stream=True)
