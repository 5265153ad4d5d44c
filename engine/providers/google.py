"""Google Gemini: POST /v1beta/models/<model>:generateContent, key in the `x-goog-api-key` header.

The key goes in a header rather than the `?key=` query parameter Google also accepts, so that it can
never show up in a URL that ends up in a log line or an error message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from evalspec.providers import answer_fields as fields
from evalspec.providers.base import BAD_RESPONSE, BLOCKED, ChatRequest, ChatResult, ProviderError
from evalspec.providers.http import DEFAULT_TIMEOUT, HttpProvider, endpoint_url
from evalspec.providers.openai_compat import provider_key
from evalspec.providers.redact import Secret, clip
from evalspec.providers.tool_calls import google_tool_calls

if TYPE_CHECKING:
    import yarl

    from evalspec.providers.http import HttpClient

# Request fields that live at the top level of generateContent; any other parameter is a generationConfig
# field (topP, topK, stopSequences, seed, responseMimeType, thinkingConfig, …).
_TOP_LEVEL = frozenset({"safetySettings", "tools", "toolConfig", "cachedContent", "labels"})


def models_base(base_url: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith(("/v1beta", "/v1", "/v1alpha")):
        return f"{base}/models"
    return f"{base}/v1beta/models"


class GoogleProvider(HttpProvider):
    def __init__(
        self,
        *,
        name: str = "google",
        base_url: str,
        api_key: str | Secret | None,
        key_env: str | None = "GOOGLE_API_KEY",
        client: HttpClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        model: str | None = None,
        headers: Mapping[str, str] | None = None,
        parameters: Mapping[str, Any] | None = None,
        require_key: bool = True,
    ) -> None:
        super().__init__(client=client, timeout=timeout, model=model)
        self.name = name
        key = provider_key(name, api_key, key_env, require_key)
        self.models_url = models_base(base_url)
        self.parameters: dict[str, Any] = dict(parameters or {})
        self._headers = {"content-type": "application/json", "accept": "application/json"}
        if key:
            self._headers["x-goog-api-key"] = key.reveal()
        self._headers.update(headers or {})
        self._urls: dict[str, yarl.URL] = {}

    def identity(self) -> dict[str, Any]:
        return self.endpoint_identity(self.models_url)

    def url_for(self, model: str) -> yarl.URL:
        url = self._urls.get(model)
        if url is None:
            name = model.removeprefix("models/")
            url = self._urls[model] = endpoint_url(f"{self.models_url}/{quote(name, safe='-._~')}:generateContent",
                                                   self.name)
        return url

    def body(self, req: ChatRequest) -> dict[str, Any]:
        systems = [req.system] if req.system else []
        contents: list[dict[str, Any]] = []
        for m in req.messages:
            if m.role == "system":
                systems.append(m.content)
                continue
            role = "model" if m.role in ("assistant", "model") else "user"
            contents.append({"role": role, "parts": [{"text": m.content}]})
        config: dict[str, Any] = {"maxOutputTokens": req.max_tokens} if req.max_tokens is not None else {}
        body: dict[str, Any] = {"contents": contents}
        if systems:
            body["systemInstruction"] = {"parts": [{"text": "\n\n".join(systems)}]}
        params = {**self.parameters}
        if req.temperature is not None:
            params["temperature"] = req.temperature
        params.update(req.extra)
        for k, v in params.items():
            if k in _TOP_LEVEL:
                body[k] = v
            elif k == "generationConfig" and isinstance(v, Mapping):
                config.update(v)
            elif k in ("max_tokens", "max_output_tokens"):
                config["maxOutputTokens"] = v
            else:
                config[k] = v
        body["generationConfig"] = config
        return body

    def chat_url_for(self, req: ChatRequest) -> yarl.URL:
        return self.url_for(self.model_for(req.model))

    def parse(self, data: dict[str, Any], latency_ms: float) -> ChatResult:
        candidates = data.get("candidates")
        if not candidates or not isinstance(candidates, list):
            reason = fields.obj(self.name, data.get("promptFeedback"), "promptFeedback").get("blockReason")
            if reason:
                raise ProviderError(
                    BLOCKED, f"{self.name}: the prompt was blocked ({reason})", 200, False, provider=self.name
                )
            raise ProviderError(
                BAD_RESPONSE, f"{self.name}: the answer has no candidates: {clip(str(data), 200)}", 200, False,
                provider=self.name,
            )
        first = fields.obj(self.name, candidates[0], "candidates[0]")
        content = fields.obj(self.name, first.get("content"), "candidates[0].content")
        parts = fields.items(self.name, content.get("parts"), "candidates[0].content.parts")
        finish = first.get("finishReason")
        if not parts and finish not in (None, "STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED"):
            # SAFETY, RECITATION, PROHIBITED_CONTENT…: no answer at all, which is not an empty answer.
            raise ProviderError(
                BLOCKED, f"{self.name}: no answer (finishReason {finish})", 200, False, provider=self.name
            )
        # Parts flagged `thought` are the model's reasoning, not its answer.
        text = fields.joined_text(self.name, parts, "candidates[0].content.parts", keep=lambda p: not p.get("thought"))
        return ChatResult(
            text=text,
            usage=fields.usage(self.name, data.get("usageMetadata"), "usageMetadata", "promptTokenCount",
                               "candidatesTokenCount"),
            latency_ms=latency_ms,
            raw_model=fields.model_name(data.get("modelVersion")),
            tool_calls=google_tool_calls(parts),
        )
