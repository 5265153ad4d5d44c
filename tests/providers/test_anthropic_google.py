"""Anthropic and Google providers: request shape and parsing against the fake server."""

from __future__ import annotations

import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatMessage, ChatRequest, provider_for_model
from evalspec.providers.anthropic import AnthropicProvider
from evalspec.providers.base import BLOCKED, ProviderError

from .conftest import KEY


async def test_anthropic_request_shape_and_parsing(fake: FakeProvider, client, env) -> None:
    b = provider_for_model("anthropic:claude-3-5-haiku-latest", client=client, env=env)
    req = ChatRequest(
        model=b.model_name,
        messages=(ChatMessage("system", "Also formal."), ChatMessage("user", "Hi")),
        system="Be brief.",
        temperature=0.2,
        max_tokens=300,
    )
    res = await b.provider.chat(req)
    assert res.text == "ECHO: Hi"
    assert (res.usage.input_tokens, res.usage.output_tokens) == (12, 8)
    assert res.raw_model == "claude-3-5-haiku-latest"

    (r,) = fake.requests
    assert r.path == "/anthropic/v1/messages"
    assert r.headers["x-api-key"] == f"{KEY}-anthropic"
    assert r.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in r.headers
    assert r.json == {
        "model": "claude-3-5-haiku-latest",
        "max_tokens": 300,
        "messages": [{"role": "user", "content": "Hi"}],
        "system": "Be brief.\n\nAlso formal.",
        "temperature": 0.2,
    }


async def test_anthropic_text_blocks_only(fake: FakeProvider, client) -> None:
    fake.then(Reply.raw(200, {
        "model": "claude-x", "usage": {"input_tokens": 1, "output_tokens": 2},
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "A"},
                    {"type": "text", "text": "B"}],
    }))
    p = AnthropicProvider(base_url=fake.url("/v1"), api_key=KEY, client=client)
    res = await p.chat(ChatRequest.of("claude-x", "q"))
    assert res.text == "AB"
    assert fake.requests[0].path == "/v1/messages"  # a base URL ending in /v1 is not doubled


async def test_google_request_shape_and_parsing(fake: FakeProvider, client, env) -> None:
    b = provider_for_model("google:gemini-2.5-flash", client=client, env=env)
    req = ChatRequest(
        model=b.model_name,
        messages=(ChatMessage("user", "Hi"), ChatMessage("assistant", "Yo"), ChatMessage("user", "Again")),
        system="Be brief.",
        temperature=0.0,
        extra={"topP": 0.9},
    )
    res = await b.provider.chat(req)
    assert res.text == "ECHO: Again"
    assert (res.usage.input_tokens, res.usage.output_tokens) == (13, 9)
    assert res.raw_model == "gemini-2.5-flash"

    (r,) = fake.requests
    assert r.path == "/google/v1beta/models/gemini-2.5-flash:generateContent"
    assert r.headers["x-goog-api-key"] == f"{KEY}-google"
    assert r.query == {}  # the key is never in the URL
    assert r.json == {
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}]},
            {"role": "model", "parts": [{"text": "Yo"}]},
            {"role": "user", "parts": [{"text": "Again"}]},
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"maxOutputTokens": 1500, "temperature": 0.0, "topP": 0.9},
    }


async def test_google_blocked_prompt(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.raw(200, {"promptFeedback": {"blockReason": "SAFETY"}}))
    b = provider_for_model("google:gemini-2.5-flash", client=client, env=env)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of(b.model_name, "q"))
    assert e.value.kind == BLOCKED and "SAFETY" in e.value.message
