"""The run's HTTP process (providers/http_process.py): post_json through the child says what it says without
it — the answer, its headers, each failure's ProviderError — and the child's life follows the run's.

Servers are raw asyncio servers on 127.0.0.1 in the test's loop (test_http_stack.RawServer); the child is the
real one, a second Python process making the POSTs on its own aiohttp session. Every other test of a run
goes through it too (tests/conftest.py sets EVALSPEC_HTTP_PROCESS=1); these hold what only it can get wrong.
"""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import trustme

from evalspec.providers import http_process
from evalspec.providers.base import BAD_RESPONSE, CONNECTION, TIMEOUT, ProviderError
from evalspec.providers.http import make_client, post_json

from .test_http_stack import RawServer, answer, raw


async def _both(url: str, monkeypatch: pytest.MonkeyPatch, payload: dict | None = None,
                **kw: object) -> list[object]:
    """post_json's outcome through the child, then in this process: each an answer or a ProviderError."""
    got: list[object] = []
    for setting in ("1", "0"):
        monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", setting)
        client = make_client(2, timeout=5.0, **kw)  # type: ignore[arg-type]
        try:
            got.append(await post_json(client, "openai", url, payload or {"q": 1},
                                       {"content-type": "application/json"}, 2.0))
        except ProviderError as err:
            got.append((err.kind, err.message, err.status, err.retryable, err.retry_after))
        finally:
            await client.aclose()
    return got


def _children() -> set[int]:
    """This process's live children running the HTTP process."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        state = stat.rsplit(")", 1)[1].split()[0]
        if parent == os.getpid() and state != "Z" and b"evalspec.providers.http_process" in cmdline:
            found.add(int(entry.name))
    return found


async def test_an_answer_is_the_same_through_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'{"choices":[{"message":{"content":"hi \\u00e9"}}],"n":1}'
    async with RawServer(answer(body, headers=b"X-Thing: 1\r\nx-ratelimit-remaining-requests: 7\r\n")).running() as srv:
        through, here = await _both(srv.url("/v1/chat/completions?x=%20y"), monkeypatch)
    assert through[0] == here[0] == {"choices": [{"message": {"content": "hi é"}}], "n": 1}  # type: ignore[index]
    # the same request bytes reached the server both times (the URL, its query as given, the body, the headers)
    first, second = (r.split(b"\r\n", 1)[1] for r in srv.requests)
    assert srv.requests[0].split(b"\r\n", 1)[0] == srv.requests[1].split(b"\r\n", 1)[0] == \
        b"POST /v1/chat/completions?x=%20y HTTP/1.1"
    assert sorted(first.lower().split(b"\r\n")) == sorted(second.lower().split(b"\r\n"))


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 29\r\n\r\n{\"error\":{\"message\":\"slow\"}}\n",
    b"HTTP/1.1 503 Unavailable\r\nretry-after-ms: 1500\r\nContent-Length: 4\r\n\r\nbusy",
    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 35\r\n\r\n{\"error\":{\"message\":\"bad request\"}}",
    b"SMTP READY\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a little",
    b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!",
])
async def test_each_failure_is_the_same_provider_error_through_the_child(
        reply: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    async with RawServer(raw(reply, keep_open=False)).running() as srv:
        through, here = await _both(srv.url(), monkeypatch)
    assert isinstance(through, tuple) and through == here


async def test_a_refused_connection_and_a_bad_url_say_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    through, here = await _both(f"http://127.0.0.1:{port}/v1", monkeypatch)
    assert through == here and through[0] == CONNECTION and "Cannot connect" in through[1]  # type: ignore[index]
    through, here = await _both("http://[not-an-address/v1?key=sk-secret", monkeypatch)
    assert through == here and through[0] == CONNECTION and "sk-secret" not in through[1]  # type: ignore[index]


async def test_an_answer_over_the_cap_is_refused_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    big = b'{"x":"' + b"a" * 5000 + b'"}'
    async with RawServer(answer(big)).running() as srv:
        through, here = await _both(srv.url(), monkeypatch, max_response_bytes=1000)
    assert through == here and through[0] == BAD_RESPONSE and "larger than" in through[1]  # type: ignore[index]


async def test_a_stray_answer_on_a_pooled_connection_is_never_the_next_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's pool keeps aiohttp_session's guard: a connection that received bytes while idle is closed."""
    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "1")
    asked = 0

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        nonlocal asked
        asked += 1
        own = b'{"n":%d}' % asked
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(own), own))
        await w.drain()
        if asked == 1:
            await asyncio.sleep(0.05)
            w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{"n":"stray"}')
            await w.drain()
        return True

    c = make_client(1, timeout=5.0)
    try:
        async with RawServer(handler).running() as srv:
            assert (await post_json(c, "openai", srv.url(), {}, {}, 5.0))[0] == {"n": 1}
            await asyncio.sleep(0.2)
            assert (await post_json(c, "openai", srv.url(), {}, {}, 5.0))[0] == {"n": 2}
        assert srv.connections == 2
    finally:
        await c.aclose()


