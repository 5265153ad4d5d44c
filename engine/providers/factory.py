"""From a blueprint's model entry to a ready provider: `provider:model` ids, `echo`, custom model objects.

The runner's usual call:

    client = make_client(concurrency)
    binding = provider_for_model("openai:gpt-4o-mini", client=client, cache=cache)
    result = await binding.provider.chat(ChatRequest.of(binding.model_name, "Hello"), on_retry=report)

Providers come wrapped: retries (RetryingProvider) inside, the cache (CachedProvider) outside, so a
cache hit costs no retry bookkeeping and a failed call is never stored.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from evalspec.providers import catalog
from evalspec.providers.anthropic import AnthropicProvider
from evalspec.providers.base import CONFIG, MISSING_KEY, Provider, ProviderError
from evalspec.providers.cache import CachedProvider, ResponseCache
from evalspec.providers.echo import EchoProvider
from evalspec.providers.envvars import expand
from evalspec.providers.google import GoogleProvider
from evalspec.providers.http import DEFAULT_TIMEOUT
from evalspec.providers.openai_compat import OpenAICompatProvider
from evalspec.providers.redact import Secret, is_sensitive_header, register_secret
from evalspec.providers.retry import DEFAULT_POLICY, NO_RETRY, RetryingProvider, RetryPolicy

if TYPE_CHECKING:
    from evalspec.providers.http import HttpClient


@dataclass(frozen=True, slots=True)
class ModelBinding:
    model_id: str  # as written in the blueprint (custom models: their `id`)
    provider: Provider
    model_name: str  # what goes into ChatRequest.model


def wrap(provider: Provider, *, retry: RetryPolicy | None = DEFAULT_POLICY,
         cache: ResponseCache | None = None) -> Provider:
    """Retries inside, cache outside. Always a RetryingProvider (with NO_RETRY when `retry` is None), so
    that every provider handed to the runner reports its retries the same way."""
    provider = RetryingProvider(provider, retry or NO_RETRY)
    if cache is not None:
        provider = CachedProvider(provider, cache)
    return provider


def http_provider(
    spec: catalog.ProviderSpec,
    *,
    api_key: str | Secret | None,
    base_url: str | None = None,
    client: HttpClient | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    model: str | None = None,
    headers: Mapping[str, str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    chat_url: str | None = None,
    require_key: bool = True,
    name: str | None = None,
) -> Any:
    """The raw (unwrapped) provider for a catalog entry's wire format."""
    common: dict[str, Any] = {
        "name": name or spec.name,
        "base_url": base_url or spec.base_url,
        "api_key": api_key,
        "key_env": spec.key_env,
        "client": client,
        "timeout": timeout,
        "model": model,
        "headers": headers,
        "parameters": parameters,
    }
    if spec.api == catalog.ANTHROPIC:
        return AnthropicProvider(url=chat_url, require_key=require_key, **common)
    if spec.api == catalog.GOOGLE:
        return GoogleProvider(require_key=require_key, **common)
    return OpenAICompatProvider(chat_url=chat_url, require_key=require_key, **common)


def provider_for_model(
    model: str | Mapping[str, Any],
    *,
    client: HttpClient | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    retry: RetryPolicy | None = DEFAULT_POLICY,
    cache: ResponseCache | None = None,
) -> ModelBinding:
    """Raises ProviderError: kind `config` for an unknown provider, `missing_key` (naming the variable to
    set) when the key is not in the environment — always before any HTTP."""
    env = os.environ if env is None else env
    if isinstance(model, Mapping):
        return _custom_model(model, client=client, env=env, timeout=timeout, retry=retry, cache=cache)
    model_id = model.strip()
    provider_name, model_name = catalog.split_model_id(model_id)
    if provider_name == "echo":
        return ModelBinding(model_id, wrap(EchoProvider(model_id), retry=None, cache=None), model_name or "echo")
    spec, model_name = catalog.resolve(model_id)
    key = env.get(spec.key_env)
    raw = http_provider(
        spec,
        api_key=Secret(key) if key else None,
        base_url=spec.effective_base_url(env),
        client=client,
        timeout=timeout,
    )
    return ModelBinding(model_id, wrap(raw, retry=retry, cache=cache), model_name)


