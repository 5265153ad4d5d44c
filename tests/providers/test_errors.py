"""Malformed answers, missing keys, and keys never leaking into errors, reprs, caches or logs."""

from __future__ import annotations

import logging
import traceback

import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatRequest, ProviderError, ResponseCache, provider_for_model
from evalspec.providers.base import AUTH, BAD_RESPONSE, MISSING_KEY
from evalspec.providers.redact import Secret, redact
from evalspec.providers.retry import NO_RETRY

from .conftest import KEY


async def test_malformed_json_is_a_clear_error(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.malformed())
    b = provider_for_model("openai:m", client=client, env=env)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    assert e.value.kind == BAD_RESPONSE and not e.value.retryable
    assert "not valid JSON" in e.value.message and "cut sh" in e.value.message
    assert fake.count == 1  # not retried


async def test_html_error_page_from_a_proxy(fake: FakeProvider, client, env) -> None:
    fake.then(Reply.raw(502, "<html>Bad Gateway</html>", **{"content-type": "text/html"}))
    b = provider_for_model("openai:m", client=client, env=env, retry=NO_RETRY)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    assert e.value.status == 502 and "Bad Gateway" in e.value.message


@pytest.mark.parametrize(
    ("model", "var"),
    [("openai:m", "OPENAI_API_KEY"), ("anthropic:c", "ANTHROPIC_API_KEY"), ("google:g", "GOOGLE_API_KEY"),
     ("mistral:m", "MISTRAL_API_KEY"), ("together:t", "TOGETHER_API_KEY"), ("xai:x", "XAI_API_KEY"),
     ("openrouter:a/b", "OPENROUTER_API_KEY")],
)
def test_missing_key_names_the_variable_before_any_http(fake: FakeProvider, env, model: str, var: str) -> None:
    del env[var]
    with pytest.raises(ProviderError) as e:
        provider_for_model(model, env=env)
    assert e.value.kind == MISSING_KEY and not e.value.retryable
    assert var in e.value.message
    assert fake.count == 0


async def test_a_401_echoing_the_key_does_not_leak_it(fake: FakeProvider, client, env, tmp_path, caplog) -> None:
    secret = env["OPENAI_API_KEY"]
    fake.then(Reply.error(401, f"Incorrect API key provided: {secret}. Find your key at ..."))
    b = provider_for_model("openai:m", client=client, env=env, cache=ResponseCache(tmp_path / "c.jsonl"))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    err = e.value
    assert err.kind == AUTH and err.status == 401 and not err.retryable
    shown = [str(err), repr(err), err.message, str(err.args), str(err.to_json()),
             "".join(traceback.format_exception(err)), repr(b.provider), caplog.text]
    for text in shown:
        assert secret not in text
    assert "Incorrect API key provided: ***" in str(err)
    # The request itself did carry the key, in the header where it belongs.
    assert fake.requests[0].headers["authorization"] == f"Bearer {secret}"


async def test_no_key_in_results_or_cache(fake: FakeProvider, client, env, tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.jsonl")
    for model in ("openai:m", "anthropic:c", "google:g"):
        b = provider_for_model(model, client=client, env=env, cache=cache)
        res = await b.provider.chat(ChatRequest.of(b.model_name, "q"))
        assert KEY not in str(res.to_json()) and KEY not in repr(res)
    cache.close()
    assert KEY not in (tmp_path / "c.jsonl").read_text()


def test_secret_never_prints_itself() -> None:
    s = Secret("sk-very-secret-value")
    assert "very" not in repr(s) and "very" not in str(s) and "very" not in f"{s}"
    assert s.reveal() == "sk-very-secret-value"
    assert redact("key=sk-very-secret-value;") == "key=***;"


def test_provider_error_survives_pickling() -> None:
    import pickle

    err = ProviderError("rate_limit", "slow down", 429, True, retry_after=1.5, provider="openai")
    back = pickle.loads(pickle.dumps(err))
    assert (back.kind, back.message, back.status, back.retryable, back.retry_after, back.provider) == (
        "rate_limit", "slow down", 429, True, 1.5, "openai"
    )


async def test_literal_key_in_a_custom_header_is_redacted(fake: FakeProvider, client, env) -> None:
    literal = "lit-0123456789-token"
    fake.then(Reply.error(403, f"token {literal} is not allowed"))
    b = provider_for_model(
        {"id": "gw", "url": fake.url("/gw/v1"), "modelName": "m", "headers": {"Authorization": f"Bearer {literal}"}},
        client=client, env=env, retry=NO_RETRY,
    )
    with pytest.raises(ProviderError) as e:
        await b.provider.chat(ChatRequest.of("m", "q"))
    assert e.value.kind == AUTH and literal not in str(e.value) and literal not in repr(b.provider)
