"""AgentV targets over HTTP: settings, ${{ VAR }} keys, Azure URLs and headers, bound models."""

from __future__ import annotations

import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatRequest, provider_from_target
from evalspec.providers.base import CONFIG, MISSING_KEY, ProviderError

from .conftest import KEY


async def test_openai_target(fake: FakeProvider, client) -> None:
    target = {"name": "default", "provider": "openai", "endpoint": fake.url("/v1"),
              "api_key": "${{ MY_OPENAI_KEY }}", "model": "gpt-4.1-mini", "temperature": 0.1,
              "max_output_tokens": 200}
    p = provider_from_target(target, client=client, env={"MY_OPENAI_KEY": KEY})
    res = await p.chat(ChatRequest.of("ignored", "hi"))
    assert res.text == "ECHO: hi"
    (r,) = fake.requests
    assert r.path == "/v1/chat/completions"
    assert r.headers["authorization"] == f"Bearer {KEY}"
    assert r.json["model"] == "gpt-4.1-mini"  # the target's model, not the request's
    assert (r.json["temperature"], r.json["max_tokens"]) == (0.1, 200)


def test_missing_variable_uses_agentvs_message(fake: FakeProvider) -> None:
    target = {"name": "t1", "provider": "openai", "api_key": "${{ MY_KEY }}", "model": "m"}
    with pytest.raises(ProviderError) as e:
        provider_from_target(target, env={})
    assert e.value.kind == MISSING_KEY
    assert e.value.message == "Environment variable 'MY_KEY' required for t1 api key is not set"
    # Already interpolated by the parser to "": still an error, no silent fallback to OPENAI_API_KEY.
    with pytest.raises(ProviderError) as e:
        provider_from_target({**target, "api_key": ""}, env={"OPENAI_API_KEY": KEY})
    assert e.value.kind == MISSING_KEY
    assert fake.count == 0


async def test_azure_target(fake: FakeProvider, client) -> None:
    target = {"name": "az", "provider": "azure", "endpoint": fake.url("/"), "deployment": "gpt4o-prod",
              "api_key": "${{ AZURE_OPENAI_API_KEY }}", "version": "api-version=2024-10-21"}
    p = provider_from_target(target, client=client, env={"AZURE_OPENAI_API_KEY": KEY})
    assert (await p.chat(ChatRequest.of("", "hi"))).text == "ECHO: hi"
    (r,) = fake.requests
    assert r.path == "/openai/deployments/gpt4o-prod/chat/completions"
    assert r.query == {"api-version": ["2024-10-21"]}
    assert r.headers["api-key"] == KEY
    assert "authorization" not in r.headers


def test_azure_resource_name_and_default_version() -> None:
    from evalspec.providers.azure import azure_provider

    p = azure_provider(endpoint="my-res", deployment="d", api_key=KEY)
    assert p.chat_url == (
        "https://my-res.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-12-01-preview"
    )


async def test_anthropic_and_gemini_targets(fake: FakeProvider, client) -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "GOOGLE_GENERATIVE_AI_API_KEY": KEY}
    a = provider_from_target({"name": "claude", "provider": "anthropic", "model": "claude-sonnet-4",
                              "endpoint": fake.url("")}, client=client, env=env)
    g = provider_from_target({"name": "gem", "provider": "gemini", "endpoint": fake.url(""),
                              "api_key": "${{ GOOGLE_GENERATIVE_AI_API_KEY }}"}, client=client, env=env)
    await a.chat(ChatRequest.of("", "x"))
    await g.chat(ChatRequest.of("", "y"))
    ra, rg = fake.requests
    assert ra.path == "/v1/messages" and ra.json["model"] == "claude-sonnet-4"
    assert rg.path == "/v1beta/models/gemini-2.5-flash:generateContent"  # AgentV's default model


async def test_target_retry_settings(fake: FakeProvider, client) -> None:
    fake.then(Reply.server_error(500))
    target = {"name": "t", "provider": "openai", "endpoint": fake.url("/v1"), "api_key": KEY, "model": "m",
              "max_retries": 0}
    p = provider_from_target(target, client=client, env={})
    with pytest.raises(ProviderError):
        await p.chat(ChatRequest.of("", "x"))
    assert fake.count == 1


@pytest.mark.parametrize(("provider", "needle"), [("codex", "cli"), ("bogus", "unknown"), ("", "required")])
def test_unsupported_providers(provider: str, needle: str) -> None:
    with pytest.raises(ProviderError, match=needle) as e:
        provider_from_target({"name": "t", "provider": provider}, env={})
    assert e.value.kind == CONFIG
