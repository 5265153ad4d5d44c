"""The response cache: hits avoid HTTP, errors are not cached, the file survives a torn last line."""

from __future__ import annotations

import asyncio
import contextlib

from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatRequest, ResponseCache, cache_key, provider_for_model
from evalspec.providers.base import ProviderError
from evalspec.providers.retry import NO_RETRY


async def test_hit_avoids_a_second_http_call(fake: FakeProvider, client, env, tmp_path) -> None:
    path = tmp_path / "cache" / "responses.jsonl"
    cache = ResponseCache(path)
    b = provider_for_model("openai:m", client=client, env=env, cache=cache)
    req = ChatRequest.of("m", "hello", system="s", temperature=0.3)
    first = await b.provider.chat(req)
    second = await b.provider.chat(req)
    assert fake.count == 1
    assert not first.cached and second.cached
    assert (second.text, second.usage, second.raw_model) == (first.text, first.usage, first.raw_model)
    cache.close()

    # A new run (new cache object on the same file) is served from disk too.
    again = provider_for_model("openai:m", client=client, env=env, cache=ResponseCache(path))
    assert (await again.provider.chat(req)).cached
    assert fake.count == 1


async def test_any_parameter_change_is_a_miss(fake: FakeProvider, client, env, tmp_path) -> None:
    b = provider_for_model("openai:m", client=client, env=env, cache=ResponseCache(tmp_path / "c.jsonl"))
    base = dict(model="m", prompt="hello", system="s", temperature=0.3)
    variants = [
        ChatRequest.of(**base),
        ChatRequest.of(**{**base, "temperature": 0.4}),
        ChatRequest.of(**{**base, "system": "t"}),
        ChatRequest.of(**base, max_tokens=10),
        ChatRequest.of(**base, extra={"top_p": 0.5}),
        ChatRequest.of(**{**base, "prompt": "hello!"}),
    ]
    for req in variants:
        await b.provider.chat(req)
    assert fake.count == len(variants)
    # Same request through another provider (or base URL) is another entry as well.
    other = provider_for_model("mistral:m", client=client, env=env, cache=b.provider.cache)
    await other.provider.chat(variants[0])
    assert fake.count == len(variants) + 1


async def test_errors_are_not_cached(fake: FakeProvider, client, env, tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.jsonl")
    b = provider_for_model("openai:m", client=client, env=env, cache=cache, retry=NO_RETRY)
    req = ChatRequest.of("m", "q")
    fake.then(Reply.error(400, "bad"))
    with contextlib.suppress(ProviderError):
        await b.provider.chat(req)
    assert len(cache) == 0
    res = await b.provider.chat(req)
    assert not res.cached and fake.count == 2
    assert len(cache) == 1


async def test_identical_requests_in_flight_share_one_call(fake: FakeProvider, client, env, tmp_path) -> None:
    fake.then(Reply.ok("slow", delay=0.1))
    b = provider_for_model("openai:m", client=client, env=env, cache=ResponseCache(tmp_path / "c.jsonl"))
    results = await asyncio.gather(*(b.provider.chat(ChatRequest.of("m", "same")) for _ in range(5)))
    assert fake.count == 1
    assert [r.text for r in results] == ["slow"] * 5
    assert sum(not r.cached for r in results) == 1


async def test_torn_last_line_is_skipped_and_repaired(fake: FakeProvider, client, env, tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    cache = ResponseCache(path)
    b = provider_for_model("openai:m", client=client, env=env, cache=cache)
    await b.provider.chat(ChatRequest.of("m", "one"))
    cache.close()
    with path.open("ab") as f:  # a kill in the middle of a write
        f.write(b'{"k":"abc","r":{"text":"half')

    cache = ResponseCache(path)
    assert len(cache) == 1
    b = provider_for_model("openai:m", client=client, env=env, cache=cache)
    await b.provider.chat(ChatRequest.of("m", "two"))
    cache.close()
    reloaded = ResponseCache(path)
    assert len(reloaded) == 2
    assert all(line.startswith("{") for line in path.read_text().splitlines())


def test_key_is_canonical() -> None:
    ident = {"provider": "openai", "url": "u"}
    a = cache_key(ident, ChatRequest.of("m", "x", temperature=0))
    assert a == cache_key(ident, ChatRequest.of("m", "x", temperature=0.0))
    assert a == cache_key(dict(reversed(ident.items())), ChatRequest.of("m", "x", temperature=0))
    assert a != cache_key(ident, ChatRequest.of("m", "x"))
    assert len(a) == 64
