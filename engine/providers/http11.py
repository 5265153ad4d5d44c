"""An httpx transport: HTTP/1.1 over asyncio, responses parsed by llhttp (httptools).

Why our own: a run is a few thousand small JSON POSTs to one or two hosts, and the client's CPU per call
decides how fast a run goes against a fast local server. httpx's default transport (httpcore over h11,
pure Python) reaches ~340 calls/s here; httpx over aiohttp ~2,000/s, with aiohttp's own request
machinery (and its import: 0.17 s, mostly two TLS contexts built at import time) the larger part of the
cost. What a run needs of HTTP is small, so this transport does only that, in one readable file:

- HTTP/1.1 with keep-alive: a pool of idle connections per origin, at most `max_connections` in use,
  idle ones closed after `keepalive_expiry`; a request that finds its reused connection closed by the
  server before any answer is sent again once on a new one (the usual keep-alive race);
- TLS with the system store (certifi's where the system has none; built on first use, not at import),
  or a given context;
- HTTP proxies from HTTP_PROXY / HTTPS_PROXY / ALL_PROXY / NO_PROXY, read once: absolute-form requests
  for http://, a CONNECT tunnel for https://, credentials in the proxy URL sent as Basic;
- httpx's timeouts (connect, read, pool) mapped to httpx's exceptions; no write timeout (a request is
  one buffered write of a few kilobytes);
- bodies read whole and handed back still encoded, so httpx's gzip/deflate/br decoding applies as with
  its own transport; no streaming, no HTTP/2, no HEAD (LLM APIs need none of them).

llhttp (Node's parser) does the parsing: status line, headers, Content-Length, chunked bodies, 1xx
responses, keep-alive rules. A body delimited by the connection closing ends at EOF.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
import urllib.parse
import urllib.request
from typing import Any

import httptools
import httpx

Origin = tuple[str, str, int]  # scheme, host, port

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HAPPY_EYEBALLS_DELAY = 0.25  # RFC 8305's advice: try the next address (IPv4 after IPv6) after 250 ms


class _Exchange(asyncio.Protocol):
    """One connection: writes requests, parses answers; `answer()` waits for the next whole response."""

    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.head_only = False  # a CONNECT: the answer ends with its headers
        self.idle_since = 0.0
        self.requests = 0
        self._waiter: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.received = False  # any byte of the current answer
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        self.error: BaseException | None = None

    # asyncio.Protocol ----------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.received = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._finish()  # a CONNECT tunnel's 200: what follows belongs to the tunnel
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"malformed HTTP response: {exc}"))

    def eof_received(self) -> bool:
        # A body with neither Content-Length nor chunked framing ends when the server closes.
        if self.headers_done and not self.complete and not any(
            k.lower() in (b"content-length", b"transfer-encoding") for k, _ in self.headers
        ):
            self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.complete:
            if not self.received:
                self._fail(httpx.RemoteProtocolError("server disconnected without sending a response"))
            else:
                self._fail(httpx.ReadError(f"connection closed in the middle of the response{_detail(exc)}"))

    # llhttp callbacks ----------------------------------------------------------------------------
    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True
        if self.head_only and self.status >= 200:
            self._finish()

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self.status < 200:  # an interim answer (100 Continue, 103 Early Hints): wait on
            self._reset()
            self.received = True
            return
        self.keep_alive = self.parser.should_keep_alive()  # only meaningful while parsing
        self._finish()

    # ---------------------------------------------------------------------------------------------
    def _finish(self) -> None:
        self.complete = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        self.close()

    def send(self, data: bytes) -> None:
        assert self.transport is not None
        self._reset()
        self.requests += 1
        if self.closed or self.transport.is_closing():
            self.error = httpx.RemoteProtocolError("server disconnected without sending a response")
            return
        self.transport.write(data)

    async def answer(self) -> None:
        """Wait for the response to the request just sent (raises httpx errors)."""
        if not (self.complete or self.error):
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self.error is not None:
            raise self.error

    @property
    def reusable(self) -> bool:
        return not self.closed and self.complete and self.keep_alive

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def _detail(exc: BaseException | None) -> str:
    return f" ({exc})" if exc else ""


class Http11Transport(httpx.AsyncBaseTransport):
    name = "http11"

    def __init__(
        self,
        *,
        limits: httpx.Limits | None = None,
        verify: bool | ssl.SSLContext = True,
        trust_env: bool = True,
    ) -> None:
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._max_connections = limits.max_connections or 1_000_000
        self._max_idle = limits.max_keepalive_connections or self._max_connections
        self._keepalive_expiry = limits.keepalive_expiry if limits.keepalive_expiry is not None else 5.0
        self._verify = verify
        self._ssl_context: ssl.SSLContext | None = verify if isinstance(verify, ssl.SSLContext) else None
        self._env_proxies = urllib.request.getproxies_environment() if trust_env else {}
        self._proxy_by_origin: dict[Origin, httpx.URL | None] = {}
        self._idle: dict[Origin, list[_Exchange]] = {}
        self._slots: asyncio.Semaphore | None = None
        self._closed = False

    # -- public ------------------------------------------------------------------------------------
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}", request=request)
        if request.method == "HEAD":
            raise httpx.UnsupportedProtocol("HEAD requests are not supported by this transport", request=request)
        if self._closed:
            raise RuntimeError("the transport is closed")
        origin: Origin = (url.scheme, url.host, url.port or _DEFAULT_PORTS[url.scheme])
        timeouts = request.extensions.get("timeout") or {}
        try:
            body = request.content
        except httpx.RequestNotRead:
            body = await request.aread()
        proxy = self._proxy_for(origin)
        data = _serialize(request, body, absolute=proxy is not None and origin[0] == "http", proxy=proxy)

        slots = self._slots
        if slots is None:
            slots = self._slots = asyncio.Semaphore(self._max_connections)
        if slots.locked():
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await slots.acquire()
            except TimeoutError:
                raise httpx.PoolTimeout("no connection became free in time", request=request) from None
        else:
            await slots.acquire()  # free: returns at once
        conn: _Exchange | None = None
        try:
            conn = self._checkout(origin)
            for attempt in (0, 1):
                if conn is None:
                    conn = await self._connect(origin, proxy, timeouts, request)
                reused = conn.requests > 0
                conn.send(data)
                try:
                    async with asyncio.timeout(timeouts.get("read")):
                        await conn.answer()
                except TimeoutError:
                    raise httpx.ReadTimeout("no response in time", request=request) from None
                except httpx.RemoteProtocolError:
                    if reused and not conn.received and attempt == 0:
                        conn = None  # the server had closed the idle connection: once more, on a new one
                        continue
                    raise
                break
            assert conn is not None
            extensions: dict[str, Any] = {"http_version": b"HTTP/1.1"}
            if conn.reason:
                extensions["reason_phrase"] = conn.reason
            response = httpx.Response(conn.status, headers=conn.headers, content=b"".join(conn.body),
                                      extensions=extensions, request=request)
            self._checkin(conn)
            conn = None
            return response
        except httpx.TransportError as exc:
            try:
                exc.request  # noqa: B018 - raises when the error was made without one
            except RuntimeError:
                exc.request = request  # errors raised by a connection know no request
            raise
        finally:
            if conn is not None:
                conn.close()  # failed or cancelled mid-exchange: its state is unknown, never reuse it
            slots.release()

    async def aclose(self) -> None:
        self._closed = True
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()

    # -- pool --------------------------------------------------------------------------------------
    def _checkout(self, origin: Origin) -> _Exchange | None:
        conns = self._idle.get(origin)
        now = time.monotonic()
        while conns:
            conn = conns.pop()
            if not conn.closed and now - conn.idle_since < self._keepalive_expiry:
                return conn
            conn.close()
        return None

    def _checkin(self, conn: _Exchange) -> None:
        conns = self._idle.setdefault(conn.origin, [])
        if self._closed or not conn.reusable or len(conns) >= self._max_idle:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        conns.append(conn)

    async def _connect(self, origin: Origin, proxy: httpx.URL | None, timeouts: dict[str, Any],
                       request: httpx.Request) -> _Exchange:
        loop = asyncio.get_running_loop()
        scheme, host, port = origin
        conn = _Exchange(origin)
        target = (proxy.host, proxy.port or 80) if proxy is not None else (host, port)
        tls = self._context() if scheme == "https" else None
        try:
            async with asyncio.timeout(timeouts.get("connect")):
                if proxy is None:
                    await loop.create_connection(lambda: conn, *target, ssl=tls, server_hostname=host if tls else None,
                                                 happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY)
                else:
                    await loop.create_connection(lambda: conn, *target, happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY)
                    if tls is not None:
                        conn = await self._tunnel(conn, origin, proxy, tls, request)
        except TimeoutError:
            conn.close()
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out", request=request) from None
        except OSError as exc:  # refused, unreachable, unknown host, TLS failure (ssl.SSLError)
            conn.close()
            raise httpx.ConnectError(f"cannot connect to {target[0]}:{target[1]}: {exc}", request=request) from None
        except BaseException:
            conn.close()
            raise
        return conn

    async def _tunnel(self, conn: _Exchange, origin: Origin, proxy: httpx.URL, tls: ssl.SSLContext,
                      request: httpx.Request) -> _Exchange:
        """CONNECT through the proxy, then TLS with the origin inside the tunnel."""
        _, host, port = origin
        authority = (f"[{host}]:{port}" if ":" in host else f"{host}:{port}").encode("ascii")
        head = b"CONNECT " + authority + b" HTTP/1.1\r\nHost: " + authority + b"\r\n"
        head += _proxy_auth(proxy) + b"\r\n"
        conn.head_only = True
        conn.send(head)
        await conn.answer()
        if conn.status != 200:
            conn.close()
            raise httpx.ProxyError(f"the proxy refused the tunnel to {host}:{port}: HTTP {conn.status}",
                                   request=request)
        assert conn.transport is not None
        loop = asyncio.get_running_loop()
        inner = _Exchange(origin)
        transport = await loop.start_tls(conn.transport, inner, tls, server_hostname=host)
        if transport is None:
            raise httpx.ConnectError("TLS through the proxy tunnel failed", request=request)
        inner.connection_made(transport)  # start_tls does not call it
        return inner

    def _context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            if self._verify is False:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            else:
                ctx = system_tls_context()
            ctx.set_alpn_protocols(["http/1.1"])
            self._ssl_context = ctx
        return self._ssl_context

    def _proxy_for(self, origin: Origin) -> httpx.URL | None:
        if not self._env_proxies:
            return None
        if origin not in self._proxy_by_origin:
            scheme, host, _ = origin
            raw = self._env_proxies.get(scheme) or self._env_proxies.get("all")
            proxy = None
            if raw and not urllib.request.proxy_bypass_environment(host, self._env_proxies):
                proxy = httpx.URL(raw if "://" in raw else f"http://{raw}")
                if proxy.scheme != "http":
                    raise httpx.UnsupportedProtocol(
                        f"proxy {proxy.scheme}://{proxy.host}: only http:// proxies are supported")
            self._proxy_by_origin[origin] = proxy
        return self._proxy_by_origin[origin]


def system_tls_context() -> ssl.SSLContext:
    """The system's trust store (SSL_CERT_FILE / SSL_CERT_DIR included, so corporate CAs work), or
    certifi's bundle, which httpx installs, where that store is empty (python.org builds on macOS)."""
    ctx = ssl.create_default_context()
    if not ctx.cert_store_stats()["x509_ca"] and not ctx.get_ca_certs():
        import certifi

        ctx.load_verify_locations(certifi.where())
    return ctx


def _serialize(request: httpx.Request, body: bytes, *, absolute: bool, proxy: httpx.URL | None) -> bytes:
    """The request as it goes on the wire. httpx has prepared the headers (Host, Content-Length)."""
    url = request.url
    target = str(url).encode("ascii") if absolute else url.raw_path
    head = [request.method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
    chunked = False
    for name, value in request.headers.raw:
        head += (name, b": ", value, b"\r\n")
        if name.lower() == b"transfer-encoding" and value.lower() == b"chunked":
            chunked = True
    if absolute and proxy is not None:
        head.append(_proxy_auth(proxy))
    head.append(b"\r\n")
    if chunked:  # a streamed body, read whole above: one chunk and the last
        body = (b"%x\r\n" % len(body) + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    return b"".join(head) + body


def _proxy_auth(proxy: httpx.URL) -> bytes:
    if not proxy.userinfo:
        return b""
    return b"Proxy-Authorization: Basic " + base64.b64encode(urllib.parse.unquote_to_bytes(proxy.userinfo)) + b"\r\n"
