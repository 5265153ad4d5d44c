"""OpenAI chat completions and embeddings, and every server that speaks the same protocol.

Used for openai, mistral, together, xai, openrouter from the catalog, for Azure OpenAI (azure.py), and for
custom models `{id, url, modelName, headers, parameters}` pointing at Ollama, vLLM, llama.cpp, LM Studio
or a gateway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalspec.providers import answer_fields as fields
from evalspec.providers.base import (
    BAD_RESPONSE,
    MISSING_KEY,
    SERVER,
    ChatRequest,
    ChatResult,
    Embeddings,
    ProviderError,
    Usage,
)
from evalspec.providers.http import DEFAULT_TIMEOUT, HttpProvider, endpoint_url, post_json
from evalspec.providers.redact import Secret, clip, redact
from evalspec.providers.tool_calls import openai_tool_calls

if TYPE_CHECKING:
    import yarl

    from evalspec.providers.http import HttpClient

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"


def missing_key_error(provider: str, key_env: str | None, what: str | None = None) -> ProviderError:
    target = what or provider
    if key_env:
        msg = f"{key_env} is not set: export {key_env}=<your {provider} API key> to call {target}"
    else:
        msg = f"no API key configured for {target}"
    return ProviderError(MISSING_KEY, msg, provider=provider)


def provider_key(provider: str, api_key: str | Secret | None, key_env: str | None, require_key: bool) -> Secret:
    """The key a provider sends, refused before any HTTP (naming the variable to set) when required and empty."""
    key = api_key if isinstance(api_key, Secret) else Secret(api_key or "")
    if require_key and not key:
        raise missing_key_error(provider, key_env)
    return key


class OpenAICompatProvider(HttpProvider):
    def __init__(
        self,
        *,
        name: str = "openai",
        base_url: str,
        api_key: str | Secret | None,
        key_env: str | None = None,
        require_key: bool = True,
        client: HttpClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        model: str | None = None,
        chat_url: str | None = None,
        embeddings_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        parameters: Mapping[str, Any] | None = None,
        auth_header: str = "authorization",
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
    ) -> None:
        super().__init__(client=client, timeout=timeout, model=model)
        self.name = name
        key = provider_key(name, api_key, key_env, require_key)
        self.base_url = base_url.rstrip("/")
        self.chat_url = chat_url or f"{self.base_url}/chat/completions"
        self.embeddings_url = embeddings_url or f"{self.base_url}/embeddings"
        self._chat_url = endpoint_url(self.chat_url, name)  # parsed once, not per call
        self._embeddings_url = endpoint_url(self.embeddings_url, name)
        self.parameters: dict[str, Any] = dict(parameters or {})
        self.embedding_model = embedding_model
        h = {"content-type": "application/json", "accept": "application/json"}
        if key:
            # Azure wants the bare key in `api-key`; everyone else `Authorization: Bearer`.
            h[auth_header] = f"Bearer {key.reveal()}" if auth_header == "authorization" else key.reveal()
        h.update(headers or {})
        self._headers = h

    def identity(self) -> dict[str, Any]:
        return self.endpoint_identity(redact(self.chat_url))

    def body(self, req: ChatRequest) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if req.system:
            messages.append({"role": "system", "content": req.system})
        messages.extend({"role": m.role, "content": m.content} for m in req.messages)
        body: dict[str, Any] = {"model": self.model_for(req.model), "messages": messages}
        if self.parameters:
            body.update(self.parameters)  # custom model / target settings
        if req.temperature is not None:
            body["temperature"] = req.temperature
        if req.extra:
            body.update(req.extra)
        # o-series models take max_completion_tokens instead; whoever sets that opts out of max_tokens.
        if "max_tokens" not in body and "max_completion_tokens" not in body and req.max_tokens is not None:
            body["max_tokens"] = req.max_tokens
        return body

    def chat_url_for(self, req: ChatRequest) -> yarl.URL:
        return self._chat_url

    def parse(self, data: dict[str, Any], latency_ms: float) -> ChatResult:
        choices = data.get("choices")
        if not choices or not isinstance(choices, list):
            raise self._error_in_body(data)
        first = fields.obj(self.name, choices[0], "choices[0]")
        message = fields.obj(self.name, first.get("message"), "choices[0].message")
        content = message.get("content")
        if isinstance(content, list):  # some servers answer with content parts
            text = fields.joined_text(self.name, content, "choices[0].message.content")
        elif content is None:
            text = fields.text(self.name, message.get("refusal"), "choices[0].message.refusal")
        else:
            text = fields.text(self.name, content, "choices[0].message.content")
        return ChatResult(
            text=text,
            usage=fields.usage(self.name, data.get("usage"), "usage", "prompt_tokens", "completion_tokens"),
            latency_ms=latency_ms,
            raw_model=fields.model_name(data.get("model")),
            tool_calls=openai_tool_calls(message),
        )

    def _error_in_body(self, data: dict[str, Any]) -> ProviderError:
        # OpenRouter and some gateways answer 200 with {"error": {...}} when the upstream model failed.
        err = data.get("error")
        if isinstance(err, dict):
            code = err.get("code")
            status = code if isinstance(code, int) else None
            retryable = status is not None and (status == 429 or status >= 500)
            return ProviderError(
                SERVER if retryable else BAD_RESPONSE,
                f"{self.name}: error in the answer: {clip(str(err.get('message') or err), 500)}",
                status,
                retryable,
                provider=self.name,
            )
        return ProviderError(
            BAD_RESPONSE, f"{self.name}: the answer has no choices: {clip(str(data), 200)}", 200, False,
            provider=self.name,
        )

    async def embed(self, texts: Sequence[str], *, model: str | None = None) -> list[list[float]]:
        body = {"model": model or self.bound_model or self.embedding_model, "input": list(texts)}
        data, _ = await post_json(
            self.client, self.name, self._embeddings_url, body, self.request_headers, self.timeout,
            limit=self.rate_limit,
        )
        items = data.get("data")
        if not isinstance(items, list) or len(items) != len(texts):
            raise ProviderError(
                BAD_RESPONSE,
                f"{self.name}: expected {len(texts)} embeddings, got {len(items) if isinstance(items, list) else 0}",
                200,
                False,
                provider=self.name,
            )
        try:
            items = sorted(items, key=lambda d: int(d.get("index", 0)))
            vectors = [[float(x) for x in d["embedding"]] for d in items]
        except (AttributeError, KeyError, TypeError, ValueError):
            raise ProviderError(
                BAD_RESPONSE, f"{self.name}: malformed embeddings in the answer", 200, False, provider=self.name
            ) from None
        # What the call used, for the run's real spend (run/cost/spend.py); an answer without it stays unknown.
        usage = data.get("usage")
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        known = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0 else None
        return Embeddings(vectors, usage=Usage(known, 0) if known is not None else None,
                          model=data["model"] if isinstance(data.get("model"), str) else None)