# The path each wire format appends to a base URL; a custom `url` ending in it is a full endpoint.
_ENDPOINT_SUFFIX = {catalog.OPENAI: "/chat/completions", catalog.ANTHROPIC: "/messages"}


def _custom_model(
    entry: Mapping[str, Any],
    *,
    client: HttpClient | None,
    env: Mapping[str, str],
    timeout: float,
    retry: RetryPolicy | None,
    cache: ResponseCache | None,
) -> ModelBinding:
    """A blueprint custom model `{id, url, modelName, inherit?, format?, headers?, parameters?}`.

    `inherit` picks the wire format (openai — the default, for Ollama, vLLM, llama.cpp and gateways —,
    anthropic, google, or any catalog provider). The inherited provider's API key is sent only when `url`
    is that provider's own host: a custom URL must not receive your OpenAI key unless you say so, with a
    header (`Authorization: Bearer ${MY_KEY}`) or `apiKeyEnv: VAR`.
    """
    model_id = str(entry.get("id") or "").strip()
    url = str(entry.get("url") or "").strip()
    model_name = str(entry.get("modelName") or entry.get("model_name") or "").strip()
    what = f"custom model {model_id or '(no id)'}"
    if not model_id or not url or not model_name:
        missing = [k for k, v in (("id", model_id), ("url", url), ("modelName", model_name)) if not v]
        raise ProviderError(CONFIG, f"{what}: missing {', '.join(missing)}")
    inherit = str(entry.get("inherit") or "openai").strip().lower()
    spec = catalog.find(inherit)
    if spec is None:
        raise ProviderError(
            CONFIG, f"{what}: unknown inherit {inherit!r} (known: {', '.join(catalog.PROVIDERS)})"
        )
    url = expand(url, env, f"{what} url")
    headers: dict[str, str] = {}
    for k, v in (entry.get("headers") or {}).items():
        sensitive = is_sensitive_header(str(k))
        value = headers[str(k)] = expand(str(v), env, f"{what} header {k}", secret=sensitive)
        if sensitive:  # a key written literally in the blueprint is still a key
            register_secret(value)
            register_secret(value.partition(" ")[2])  # the token of "Bearer <token>"

    key: str | None = None
    key_env = entry.get("apiKeyEnv") or entry.get("api_key_env")
    if key_env:
        key = env.get(str(key_env))
        if not key:
            raise ProviderError(
                MISSING_KEY, f"{key_env} is not set: export {key_env}=<API key> to call {what}"
            )
    elif urlsplit(url).hostname == urlsplit(spec.base_url).hostname:
        key = env.get(spec.key_env)
        if not key:
            raise ProviderError(
                MISSING_KEY, f"{spec.key_env} is not set: export {spec.key_env}=<your {spec.name} API key> "
                f"to call {what}"
            )

    # `url` may be a base URL or the full endpoint; both are accepted.
    base_url, chat_url = url.rstrip("/"), None
    suffix = _ENDPOINT_SUFFIX.get(spec.api)
    if suffix and base_url.endswith(suffix):
        chat_url = base_url
        base_url = base_url[: -len(suffix)]
    elif spec.api == catalog.GOOGLE and ":generateContent" in base_url:
        base_url = base_url.split("/models/", 1)[0]

    parameters = entry.get("parameters") or {}
    if not isinstance(parameters, Mapping):
        raise ProviderError(CONFIG, f"{what}: parameters must be a mapping")
    raw = http_provider(
        spec,
        api_key=Secret(key) if key else None,
        base_url=base_url,
        chat_url=chat_url,
        client=client,
        timeout=timeout,
        headers=headers,
        parameters=parameters,
        require_key=False,
        name=model_id,
    )
    return ModelBinding(model_id, wrap(raw, retry=retry, cache=cache), model_name)
