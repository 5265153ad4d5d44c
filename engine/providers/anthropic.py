"""Anthropic Messages API: POST /v1/messages with `anthropic-version: 2023-06-01`.

Differences from OpenAI that matter here: the system prompt is a top-level field (a `system` role inside
`messages` is rejected, so such messages are folded into it), `max_tokens` is mandatory, the key goes in
`x-api-key`, and the answer is a list of content blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalspec.providers import answer_fields as fields
from evalspec.providers.base import BAD_RESPONSE, ChatRequest, ChatResult, ProviderError
from evalspec.providers.http import DEFAULT_TIMEOUT, HttpProvider, endpoint_url
from evalspec.providers.openai_compat import provider_key
from evalspec.providers.redact import Secret, clip
from evalspec.providers.tool_calls import anthropic_tool_calls

if TYPE_CHECKING:
    import yarl

    from evalspec.providers.http import HttpClient

ANTHROPIC_VERSION = "2023-06-01"


def messages_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    # ANTHROPIC_BASE_URL is a host root in Anthropic's SDKs; accept one that already ends in /v1 too.
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


class AnthropicProvider(HttpProvider):
    def __init__(
        self,
        *,
        name: str = "anthropic",
        base_url: str,
        api_key: str | Secret | None,
        key_env: str | None = "ANTHROPIC_API_KEY",
        client: HttpClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        model: str | None = None,
        headers: Mapping[str, str] | None = None,
        parameters: Mapping[str, Any] | None = None,
        require_key: bool = True,
        url: str | None = None,
    ) -> None:
        super().__init__(client=client, timeout=timeout, model=model)
        self.name = name
        key = provider_key(name, api_key, key_env, require_key)
        self.url = url or messages_url(base_url)
        self._url = endpoint_url(self.url, name)
        self.parameters: dict[str, Any] = dict(parameters or {})
        self._headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if key:
            self._headers["x-api-key"] = key.reveal()
        self._headers.update(headers or {})

    def identity(self) -> dict[str, Any]:
        return self.endpoint_identity(self.url)

    def body(self, req: ChatRequest) -> dict[str, Any]:
        """The Messages API body; with no max_tokens in the request (AgentV's judges), the AI SDK's default."""
        systems = [req.system] if req.system else []
        messages: list[dict[str, str]] = []
        for m in req.messages:
            if m.role == "system":
                systems.append(m.content)
            else:
                messages.append({"role": m.role, "content": m.content})
        body: dict[str, Any] = {
            "model": self.model_for(req.model),
            "max_tokens": req.max_tokens if req.max_tokens is not None else ai_sdk_max_tokens(self.model_for(req.model)),
            "messages": messages,
        }
        if systems:
            body["system"] = "\n\n".join(systems)
        if self.parameters:
            body.update(self.parameters)
        if req.temperature is not None:
            body["temperature"] = req.temperature
        if req.extra:
            body.update(req.extra)
        return body

    def chat_url_for(self, req: ChatRequest) -> yarl.URL:
        return self._url

    def parse(self, data: dict[str, Any], latency_ms: float) -> ChatResult:
        content = data.get("content")
        if not isinstance(content, list):
            raise ProviderError(
                BAD_RESPONSE, f"{self.name}: the answer has no content blocks: {clip(str(data), 200)}", 200, False,
                provider=self.name,
            )
        # Thinking and tool-use blocks are not part of the answer text.
        text = fields.joined_text(self.name, content, "content", keep=lambda b: b.get("type") == "text")
        return ChatResult(
            text=text,
            usage=fields.usage(self.name, data.get("usage"), "usage", "input_tokens", "output_tokens"),
            latency_ms=latency_ms,
            raw_model=fields.model_name(data.get("model")),
            tool_calls=anthropic_tool_calls(content),
        )


def ai_sdk_max_tokens(model: str) -> int:
    """The `max_tokens` AgentV's AI SDK (@ai-sdk/anthropic 2.0.56, getModelCapabilities) sends when the caller
    sets none: the model's maximum output."""
    if "claude-sonnet-4-5" in model or "claude-opus-4-5" in model:
        return 64000
    if "claude-opus-4-1" in model:
        return 32000
    if "claude-sonnet-4-" in model or "claude-3-7-sonnet" in model or "claude-haiku-4-5" in model:
        return 64000
    if "claude-opus-4-" in model:
        return 32000
    if "claude-3-5-haiku" in model:
        return 8192
    return 4096
