"""A 200 answer of the wrong shape is a clear, non-retried BAD_RESPONSE for every provider parser, never a
crash (the attack run's reproducers: a string for the message, non-numeric or non-object usage)."""

from __future__ import annotations

from typing import Any

import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatRequest, ProviderError, provider_for_model
from evalspec.providers.base import BAD_RESPONSE

OK_OPENAI = {"choices": [{"message": {"content": "fine"}}]}
OK_ANTHROPIC = {"content": [{"type": "text", "text": "fine"}]}
OK_GOOGLE = {"candidates": [{"content": {"parts": [{"text": "fine"}]}}]}

# (model, answer body, words the error must contain)
CASES: list[tuple[str, Any, str]] = [
    ("openai:m", {"choices": [{"message": "a string"}]}, "choices[0].message (expected an object) is 'a string'"),
    ("openai:m", {"choices": ["x"]}, "choices[0] (expected an object)"),
    ("openai:m", {**OK_OPENAI, "usage": {"prompt_tokens": "abc"}}, "usage.prompt_tokens (expected a token count) is 'abc'"),
    ("openai:m", {**OK_OPENAI, "usage": [1, 2]}, "usage (expected an object) is [1, 2]"),
    ("openai:m", {**OK_OPENAI, "usage": {"completion_tokens": -3}}, "usage.completion_tokens"),
    ("openai:m", {**OK_OPENAI, "usage": {"prompt_tokens": 1e400}}, "usage.prompt_tokens"),
    ("openai:m", {"choices": [{"message": {"content": {"text": "x"}}}]}, "choices[0].message.content (expected text)"),
    ("openai:m", {"choices": [{"message": {"content": [{"text": 5}]}}]}, "choices[0].message.content[0].text"),
    ("openai:m", {"choices": [{"message": {"content": ["part"]}}]}, "choices[0].message.content[0] (expected an object)"),
    ("openai:m", {"choices": [{"message": {"content": None, "refusal": 7}}]}, "refusal (expected text)"),
    ("anthropic:m", {"content": ["x"]}, "content[0] (expected an object)"),
    ("anthropic:m", {"content": [{"type": "text", "text": ["no"]}]}, "content[0].text (expected text)"),
    ("anthropic:m", {**OK_ANTHROPIC, "usage": {"input_tokens": "abc"}}, "usage.input_tokens"),
    ("anthropic:m", {**OK_ANTHROPIC, "usage": "lots"}, "usage (expected an object)"),
    ("google:m", {"candidates": ["x"]}, "candidates[0] (expected an object)"),
    ("google:m", {"candidates": [{"content": "x"}]}, "candidates[0].content (expected an object)"),
    ("google:m", {"candidates": [{"content": {"parts": {"text": "x"}}}]}, "parts (expected a list)"),
    ("google:m", {**OK_GOOGLE, "usageMetadata": {"promptTokenCount": True}}, "usageMetadata.promptTokenCount"),
    ("google:m", {"promptFeedback": "blocked?"}, "promptFeedback (expected an object)"),
]


@pytest.mark.parametrize(("model", "body", "words"), CASES)
async def test_malformed_answer_is_a_clear_error(fake: FakeProvider, client, env, model: str, body: Any,
                                                 words: str) -> None:
    fake.then(Reply.raw(200, body))
    b = provider_for_model(model, client=client, env=env)
    with pytest.raises(ProviderError) as caught:
        await b.provider.chat(ChatRequest.of(b.model_name, "q"))
    assert caught.value.kind == BAD_RESPONSE and not caught.value.retryable
    assert words in caught.value.message
    assert fake.count == 1  # not retried


@pytest.mark.parametrize(("model", "body"), [("openai:m", OK_OPENAI), ("anthropic:m", OK_ANTHROPIC),
                                             ("google:m", OK_GOOGLE)])
async def test_optional_fields_may_be_missing_or_null(fake: FakeProvider, client, env, model: str, body: Any) -> None:
    fake.then(Reply.raw(200, {**body, "usage": None, "usageMetadata": None, "model": ["odd"]}))
    b = provider_for_model(model, client=client, env=env)
    res = await b.provider.chat(ChatRequest.of(b.model_name, "q"))
    assert res.text == "fine" and (res.usage.input_tokens, res.usage.output_tokens) == (0, 0)
    assert res.raw_model is None  # a model name that is not text is dropped, not kept as a list


async def test_a_shape_no_reader_foresaw_is_still_an_error_not_a_crash(fake: FakeProvider, client, env,
                                                                      monkeypatch) -> None:
    from evalspec.providers import openai_compat

    def broken(self: Any, data: Any, latency_ms: float) -> Any:
        return data["nowhere"]  # a parser bug meeting an odd answer

    monkeypatch.setattr(openai_compat.OpenAICompatProvider, "parse", broken)
    fake.then(Reply.raw(200, OK_OPENAI))
    b = provider_for_model("openai:m", client=client, env=env)
    with pytest.raises(ProviderError) as caught:
        await b.provider.chat(ChatRequest.of(b.model_name, "q"))
    assert caught.value.kind == BAD_RESPONSE and "malformed answer (KeyError" in caught.value.message


@pytest.mark.parametrize("data", [["x"], [{"embedding": [1.0], "index": "a"}], [{"embedding": "no"}]])
async def test_malformed_embeddings_are_a_clear_error(fake: FakeProvider, client, env, data: Any) -> None:
    fake.then(Reply.raw(200, {"data": data}))
    b = provider_for_model("openai:m", client=client, env=env)
    with pytest.raises(ProviderError) as caught:
        await b.provider.embed(["one"])
    assert caught.value.kind == BAD_RESPONSE and "malformed embeddings" in caught.value.message
