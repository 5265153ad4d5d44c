from __future__ import annotations

import pytest

from evalspec.providers import catalog
from evalspec.providers.base import CONFIG, ProviderError

# weval-compat-notes §9, verbatim.
EXPECTED = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": ("https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    "google": ("https://generativelanguage.googleapis.com", "GOOGLE_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
}


def test_table_matches_the_reference() -> None:
    assert set(catalog.PROVIDERS) == set(EXPECTED)
    for name, (base, key_env) in EXPECTED.items():
        spec = catalog.PROVIDERS[name]
        assert (spec.base_url, spec.key_env) == (base, key_env)
        assert spec.base_url_env == f"{name.upper()}_BASE_URL"
        assert spec.doc and key_env in spec.doc


def test_full_endpoints_of_anthropic_and_google() -> None:
    from evalspec.providers.anthropic import messages_url
    from evalspec.providers.google import models_base

    assert messages_url(catalog.PROVIDERS["anthropic"].base_url) == "https://api.anthropic.com/v1/messages"
    assert messages_url("http://x/v1") == "http://x/v1/messages"
    assert models_base(catalog.PROVIDERS["google"].base_url) == (
        "https://generativelanguage.googleapis.com/v1beta/models"
    )
    assert models_base("http://x/v1beta/") == "http://x/v1beta/models"


def test_resolve_splits_on_the_first_colon_only() -> None:
    spec, model = catalog.resolve("openrouter:meta-llama/llama-3.1-8b-instruct:free")
    assert spec.name == "openrouter"
    assert model == "meta-llama/llama-3.1-8b-instruct:free"
    spec, model = catalog.resolve(" OpenAI : gpt-4o-mini ")
    assert (spec.name, model) == ("openai", "gpt-4o-mini")


@pytest.mark.parametrize("bad", ["nope:model", "gpt-4o", "openai:", "openai: "])
def test_resolve_rejects_bad_ids(bad: str) -> None:
    with pytest.raises(ProviderError) as e:
        catalog.resolve(bad)
    assert e.value.kind == CONFIG


def test_base_url_from_the_environment() -> None:
    spec = catalog.PROVIDERS["mistral"]
    assert spec.effective_base_url({}) == "https://api.mistral.ai/v1"
    assert spec.effective_base_url({"MISTRAL_BASE_URL": "http://127.0.0.1:9/v1/"}) == "http://127.0.0.1:9/v1"


def test_describe_for_hovers() -> None:
    text = catalog.describe("xai:grok-3")
    assert text is not None and "xAI" in text and "XAI_API_KEY" in text and "grok-3" in text
    assert catalog.describe("echo") is not None
    assert catalog.describe("nope:x") is None