async def test_a_deadline_drops_the_childs_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "1")
    closed = asyncio.Event()

    async def slow_serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await reader.readuntil(b"\r\n\r\n")
            if await reader.readexactly(len(b'{"q":1}')) == b'{"q":0}':  # the first call: the child is up
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                continue
            if not await reader.read(1):  # nothing but EOF, when the child drops the connection
                closed.set()
            break
        writer.close()

    server = await asyncio.start_server(slow_serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    c = make_client(1, timeout=5.0)
    try:
        assert (await post_json(c, "openai", f"http://127.0.0.1:{port}/", {"q": 0}, {}, 10.0))[0] == {}
        with pytest.raises(ProviderError) as caught:
            await post_json(c, "openai", f"http://127.0.0.1:{port}/", {"q": 1}, {}, 0.3)
        assert caught.value.kind == TIMEOUT and "no answer within 0.3 s" in caught.value.message
        await asyncio.wait_for(closed.wait(), 5)  # the child cancelled its request: the connection is gone
    finally:
        await c.aclose()
        server.close()


async def test_closing_the_client_ends_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "1")
    c = make_client(2, timeout=5.0)
    async with RawServer(answer()).running() as srv:
        assert (await post_json(c, "openai", srv.url(), {}, {}, 5.0))[0] == {"ok": True}
        process = http_process._current
        assert process is not None and process.child.pid in _children()
        await c.aclose()
        for _ in range(100):  # the pipe closed: it exits
            if process.child.poll() is not None:
                break
            await asyncio.sleep(0.05)
    assert process.child.returncode == 0


async def test_a_child_that_dies_fails_its_calls_as_retryable_and_the_run_goes_on_without_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "1")
    started = asyncio.Event()

    async def slow(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        if body == b'{"q":"first"}':
            started.set()
            await asyncio.sleep(2)
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"ok\":true}")
        await w.drain()
        return True

    c = make_client(2, timeout=5.0)
    try:
        async with RawServer(slow).running() as srv:
            first = asyncio.ensure_future(post_json(c, "openai", srv.url(), {"q": "first"}, {}, 5.0))
            await asyncio.wait_for(started.wait(), 5)
            process = http_process._current
            assert process is not None
            os.kill(process.child.pid, signal.SIGKILL)
            with pytest.raises(ProviderError) as caught:
                await first
            assert (caught.value.kind, caught.value.retryable) == (CONNECTION, True)
            assert "the HTTP process ended" in caught.value.message
            # the next calls are this process's own
            assert (await post_json(c, "openai", srv.url(), {"q": "next"}, {}, 5.0))[0] == {"ok": True}
            assert c._session is not None  # type: ignore[attr-defined]
    finally:
        await c.aclose()
        process.child.wait(5)


def test_a_killed_run_leaves_no_child(tmp_path: Path) -> None:
    """SIGKILL of the process that started the child: the pipe closes with it, and the child exits."""
    script = textwrap.dedent('''
        import asyncio, sys
        from evalspec.providers import http_process
        http_process.enable()
        print(http_process._current.child.pid, flush=True)
        sys.stdin.read()
    ''')
    env = {**os.environ, "EVALSPEC_HTTP_PROCESS": ""}
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the HTTP process outlived the run that started it")


