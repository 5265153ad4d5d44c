"""Model providers: the HTTP clients (OpenAI-compatible, Anthropic, Google, Azure), offline providers
(echo, mock, cli), retries, the response cache, and the catalog of `provider:model` ids.

Start with `make_client`, `provider_for_model` (blueprint models) or `provider_from_target` (AgentV).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalspec.providers.base import (
        ChatMessage,
        ChatRequest,
        ChatResult,
        EmbeddingProvider,
        Provider,
        ProviderError,
        Usage,
    )
    from evalspec.providers.cache import CachedProvider, ResponseCache, cache_key
    from evalspec.providers.catalog import PROVIDERS, ProviderSpec, describe, resolve
    from evalspec.providers.factory import ModelBinding, provider_for_model, wrap
    from evalspec.providers.http import DEFAULT_TIMEOUT, make_client
    from evalspec.providers.retry import NO_RETRY, RetryingProvider, RetryPolicy, retry_call
    from evalspec.providers.targets import provider_from_target

# Name → the submodule that defines it. Loaded on first use (PEP 562): importing a submodule such as
# `catalog` (completion and hover list providers) must not import httpx and every HTTP client.
_HOME = {
    **dict.fromkeys(("ChatMessage", "ChatRequest", "ChatResult", "EmbeddingProvider", "Provider",
                     "ProviderError", "Usage"), "base"),
    **dict.fromkeys(("CachedProvider", "ResponseCache", "cache_key"), "cache"),
    **dict.fromkeys(("PROVIDERS", "ProviderSpec", "describe", "resolve"), "catalog"),
    **dict.fromkeys(("ModelBinding", "provider_for_model", "wrap"), "factory"),
    **dict.fromkeys(("DEFAULT_TIMEOUT", "make_client"), "http"),
    **dict.fromkeys(("NO_RETRY", "RetryingProvider", "RetryPolicy", "retry_call"), "retry"),
    "provider_from_target": "targets",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next lookup is a plain global
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})


__all__ = [
    "DEFAULT_TIMEOUT",
    "NO_RETRY",
    "PROVIDERS",
    "CachedProvider",
    "ChatMessage",
    "ChatRequest",
    "ChatResult",
    "EmbeddingProvider",
    "ModelBinding",
    "Provider",
    "ProviderError",
    "ProviderSpec",
    "ResponseCache",
    "RetryPolicy",
    "RetryingProvider",
    "Usage",
    "cache_key",
    "describe",
    "make_client",
    "provider_for_model",
    "provider_from_target",
    "resolve",
    "retry_call",
    "wrap",
]
