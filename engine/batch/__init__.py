"""Provider batch APIs (OpenAI Batch API, Anthropic Message Batches, Gemini Batch API): clients built on
the chat providers.

`batch_api_for(provider)` gives the batch client for a run's provider (unwrapping the retry and cache
layers), or None when the provider has no batch API evalspec can drive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .api import BatchAPI, BatchStatus, ItemResult, Limits, full, split
from .part_file import PartFile

if TYPE_CHECKING:
    from ..providers.base import Provider
    from ..providers.http import HttpProvider

__all__ = ["BatchAPI", "BatchStatus", "ItemResult", "Limits", "PartFile", "batch_api_for", "full", "http_provider",
           "split"]

# The catalog providers whose OpenAI-format endpoint has OpenAI's Batch API behind it.
OPENAI_BATCH_PROVIDERS = frozenset({"openai"})


def http_provider(provider: Provider) -> HttpProvider | None:
    """The HTTP provider under the retry and cache wrappers (each keeps the one it wraps in `inner`), or
    None when there is none (a cli target, echo): only an HTTP provider's requests can go in a batch."""
    from ..providers.http import HttpProvider

    for _ in range(8):
        inner = getattr(provider, "inner", None)
        if inner is None:
            break
        provider = inner
    return provider if isinstance(provider, HttpProvider) else None


def batch_api_for(provider: Provider, *, limits: Limits | None = None, custom: bool = False,
                  model: str | None = None) -> BatchAPI | None:
    """The batch client for `provider`, or None. `custom`: the model is a custom endpoint whose owner
    asked for batch mode by name, so an OpenAI-format endpoint other than OpenAI's is trusted to have
    the Batch API (vLLM, some gateways do). `model`: the provider's model name the batches are for
    (Gemini makes a batch per model; the others read it from each request's body)."""
    from ..providers.anthropic import AnthropicProvider
    from ..providers.google import GoogleProvider
    from ..providers.openai_compat import OpenAICompatProvider

    raw = http_provider(provider)
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
