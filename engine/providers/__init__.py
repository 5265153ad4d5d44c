"""Model providers: the HTTP clients (OpenAI-compatible, Anthropic, Google, Azure), offline providers
(echo, mock, cli), retries, the response cache, and the catalog of `provider:model` ids.

Start with `make_client`, `provider_for_model` (blueprint models) or `provider_from_target` (AgentV).
"""

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
