"""Every provider is called the same way: the `Provider` protocol, `on_retry` and `embed(model=…)`."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from evalspec.providers import ChatRequest, ProviderError, RetryPolicy, provider_for_model
from evalspec.providers.anthropic import AnthropicProvider
from evalspec.providers.base import CONFIG, EmbeddingProvider, Provider
from evalspec.providers.cache import CachedProvider
from evalspec.providers.command import CommandProvider
from evalspec.providers.echo import EchoProvider
from evalspec.providers.google import GoogleProvider
from evalspec.providers.mock import MockProvider
from evalspec.providers.openai_compat import OpenAICompatProvider
from evalspec.providers.retry import RetryingProvider
from evalspec.run.events import Cell, Retrying
from evalspec.run.generate.calls import Calls
from evalspec.run.options import RunOptions

CLASSES = (AnthropicProvider, GoogleProvider, OpenAICompatProvider, EchoProvider, MockProvider, CommandProvider,
           RetryingProvider, CachedProvider)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_provider_takes_on_retry(cls: type) -> None:
    parameter = inspect.signature(cls.chat).parameters.get("on_retry")
    assert parameter is not None and parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is None


def test_embeddings_take_the_model_by_keyword() -> None:
    for cls in (OpenAICompatProvider, RetryingProvider, CachedProvider):
        parameter = inspect.signature(cls.embed).parameters["model"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY


class _Flaky:
    """Fails once with a retryable error, then answers; never retries by itself."""

    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, req: ChatRequest, *, on_retry=None):
        from evalspec.providers.base import ChatResult

        self.calls += 1
        if self.calls == 1:
            raise ProviderError("rate_limit", "slow down", 429, True, retry_after=0.0)
        return ChatResult("ok")


def test_calls_reports_retries_of_any_wrapped_provider() -> None:
    events: list[object] = []
    flaky = _Flaky()
    assert isinstance(flaky, Provider)
    provider = RetryingProvider(flaky, RetryPolicy(max_retries=2, base_delay=0.0, max_delay=0.0))
    calls = Calls(RunOptions(), events.append, concurrency=2)
    result = asyncio.run(calls.chat(provider, ChatRequest.of("m", "hi"), Cell("p", "m"), limit_key="x"))
    assert result.text == "ok"
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["429"]


def test_embedding_through_a_provider_without_an_endpoint_is_a_clear_error() -> None:
    echo = provider_for_model("echo").provider  # wrapped: retries, as every provider the runner gets
    assert not isinstance(EchoProvider(), EmbeddingProvider)
    assert isinstance(echo, EmbeddingProvider)  # the wrapper has the method; it asks what it wraps
    with pytest.raises(ProviderError) as err:
        asyncio.run(echo.embed(["a"], model="echo"))
    assert err.value.kind == CONFIG and "no embeddings endpoint" in err.value.message
