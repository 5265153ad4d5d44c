"""The shared client: statuses, headers and errors through the default transport; it keeps no cookies."""

from __future__ import annotations

import socket

import httpx
import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers.base import CONNECTION, ProviderError
from evalspec.providers.http import make_client, post_json, transport_name


async def test_status_headers_and_reason(fake: FakeProvider, client) -> None:
    fake.then(Reply.raw(418, b"short and stout", **{"x-thing": "1"}))
    r = await client.post(fake.url("/anything"), content=b"{}")
    assert (r.status_code, r.text, r.headers["x-thing"]) == (418, "short and stout", "1")
    assert transport_name(client) == "aiohttp"
    assert fake.requests[0].headers["content-length"] == "2"


async def test_a_refused_connection_is_a_connection_error_not_a_timeout(client) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ProviderError) as caught:
        await post_json(client, "openai", f"http://127.0.0.1:{port}/v1", {}, {}, 5.0)
    assert caught.value.kind == CONNECTION and caught.value.retryable
    assert f"Cannot connect to host 127.0.0.1:{port}" in caught.value.message


async def test_read_timeout_maps_to_httpx(fake: FakeProvider, client) -> None:
    fake.then(Reply.hang(5))
    with pytest.raises(httpx.ReadTimeout):
        await client.post(fake.url("/v1/chat/completions"), content=b"{}", timeout=0.2)


async def test_no_cookies_are_kept(fake: FakeProvider, client) -> None:
    fake.then(Reply.raw(200, b"{}", **{"set-cookie": "session=abc; Path=/"}))
    await client.post(fake.url("/a"), content=b"{}")
    await client.post(fake.url("/b"), content=b"{}")
    assert "cookie" not in fake.requests[1].headers
    assert len(client.cookies) == 0


def test_unknown_transport() -> None:
    with pytest.raises(ValueError, match="aiohttp"):
        make_client(transport="carrier-pigeon")


async def test_mock_transport_for_unit_tests() -> None:
    c = make_client(transport=httpx.MockTransport(lambda req: httpx.Response(200, json={"ok": True})))
    try:
        assert (await c.get("http://example.invalid/")).json() == {"ok": True}
    finally:
        await c.aclose()
