"""The HTTP stack (httpx over aiohttp, through make_client and post_json) at the byte level: raw servers on
127.0.0.1 write exactly the responses under test.

Each server is an asyncio server in the test's own loop; `handler` gets the request head and body and
writes whatever bytes the test wants. Nothing here reaches the internet. Failures are asserted where the
runner meets them: the ProviderError that post_json raises (kind, retryable, a message that says what
happened).
"""

from __future__ import annotations

import asyncio
import gzip
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import pytest
import trustme

from evalspec.providers.aiohttp_session import tls_setting
from evalspec.providers.base import BAD_RESPONSE, CONNECTION, ProviderError
from evalspec.providers.http import make_client, post_json

Handler = Callable[[bytes, bytes, asyncio.StreamWriter], Awaitable[bool]]  # -> keep the connection open?


class RawServer:
    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self.requests: list[bytes] = []  # each request head, as received

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append(head)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                if not await self.handler(head, body, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[RawServer]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()

    def url(self, path: str = "/", scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"


def answer(body: bytes = b'{"ok":true}', *, status: bytes = b"200 OK", headers: bytes = b"") -> Handler:
    async def handler(head: bytes, req_body: bytes, w: asyncio.StreamWriter) -> bool:
        w.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: %d\r\n" % len(body) + headers + b"\r\n" + body)
        await w.drain()
        return True

    return handler


def raw(data: bytes, *, keep_open: bool = True) -> Handler:
    """Answer every request with exactly these bytes; then keep the connection or close it."""

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        w.write(data)
        await w.drain()
        return keep_open

    return handler


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    c = make_client(4, timeout=5.0)
    try:
        yield c
    finally:
        await c.aclose()


async def test_keep_alive_reuses_one_connection(client: httpx.AsyncClient) -> None:
    async with RawServer(answer()).running() as srv:
        for _ in range(5):
            r = await client.post(srv.url("/v1/x?q=1"), content=b'{"a":1}')
            assert r.json() == {"ok": True}
    assert srv.connections == 1
    head = srv.requests[0].decode()
    assert head.startswith("POST /v1/x?q=1 HTTP/1.1\r\n")
    assert "content-length: 7" in head.lower() and f"host: 127.0.0.1:{srv.port}" in head.lower()


async def test_chunked_body(client: httpx.AsyncClient) -> None:
    async with RawServer(raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n")).running() as srv:
        assert (await client.get(srv.url())).json() == {"a": 1}
        assert (await client.get(srv.url())).json() == {"a": 1}
    assert srv.connections == 1


async def test_body_delimited_by_close(client: httpx.AsyncClient) -> None:
    async with RawServer(raw(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it", keep_open=False)).running() as srv:
        assert (await client.get(srv.url())).text == "all of it"
        assert (await client.get(srv.url())).text == "all of it"
    assert srv.connections == 2  # `Connection: close` is honoured: no reuse


async def test_interim_100_continue_is_skipped(client: httpx.AsyncClient) -> None:
    async with RawServer(raw(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")).running() as srv:
        r = await client.post(srv.url(), content=b"x")
    assert (r.status_code, r.text, r.reason_phrase) == (201, "ok", "Created")


async def test_gzip_is_decoded_by_httpx(client: httpx.AsyncClient) -> None:
    packed = gzip.compress(b'{"z":1}')
    async with RawServer(answer(packed, headers=b"Content-Encoding: gzip\r\n")).running() as srv:
        assert (await client.get(srv.url())).json() == {"z": 1}


async def test_stale_keep_alive_connection_is_retried_once(client: httpx.AsyncClient) -> None:
    # The server answers, then closes the idle connection without saying `Connection: close`; the next
    # request must go out on a new one.
    async with RawServer(raw(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", keep_open=False)).running() as srv:
        assert (await client.get(srv.url())).text == "ok"
        await asyncio.sleep(0.05)  # the close may or may not have been seen yet; both must work
        assert (await client.get(srv.url())).text == "ok"
        assert (await client.get(srv.url())).text == "ok"
    assert srv.connections == 3


async def failure(client: httpx.AsyncClient, url: str) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await post_json(client, "openai", url, {"q": 1}, {"content-type": "application/json"}, 5.0)
    return caught.value


async def test_malformed_response_is_a_connection_error_that_says_so(client: httpx.AsyncClient) -> None:
    async with RawServer(raw(b"SMTP READY\r\n\r\n")).running() as srv:
        err = await failure(client, srv.url())
    assert (err.kind, err.retryable) == (CONNECTION, True)
    assert "Bad status line" in err.message and "url=" not in err.message  # no URL: it may carry a key


async def test_disconnect_mid_body_is_a_connection_error(client: httpx.AsyncClient) -> None:
    truncated = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a little"
    async with RawServer(raw(truncated, keep_open=False)).running() as srv:
        err = await failure(client, srv.url())
    assert (err.kind, err.retryable) == (CONNECTION, True)
    assert "payload is not completed" in err.message.lower()


async def test_no_answer_at_all_is_a_connection_error_not_a_timeout(client: httpx.AsyncClient) -> None:
    # httpx-aiohttp maps aiohttp's ServerDisconnectedError to httpx.ConnectTimeout; post_json looks through it.
    async with RawServer(raw(b"", keep_open=False)).running() as srv:
        err = await failure(client, srv.url())
    assert (err.kind, err.retryable) == (CONNECTION, True)
    assert "ServerDisconnectedError" in err.message and "within" not in err.message


async def test_cancelled_request_never_leaves_its_connection_for_reuse(client: httpx.AsyncClient) -> None:
    calls = 0

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(0.3)  # answers late, after the client gave up
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%d" % (len(str(calls)), calls))
        await w.drain()
        return True

    async with RawServer(handler).running() as srv:
        with pytest.raises(asyncio.TimeoutError):
            async with asyncio.timeout(0.1):
                await client.get(srv.url())
        await asyncio.sleep(0.4)
        assert (await client.get(srv.url())).text == "2"  # not the late answer to the first request
    assert srv.connections == 2


async def test_pool_limit() -> None:
    gate = asyncio.Event()

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        await gate.wait()
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        return True

    c = make_client(2, timeout=5.0)
    try:
        async with RawServer(handler).running() as srv:
            busy = [asyncio.create_task(c.get(srv.url())) for _ in range(3)]
            await asyncio.sleep(0.2)
            assert srv.connections == 2  # the third request waits for a free connection
            gate.set()
            assert [r.text for r in await asyncio.gather(*busy)] == ["ok"] * 3
        assert srv.connections == 2
    finally:
        await c.aclose()


async def test_other_schemes_are_refused_clearly(client: httpx.AsyncClient) -> None:
    with pytest.raises(httpx.UnsupportedProtocol):
        await client.get("ftp://127.0.0.1/x")


# --- TLS and proxies -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def server_tls(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(ctx)
    return ctx


def client_tls(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


async def test_https_with_a_trusted_certificate(ca: trustme.CA) -> None:
    c = make_client(4, timeout=5.0, verify=client_tls(ca))
    try:
        async with RawServer(answer(b"secure"), tls=server_tls(ca)).running() as srv:
            assert (await c.get(srv.url(scheme="https"))).text == "secure"
            assert (await c.get(srv.url(scheme="https"))).text == "secure"
        assert srv.connections == 1
    finally:
        await c.aclose()


async def test_https_with_an_untrusted_certificate_fails_to_connect(ca: trustme.CA) -> None:
    c = make_client(4, timeout=5.0)  # the system store does not know this CA
    try:
        async with RawServer(answer(), tls=server_tls(ca)).running() as srv:
            err = await failure(c, srv.url(scheme="https"))
        assert err.kind == CONNECTION and "CERTIFICATE_VERIFY_FAILED" in err.message
        assert srv.requests == []  # nothing was sent over the unverified connection
    finally:
        await c.aclose()


class Proxy:
    """A forward proxy: absolute-form requests are answered directly; CONNECT opens a byte tunnel."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        if head.startswith(b"CONNECT "):
            host, _, port = head.split(b" ")[1].decode().rpartition(":")
            up_r, up_w = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

            async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
                try:
                    while data := await r.read(65536):
                        w.write(data)
                        await w.drain()
                finally:
                    w.close()

            await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer), return_exceptions=True)
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nproxied")
        await writer.drain()
        writer.close()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        try:
            yield f"http://user:p%40ss@127.0.0.1:{server.sockets[0].getsockname()[1]}"
        finally:
            server.close()


async def test_http_through_a_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = Proxy()
    async with proxy.running() as proxy_url:
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        c = make_client(4, timeout=5.0)
        try:
            assert (await c.get("http://api.example.test/v1/models")).text == "proxied"
        finally:
            await c.aclose()
    head = proxy.heads[0].decode()
    assert head.startswith("GET http://api.example.test/v1/models HTTP/1.1\r\n")
    assert "Proxy-Authorization: Basic dXNlcjpwQHNz" in head  # user:p@ss


async def test_provider_calls_take_the_proxy_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # post_json skips AsyncClient.send only when no proxy is configured; with one it goes through it.
    proxy = Proxy()
    async with proxy.running() as proxy_url:
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        c = make_client(4, timeout=5.0)
        try:
            err = await failure(c, "http://api.example.test/v1/chat/completions")
        finally:
            await c.aclose()
    assert err.kind == BAD_RESPONSE and "'proxied'" in err.message  # the proxy's answer, not JSON
    assert proxy.heads[0].startswith(b"POST http://api.example.test/v1/chat/completions HTTP/1.1\r\n")


async def test_https_through_a_connect_tunnel(monkeypatch: pytest.MonkeyPatch, ca: trustme.CA) -> None:
    proxy = Proxy()
    async with RawServer(answer(b"tunnelled"), tls=server_tls(ca)).running() as srv, proxy.running() as proxy_url:
        monkeypatch.setenv("HTTPS_PROXY", proxy_url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        c = make_client(4, timeout=5.0, verify=client_tls(ca))
        try:
            assert (await c.get(srv.url(scheme="https"))).text == "tunnelled"
            assert (await c.get(srv.url(scheme="https"))).text == "tunnelled"  # the tunnel is kept alive
        finally:
            await c.aclose()
    assert len(proxy.heads) == 1 and proxy.heads[0].startswith(f"CONNECT 127.0.0.1:{srv.port} HTTP/1.1".encode())
    assert srv.connections == 1


async def test_no_proxy_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    c = make_client(4, timeout=5.0)
    try:
        async with RawServer(answer(b"direct")).running() as srv:
            assert (await c.get(srv.url())).text == "direct"
    finally:
        await c.aclose()


def test_tls_uses_the_system_store_and_falls_back_to_certifi_when_there_is_none(monkeypatch: pytest.MonkeyPatch,
                                                                              tmp_path) -> None:
    import certifi

    assert tls_setting(True) is True  # aiohttp's own context on the system store (this machine has one)
    assert tls_setting(False) is False
    given = ssl.create_default_context()
    assert tls_setting(given) is given
    nowhere = ssl.DefaultVerifyPaths(str(tmp_path / "none.pem"), str(tmp_path / "none"), "", "", "", "")
    monkeypatch.setattr(ssl, "get_default_verify_paths", lambda: nowhere)
    ctx = tls_setting(True)
    assert isinstance(ctx, ssl.SSLContext)
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    fresh = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    fresh.load_verify_locations(certifi.where())
    assert ctx.cert_store_stats() == fresh.cert_store_stats()


@pytest.mark.parametrize("protocol", ["HTTP/1.0", "HTTP/1.1"])
async def test_a_stdlib_http_server_as_the_fake_provider(protocol: str) -> None:
    # The simplest fake provider people write: http.server, HTTP/1.0 (close after each answer) or
    # HTTP/1.1 (keep-alive, Content-Length).
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = protocol

        def do_POST(self) -> None:
            req = json.loads(self.rfile.read(int(self.headers["content-length"])))
            body = json.dumps({"choices": [{"message": {"content": "ECHO " + req["messages"][-1]["content"]}}]})
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    from evalspec.providers import ChatRequest, provider_for_model

    client = make_client(4, timeout=5.0)
    try:
        env = {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_port}/v1"}
        binding = provider_for_model("openai:m", client=client, env=env)
        answers = await asyncio.gather(*(binding.provider.chat(ChatRequest.of(binding.model_name, f"q{i}"))
                                         for i in range(20)))
        assert [a.text for a in answers] == [f"ECHO q{i}" for i in range(20)]
    finally:
        await client.aclose()
        server.shutdown()
        server.server_close()


# --- the response size cap -------------------------------------------------------------------------


async def capped_call(srv: RawServer, cap: int) -> tuple[dict | None, ProviderError | None]:
    c = make_client(2, timeout=5.0, max_response_bytes=cap)
    try:
        data, _ = await post_json(c, "openai", srv.url(), {"q": 1}, {"content-type": "application/json"}, 5.0)
        return data, None
    except ProviderError as exc:
        return None, exc
    finally:
        await c.aclose()


async def test_an_answer_announced_over_the_cap_is_refused_before_its_body() -> None:
    body = b'{"a":"' + b"x" * 5000 + b'"}'
    async with RawServer(answer(body)).running() as srv:
        data, err = await capped_call(srv, 1000)
        assert data is None and err is not None
        assert (err.kind, err.retryable) == (BAD_RESPONSE, False)
        assert "larger than the 1,000 bytes limit" in err.message and "announced 5,008 bytes" in err.message
        assert "--max-response-mb" in err.message
        assert (await capped_call(srv, 5008))[0] == {"a": "x" * 5000}  # exactly the cap is allowed


async def test_an_answer_without_a_length_is_cut_off_at_the_cap() -> None:
    chunk = b"x" * 4096
    endless = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + (b"1000\r\n" + chunk + b"\r\n") * 64

    async with RawServer(raw(endless)).running() as srv:
        data, err = await capped_call(srv, 10_000)
    assert data is None and err is not None and err.kind == BAD_RESPONSE
    assert "more than 10,000 bytes received" in err.message


async def test_a_compressed_answer_counts_at_its_decoded_size() -> None:
    bomb = gzip.compress(b'{"a":"' + b"0" * 2_000_000 + b'"}')  # ~2 KB on the wire, 2 MB decoded
    async with RawServer(answer(bomb, headers=b"Content-Encoding: gzip\r\n")).running() as srv:
        data, err = await capped_call(srv, 1_000_000)
    assert len(bomb) < 10_000
    assert data is None and err is not None and "more than 1,000,000 bytes received" in err.message


async def test_an_error_body_over_the_cap_is_refused_too() -> None:
    async with RawServer(answer(b"e" * 5000, status=b"500 Internal Server Error")).running() as srv:
        _, err = await capped_call(srv, 1000)
    assert err is not None and err.kind == BAD_RESPONSE and "larger than" in err.message


# --- provider calls straight to aiohttp ---------------------------------------------------------------


async def test_a_provider_call_sends_the_same_request_straight_to_aiohttp_as_through_httpx() -> None:
    """Without a proxy, post_json hands the call to the aiohttp session itself (no httpx Request and
    Response around it); what goes on the wire is what httpx's own transport sends."""
    from evalspec.providers import ChatRequest, provider_for_model
    from evalspec.providers.http import DirectClient

    body = b'{"choices":[{"message":{"content":"hi"}}]}'
    seen: dict[str, dict[str, str]] = {}
    async with RawServer(answer(body, headers=b"Content-Type: application/json\r\n")).running() as srv:
        for transport in ("aiohttp", "httpx"):
            c = make_client(4, timeout=5.0, transport=transport)
            assert isinstance(c, DirectClient) == (transport == "aiohttp")
            try:
                env = {"OPENAI_API_KEY": "sk-wire", "OPENAI_BASE_URL": srv.url("/v1")}
                binding = provider_for_model("openai:m", client=c, env=env)
                assert (await binding.provider.chat(ChatRequest.of(binding.model_name, "hello"))).text == "hi"
            finally:
                await c.aclose()
            lines = srv.requests[-1].decode().split("\r\n")
            assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
            seen[transport] = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
    assert seen["aiohttp"] == seen["httpx"]
    assert seen["aiohttp"]["authorization"] == "Bearer sk-wire"
    assert seen["aiohttp"]["user-agent"].startswith("evalspec/")


async def test_a_provider_call_reads_a_gzip_answer_and_the_retry_after_of_a_refusal(client: httpx.AsyncClient) -> None:
    packed = gzip.compress(b'{"z":1}')
    async with RawServer(answer(packed, headers=b"Content-Encoding: gzip\r\n")).running() as srv:
        data, _ = await post_json(client, "openai", srv.url(), {"q": 1}, {"content-type": "application/json"}, 5.0)
    assert data == {"z": 1}
    refusal = answer(b'{"error":{"message":"slow down"}}', status=b"429 Too Many Requests",
                     headers=b"Retry-After-Ms: 1500\r\n")
    async with RawServer(refusal).running() as srv:
        err = await failure(client, srv.url())
    assert (err.status, err.retryable, err.retry_after) == (429, True, 1.5) and "slow down" in err.message


async def test_a_provider_call_that_gets_no_answer_times_out(client: httpx.AsyncClient) -> None:
    async def silent(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(2)
        return False

    async with RawServer(silent).running() as srv:
        with pytest.raises(ProviderError) as caught:
            await post_json(client, "openai", srv.url(), {"q": 1}, {}, 0.2)
    assert caught.value.kind == "timeout" and "no answer within 0.2 s" in caught.value.message


async def test_the_deadline_of_a_call_leaves_other_cancellations_as_they_are(client: httpx.AsyncClient) -> None:
    """post_json's deadline behaves as `asyncio.timeout` did: its own expiry is a timeout error, but a
    cancellation of the task (a stopped run) stays a cancellation, and an outer deadline that passes
    first is the outer one's TimeoutError; afterwards the task has no cancellation left pending."""

    async def silent(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(2)
        return False

    async with RawServer(silent).running() as srv:
        call = asyncio.create_task(post_json(client, "openai", srv.url(), {"q": 1}, {}, 5.0))
        await asyncio.sleep(0.1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await post_json(client, "openai", srv.url(), {"q": 1}, {}, 5.0)

        async def timed_out_then_goes_on() -> int:
            with pytest.raises(ProviderError) as caught:
                await post_json(client, "openai", srv.url(), {"q": 1}, {}, 0.1)
            assert caught.value.kind == "timeout"
            await asyncio.sleep(0)  # not cancelled again by the deadline that passed
            task = asyncio.current_task()
            assert task is not None
            return task.cancelling()

        assert await asyncio.create_task(timed_out_then_goes_on()) == 0


async def test_an_invalid_url_is_a_connection_error_that_does_not_print_it(client: httpx.AsyncClient) -> None:
    err = await failure(client, "http://[not-an-address/v1?key=sk-secret")
    assert err.kind == CONNECTION and "sk-secret" not in err.message


async def test_closing_the_client_closes_the_session_the_calls_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "0")  # this process's session (the child's: test_http_process.py)
    c = make_client(2, timeout=5.0)
    async with RawServer(answer()).running() as srv:
        assert (await post_json(c, "openai", srv.url(), {}, {}, 5.0))[0] == {"ok": True}
        session = c.aiohttp_session()  # type: ignore[attr-defined]
        assert (await c.get(srv.url())).json() == {"ok": True}  # httpx's API shares it: one pool
        assert c.aiohttp_session() is session  # type: ignore[attr-defined]
        await c.aclose()
    assert session.closed
    assert srv.connections == 1


def test_over_aiohttp_only_encodings_it_decodes_are_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    from aiohttp import compression_utils

    from evalspec.providers.http import wire_headers

    asked = httpx.Headers({"Accept-Encoding": "gzip, deflate, br, zstd", "X-Key": "v"})
    monkeypatch.setattr(compression_utils, "HAS_BROTLI", True)
    monkeypatch.setattr(compression_utils, "HAS_ZSTD", False)
    got = wire_headers(make_client(1), asked)
    assert got == {"accept-encoding": "gzip, deflate, br", "x-key": "v"}
    assert wire_headers(make_client(1, transport="httpx"), asked)["accept-encoding"] == "gzip, deflate, br, zstd"


async def _pooled_with_bytes(client: httpx.AsyncClient) -> bool:
    """Whether a connection idle in the pool has bytes the server sent after its answer (waited for: the
    loop reads them when it next polls the socket)."""
    connector = client.aiohttp_session().connector  # type: ignore[attr-defined]
    for _ in range(500):
        if any(proto._buffer or proto._tail for conns in connector._conns.values() for proto, _ in conns):
            return True
        await asyncio.sleep(0.01)
    return False


async def test_an_answer_sent_after_the_answer_is_never_read_as_the_next_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server (or a proxy in front of one) that writes a second, unrequested answer on a keep-alive
    connection after the first: the next call on that connection read it as its own answer, and the
    prompt was scored on another prompt's text (desync). A connection that received bytes while idle in
    the pool is closed, never reused."""
    asked = 0

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        nonlocal asked
        asked += 1
        own = b'{"n":%d}' % asked
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(own), own))
        await w.drain()
        if asked == 1:
            await asyncio.sleep(0.05)  # after the client has taken its answer: a separate segment
            w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{"n":"stray"}')
            await w.drain()
        return True

    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "0")  # this process's pool, looked into (the child's: test_http_process.py)
    c = make_client(1, timeout=5.0)
    try:
        async with RawServer(handler).running() as srv:
            first, _ = await post_json(c, "openai", srv.url(), {}, {}, 5.0)
            assert first == {"n": 1}
            assert await _pooled_with_bytes(c)
            second, _ = await post_json(c, "openai", srv.url(), {}, {}, 5.0)
            third = await c.get(srv.url())  # httpx's API on the same pool
        assert second == {"n": 2} and third.json() == {"n": 3}
        assert srv.connections == 2
    finally:
        await c.aclose()


# --- endpoint URLs, parsed without httpx -------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://[::1/v1", "http://h:99999/v1", "http://h:port/v1", "http://h/v1\nx",
                                 "http://h/v1\x7f", "http://h/" + "x" * 70_000])
def test_an_endpoint_url_that_does_not_parse_is_a_config_error_that_does_not_show_it(url: str) -> None:
    from evalspec.providers.http import endpoint_url

    with pytest.raises(ProviderError) as caught:
        endpoint_url(url, "openai")
    assert caught.value.kind == "config" and "endpoint URL is not valid" in caught.value.message
    assert "h/v1" not in caught.value.message and "::1" not in caught.value.message


@pytest.mark.parametrize("url", ["http://user:sk-pw@h/v1", "http://sk-user@h/v1", "http://:sk-pw@h/v1"])
def test_an_endpoint_url_with_credentials_is_refused_without_showing_them(url: str) -> None:
    from evalspec.providers.http import endpoint_url

    with pytest.raises(ProviderError) as caught:
        endpoint_url(url, "openai")
    assert caught.value.kind == "config" and "user name or password" in caught.value.message
    assert "sk-" not in caught.value.message


def test_an_endpoint_url_keeps_what_httpx_sent_and_its_origin_names_host_and_port_only() -> None:
    from evalspec.providers.http import _origin, endpoint_url

    assert str(endpoint_url("https://API.example.com:443/v1/chat completions?api-version=1", "x")) == \
        "https://api.example.com/v1/chat%20completions?api-version=1"
    assert _origin(endpoint_url("http://[::1]:8080/v1?key=sk-q", "x")) == "http://[::1]:8080"
    assert _origin("https://api.example.com:443/v1") == "https://api.example.com"
    assert _origin("http://[not-an-address/v1?key=sk-q") == "a URL that cannot be parsed"


def test_provider_headers_replace_the_clients_whatever_their_case() -> None:
    """As httpx.Headers merged them: lower-case names, the provider's value winning, a name given twice
    (in two cases) joined with ', '."""
    from evalspec.providers.openai_compat import OpenAICompatProvider

    provider = OpenAICompatProvider(base_url="http://127.0.0.1:9/v1", api_key="sk-h", client=make_client(1),
                                    headers={"User-Agent": "mine/1", "X-Tag": "a", "x-tag": "b"})
    merged = provider.request_headers
    assert merged["user-agent"] == "mine/1" and merged["x-tag"] == "a, b"
    reference = httpx.Headers(provider.client.headers)  # how they were merged before (httpx's own)
    reference.update(provider._headers)
    assert list(merged.items()) == list(reference.items())