def test_off_by_setting_and_for_a_clients_own_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    async def one(**kw: object) -> bool:
        c = make_client(1, timeout=5.0, **kw)  # type: ignore[arg-type]
        try:
            async with RawServer(answer()).running() as srv:
                await post_json(c, "openai", srv.url(), {}, {}, 5.0)
            return c._remote is not None  # type: ignore[attr-defined]
        finally:
            await c.aclose()

    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "0")
    assert asyncio.run(one()) is False
    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "1")
    assert asyncio.run(one()) is True
    assert asyncio.run(one(verify=ssl.create_default_context())) is False  # a context cannot cross processes


def test_tls_through_the_child_verifies_against_the_system_store(tmp_path: Path) -> None:
    """The child checks certificates as this process would: SSL_CERT_FILE's CA trusted, another refused,
    verification off when asked."""
    ours, other = trustme.CA(), trustme.CA()
    paths = []
    for name, ca in (("ours", ours), ("other", other)):
        cert = ca.issue_cert("localhost")
        chain, key = tmp_path / f"{name}-chain.pem", tmp_path / f"{name}-key.pem"
        cert.private_key_and_cert_chain_pem.write_to_path(str(chain))
        cert.private_key_pem.write_to_path(str(key))
        paths += [str(chain), str(key)]
    store = tmp_path / "system-store.pem"
    ours.cert_pem.write_to_path(str(store))
    script = textwrap.dedent(r'''
        import asyncio, ssl, sys
        from evalspec.providers.base import ProviderError
        from evalspec.providers.http import make_client, post_json

        async def serve(chain, key):
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(chain, key)

            async def one(reader, writer):
                await reader.readuntil(b"\r\n\r\n")
                await reader.readexactly(2)
                writer.write(b'HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n{"ok": "y"}')
                await writer.drain()
                writer.close()

            return await asyncio.start_server(one, "127.0.0.1", 0, ssl=tls)

        async def call(server, verify=True):
            client = make_client(2, timeout=5.0, verify=verify)
            port = server.sockets[0].getsockname()[1]
            try:
                data, _ = await post_json(client, "t", f"https://localhost:{port}/v1", {}, {}, 5.0)
                return data["ok"]
            except ProviderError as err:
                return err.kind
            finally:
                through = client._remote is not None
                await client.aclose()
                print("through the child", through)

        async def main():
            trusted, untrusted = await serve(sys.argv[1], sys.argv[2]), await serve(sys.argv[3], sys.argv[4])
            print("trusted", await call(trusted))
            print("untrusted", await call(untrusted))
            print("verify off", await call(untrusted, verify=False))

        asyncio.run(main())
    ''')
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(SSL_CERT_FILE=str(store), SSL_CERT_DIR=str(tmp_path / "no-dir"), EVALSPEC_HTTP_PROCESS="1")
    got = subprocess.run([sys.executable, "-c", script, *paths], env=env, capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == ["through the child True", "trusted y", "through the child True",
                                       "untrusted connection", "through the child True", "verify off y"]


async def test_two_clients_keep_their_own_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each client has its own session (pool) in the child: one closed leaves the other's calls going; the
    child ends with the last."""
    monkeypatch.setenv("EVALSPEC_HTTP_PROCESS", "1")
    a, b = make_client(2, timeout=5.0), make_client(2, timeout=5.0)
    async with RawServer(answer()).running() as srv:
        assert (await post_json(a, "openai", srv.url(), {}, {}, 5.0))[0] == {"ok": True}
        assert (await post_json(b, "openai", srv.url(), {}, {}, 5.0))[0] == {"ok": True}
        assert srv.connections == 2  # a pool each
        process = http_process._current
        assert process is not None and a._remote is b._remote is process  # type: ignore[attr-defined]
        await a.aclose()
        assert (await post_json(b, "openai", srv.url(), {}, {}, 5.0))[0] == {"ok": True}
        assert srv.connections == 2 and not process.ended  # b's connection, kept alive in its session
        await b.aclose()
        assert process.ended
