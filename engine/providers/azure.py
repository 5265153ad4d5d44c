"""Azure OpenAI: OpenAI's protocol at a per-resource endpoint, one URL per deployment, key in `api-key`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from evalspec.providers.http import DEFAULT_TIMEOUT
from evalspec.providers.openai_compat import OpenAICompatProvider
from evalspec.providers.redact import Secret

if TYPE_CHECKING:
    from evalspec.providers.http import HttpClient

DEFAULT_AZURE_API_VERSION = "2024-12-01-preview"  # AgentV's default
AZURE_KEY_ENV = "AZURE_OPENAI_API_KEY"


def azure_endpoint(endpoint_or_resource: str) -> str:
    """`https://my-res.openai.azure.com/` or just `my-res` → the endpoint root, without a trailing /openai."""
    value = endpoint_or_resource.strip().rstrip("/")
    if "://" not in value:
        value = f"https://{value}.openai.azure.com"
    return value.removesuffix("/openai")


def normalize_api_version(version: str | None) -> str:
    if not version or not version.strip():
        return DEFAULT_AZURE_API_VERSION
    v = version.strip()
    low = v.lower()
    for prefix in ("api-version=", "api_version=", "apiversion="):
        if low.startswith(prefix):
            v = v[len(prefix):].strip()
            break
    return v or DEFAULT_AZURE_API_VERSION


def azure_provider(
    *,
    endpoint: str,
    deployment: str,
    api_key: str | Secret | None,
    api_version: str | None = None,
    name: str = "azure",
    key_env: str | None = AZURE_KEY_ENV,
    client: HttpClient | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    parameters: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> OpenAICompatProvider:
    root = azure_endpoint(endpoint)
    version = quote(normalize_api_version(api_version), safe="-._~")
    base = f"{root}/openai/deployments/{quote(deployment, safe='-._~')}"
    return OpenAICompatProvider(
        name=name,
        base_url=base,
        chat_url=f"{base}/chat/completions?api-version={version}",
        embeddings_url=f"{base}/embeddings?api-version={version}",
        api_key=api_key,
        key_env=key_env,
        auth_header="api-key",
        model=deployment,  # the deployment decides the model; Azure ignores `model` in the body
        client=client,
        timeout=timeout,
        parameters=parameters,
        headers=headers,
    )
