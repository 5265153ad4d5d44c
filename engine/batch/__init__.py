"""Provider batch APIs (OpenAI Batch API, Anthropic Message Batches, Gemini Batch API): clients built on
the chat providers.

`batch_api_for(provider)` gives the batch client for a run's provider (unwrapping the retry and cache
layers), or None when the provider has no batch API evalspec can drive.
"""

from __future__ import annotations

from typing import Any

from .api import BatchAPI, BatchStatus, ItemResult, Limits, split

__all__ = ["BatchAPI", "BatchStatus", "ItemResult", "Limits", "batch_api_for", "raw_provider", "split"]

# The catalog providers whose OpenAI-format endpoint has OpenAI's Batch API behind it.
OPENAI_BATCH_PROVIDERS = frozenset({"openai"})


def raw_provider(provider: Any) -> Any:
    """The HTTP provider under the retry and cache wrappers (each keeps the one it wraps in `inner`)."""
    seen = 0
    while hasattr(provider, "inner") and seen < 8:
        provider = provider.inner
        seen += 1
    return provider


def batch_api_for(provider: Any, *, limits: Limits | None = None, custom: bool = False,
                  model: str | None = None) -> BatchAPI | None:
    """The batch client for `provider`, or None. `custom`: the model is a custom endpoint whose owner
    asked for batch mode by name, so an OpenAI-format endpoint other than OpenAI's is trusted to have
    the Batch API (vLLM, some gateways do). `model`: the provider's model name the batches are for
    (Gemini makes a batch per model; the others read it from each request's body)."""
    from ..providers.anthropic import AnthropicProvider
    from ..providers.google import GoogleProvider
    from ..providers.openai_compat import OpenAICompatProvider

    raw = raw_provider(provider)
    if isinstance(raw, AnthropicProvider):
        from .anthropic_batch import AnthropicBatches

        api: BatchAPI = AnthropicBatches(raw)
    elif isinstance(raw, GoogleProvider):
        from .google_batch import GoogleBatches

        api = GoogleBatches(raw, model)
    elif isinstance(raw, OpenAICompatProvider) and (raw.name in OPENAI_BATCH_PROVIDERS or custom):
        from .openai_batch import OpenAIBatches

        api = OpenAIBatches(raw)
    else:
        return None
    if limits is not None:
        api.limits = api.limits.capped(limits.max_requests, limits.max_bytes)
    return api
