"""The providers a `provider:model` id can name, with their endpoints and API-key variables.

Plain data on purpose: the runner builds clients from it, and the editor reads it to show, on hover over
`openai:gpt-4o-mini`, which provider answers and which environment variable must hold the key.
Defaults are those of the reference implementation (weval-org/app); every base URL can be
overridden from the environment (`<PROVIDER>_BASE_URL`), e.g. to point at a gateway or a local mock.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from evalspec.providers.base import CONFIG, ProviderError

# Wire formats a provider can speak. Each maps to one module: openai_compat.py, anthropic.py, google.py.
OPENAI = "openai"
ANTHROPIC = "anthropic"
GOOGLE = "google"


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    name: str  # the prefix in model ids: `openai` in `openai:gpt-4o-mini`
    label: str  # for people: "OpenAI"
    api: str  # wire format: OPENAI | ANTHROPIC | GOOGLE
    base_url: str  # default base URL (see each module for the path it appends)
    key_env: str  # environment variable holding the API key
    base_url_env: str  # environment variable overriding base_url
    doc: str  # one line for hovers and error messages

    def effective_base_url(self, env: Mapping[str, str] | None = None) -> str:
        env = os.environ if env is None else env
        return (env.get(self.base_url_env) or self.base_url).rstrip("/")


def _spec(name: str, label: str, api: str, base_url: str, doc: str) -> ProviderSpec:
    up = name.upper()
    return ProviderSpec(name, label, api, base_url, f"{up}_API_KEY", f"{up}_BASE_URL", doc)


PROVIDERS: dict[str, ProviderSpec] = {
    s.name: s
    for s in (
        _spec("openai", "OpenAI", OPENAI, "https://api.openai.com/v1",
              "OpenAI chat completions (POST {base}/chat/completions), key in OPENAI_API_KEY"),
        # Anthropic and Google base URLs are host roots, like their SDKs' ANTHROPIC_BASE_URL and
        # Google's base URL; the versioned path is added by the client (a base ending in /v1 or /v1beta
        # is accepted as well).
        _spec("anthropic", "Anthropic", ANTHROPIC, "https://api.anthropic.com",
              "Anthropic Messages API (POST {base}/v1/messages, anthropic-version 2023-06-01), "
              "key in ANTHROPIC_API_KEY"),
        _spec("google", "Google Gemini", GOOGLE, "https://generativelanguage.googleapis.com",
              "Google Gemini (POST {base}/v1beta/models/<model>:generateContent), key in GOOGLE_API_KEY"),
        _spec("mistral", "Mistral", OPENAI, "https://api.mistral.ai/v1",
              "Mistral (OpenAI-compatible chat completions), key in MISTRAL_API_KEY"),
        _spec("together", "Together AI", OPENAI, "https://api.together.xyz/v1",
              "Together AI (OpenAI-compatible chat completions), key in TOGETHER_API_KEY"),
        _spec("xai", "xAI", OPENAI, "https://api.x.ai/v1",
              "xAI Grok (OpenAI-compatible chat completions), key in XAI_API_KEY"),
        _spec("openrouter", "OpenRouter", OPENAI, "https://openrouter.ai/api/v1",
              "OpenRouter (OpenAI-compatible; model names are vendor/model), key in OPENROUTER_API_KEY"),
    )
}

# Model ids answered without any network; see echo.py. (`replay:` belongs to the runner.)
OFFLINE_PROVIDERS = {"echo": "Answers with the last user message, no network (for dry runs and tests)"}


def find(provider: str) -> ProviderSpec | None:
    return PROVIDERS.get(provider.strip().lower())


def split_model_id(model_id: str) -> tuple[str, str]:
    """`provider:model` → (provider, model). Only the first colon splits: OpenRouter and Ollama model
    names may hold `/` and `:` themselves (`openrouter:meta-llama/llama-3.1-8b-instruct:free`)."""
    provider, sep, model = model_id.partition(":")
    if not sep:
        return model_id.strip().lower(), ""
    return provider.strip().lower(), model.strip()


def resolve(model_id: str) -> tuple[ProviderSpec, str]:
    """`openai:gpt-4o-mini` → (the openai ProviderSpec, "gpt-4o-mini"). Raises ProviderError(kind=config)."""
    provider, model = split_model_id(model_id)
    spec = PROVIDERS.get(provider)
    if spec is None:
        known = ", ".join([*PROVIDERS, *OFFLINE_PROVIDERS])
        if not model:
            raise ProviderError(CONFIG, f"model id {model_id!r} is not of the form provider:model (providers: {known})")
        raise ProviderError(CONFIG, f"unknown provider {provider!r} in model id {model_id!r} (known: {known})")
    if not model:
        raise ProviderError(CONFIG, f"model id {model_id!r} names no model after '{provider}:'")
    return spec, model


def describe(model_id: str) -> str | None:
    """One line for an editor hover: provider, endpoint, key variable. None when the id is not ours."""
    provider, model = split_model_id(model_id)
    if provider in OFFLINE_PROVIDERS:
        return f"{provider}: {OFFLINE_PROVIDERS[provider]}"
    spec = PROVIDERS.get(provider)
    if spec is None or not model:
        return None
    return f"{spec.label} model `{model}` — {spec.doc}; base URL override: {spec.base_url_env}"
