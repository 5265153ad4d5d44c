"""OpenAI-compatible providers against the fake server: request shape, parsing, custom models, embeddings."""

from __future__ import annotations

import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatMessage, ChatRequest, provider_for_model
from evalspec.providers.base import BAD_RESPONSE, SERVER, ProviderError
from evalspec.providers.http import make_client
from evalspec.providers.openai_compat import OpenAICompatProvider
from evalspec.providers.retry import NO_RETRY

from .conftest import KEY


async def test_request_shape_and_parsing(fake: FakeProvider, client, env) -> None:
    b = provider_for_model("openai:gpt-4o-mini", client=client, env=env)
    req = ChatRequest(
        model=b.model_name,
        messages=(ChatMessage("user", "Hi"), ChatMessage("assistant", "Hello"), ChatMessage("user", "Again")),
        system="Be brief.",
        temperature=0.7,
    )
    res = await b.provider.chat(req)

    assert res.text == "ECHO: Again"
    assert (res.usage.input_tokens, res.usage.output_tokens) == (11, 7)
    assert res.raw_model == "gpt-4o-mini"
    assert res.latency_ms > 0
    assert not res.cached

    (r,) = fake.requests
    assert (r.method, r.path) == ("POST", "/openai/v1/chat/completions")
    assert r.headers["authorization"] == f"Bearer {KEY}-openai"
    assert r.headers["content-type"] == "application/json"
    assert r.json == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "Again"},
        ],
        "temperature": 0.7,
        "max_tokens": 1500,
    }


async def test_optional_fields_and_extra_parameters(fake: FakeProvider, client, env) -> None:
    b = provider_for_model("openai:o3-mini", client=client, env=env)
    await b.provider.chat(ChatRequest.of(b.model_name, "x"))
    await b.provider.chat(ChatRequest.of(b.model_name, "x", extra={"max_completion_tokens": 99, "seed": 3}))
    first, second = (r.json for r in fake.requests)
    assert "temperature" not in first and "system" not in first and first["max_tokens"] == 1500
    assert second["max_completion_tokens"] == 99 and second["seed"] == 3 and "max_tokens" not in second


@pytest.mark.parametrize("name", ["mistral", "together", "xai", "openrouter"])
async def test_other_openai_compatible_catalog_providers(fake: FakeProvider, client, env, name: str) -> None:
    model = "meta-llama/llama-3.1-8b-instruct:free" if name == "openrouter" else "some-model"
    b = provider_for_model(f"{name}:{model}", client=client, env=env)
    res = await b.provider.chat(ChatRequest.of(b.model_name, "ping"))
    assert res.text == "ECHO: ping"
    (r,) = fake.requests
    assert r.path == f"/{name}/v1/chat/completions"
    assert r.headers["authorization"] == f"Bearer {KEY}-{name}"
    assert r.json["model"] == model


async def test_configurable_answer_text(fake: FakeProvider, client, env) -> None:
    fake.answer = "forty-two"
    b = provider_for_model("openai:m", client=client, env=env)
    assert (await b.provider.chat(ChatRequest.of("m", "q"))).text == "forty-two"
    fake.then(Reply.ok("scripted"))
    assert (await b.provider.chat(ChatRequest.of("m", "q"))).text == "scripted"


async def test_gzip_answers_are_decoded(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.ok("squeezed", gzip=True))
    b = provider_for_model("openai:m", client=client, env=env)
    assert (await b.provider.chat(ChatRequest.of("m", "q"))).text == "squeezed"


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
async def test_both_transports_send_the_same_request(fake: FakeProvider, env, transport: str) -> None:
    c = make_client(2, transport=transport)
    try:
        b = provider_for_model("openai:m", client=c, env=env)
        res = await b.provider.chat(ChatRequest.of("m", "same", temperature=0))
    finally:
        await c.aclose()
    assert res.text == "ECHO: same"
    (r,) = fake.requests
    assert r.json == {"model": "m", "messages": [{"role": "user", "content": "same"}], "temperature": 0,
                      "max_tokens": 1500}
    assert r.headers["user-agent"].startswith("evalspec/")


async def test_error_object_in_a_200_answer(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.raw(200, {"error": {"message": "upstream overloaded", "code": 502}}),
              Reply.raw(200, {"id": "x", "choices": []}))
    b = provider_for_model("openrouter:a/b", client=client, env=env, retry=NO_RETRY)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("a/b", "q"))
    assert (e.value.kind, e.value.status, e.value.retryable) == (SERVER, 502, True)
    assert "upstream overloaded" in e.value.message
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("a/b", "q"))
    assert e.value.kind == BAD_RESPONSE


async def test_custom_model_full_endpoint_headers_and_parameters(fake: FakeProvider, client, env) -> None:
    env = {**env, "LOCAL_TOKEN": "tok-local-123456"}
    custom = {
        "id": "local-llama",
        "url": fake.url("/ollama/v1/chat/completions"),
        "modelName": "llama3.1:8b",
        "inherit": "openai",
        "headers": {"Authorization": "Bearer ${LOCAL_TOKEN}", "X-Team": "evals"},
        "parameters": {"top_p": 0.5, "temperature": 0.1},
    }
    b = provider_for_model(custom, client=client, env=env)
    assert (b.model_id, b.model_name) == ("local-llama", "llama3.1:8b")
    await b.provider.chat(ChatRequest.of(b.model_name, "hello"))
    await b.provider.chat(ChatRequest.of(b.model_name, "hello", temperature=0.9))
    first, second = fake.requests
    assert first.path == "/ollama/v1/chat/completions"
    # The custom host gets its own token, never OPENAI_API_KEY.
    assert first.headers["authorization"] == "Bearer tok-local-123456"
    assert first.headers["x-team"] == "evals"
    assert first.json["model"] == "llama3.1:8b"
    assert first.json["top_p"] == 0.5 and first.json["temperature"] == 0.1
    assert second.json["temperature"] == 0.9  # the request's explicit temperature wins


async def test_custom_model_base_url_and_no_key(fake: FakeProvider, client, env) -> None:
    b = provider_for_model({"id": "vllm", "url": fake.url("/vllm/v1/"), "modelName": "qwen"}, client=client, env=env)
    await b.provider.chat(ChatRequest.of(b.model_name, "x"))
    (r,) = fake.requests
    assert r.path == "/vllm/v1/chat/completions"
    assert "authorization" not in r.headers


def test_custom_model_missing_fields_and_variables(env) -> None:
    with pytest.raises(ProviderError, match="modelName"):
        provider_for_model({"id": "x", "url": "http://127.0.0.1:9/v1"}, env=env)
    with pytest.raises(ProviderError, match="NOPE_TOKEN") as e:
        provider_for_model(
            {"id": "x", "url": "http://127.0.0.1:9/v1", "modelName": "m",
             "headers": {"Authorization": "Bearer ${NOPE_TOKEN}"}},
            env=env,
        )
    assert e.value.kind == "missing_key"


async def test_embeddings_are_ordered_by_index(fake: FakeProvider, client) -> None:
    p = OpenAICompatProvider(base_url=fake.url("/v1"), api_key=KEY, client=client)
    vectors = await p.embed(["a", "b", "c"])
    assert len(vectors) == 3 and all(len(v) == 8 for v in vectors)
    single = [await p.embed([t]) for t in ("a", "b", "c")]
    assert vectors == [s[0] for s in single]
    r = fake.requests[0]
    assert r.path == "/v1/embeddings"
    assert r.json == {"model": "text-embedding-3-small", "input": ["a", "b", "c"]}
