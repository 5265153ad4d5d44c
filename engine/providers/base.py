"""The vocabulary every provider speaks: requests, results, errors and the Provider protocol.

Everything here is plain data so the runner, the cache and the editor can use it without importing
any HTTP machinery.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from evalspec.providers.redact import redact
from evalspec.providers.tool_calls import ToolCall, calls_from_json

DEFAULT_MAX_TOKENS = 1500  # the reference Weval client's default

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One generation call. `model` is the provider's own model name (no `provider:` prefix)."""

    model: str
    messages: tuple[ChatMessage, ...]
    system: str | None = None
    temperature: float | None = None
    # None: none sent, the API's (or, for Anthropic, which needs one, the AI SDK's) default, as AgentV's judges
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    # Provider-specific generation parameters (top_p, stop, seed, …), merged into the request body.
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    # Seconds for this call instead of the provider's timeout (AgentV `execution.timeout_seconds`). Not
    # part of the cache key: it does not change the answer.
    timeout: float | None = None

    @staticmethod
    def of(
        model: str,
        prompt: str | Sequence[ChatMessage | Mapping[str, str] | tuple[str, str]],
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        extra: Mapping[str, Any] | None = None,
    ) -> ChatRequest:
        """Convenience constructor: a prompt string, or messages as ChatMessage / {role, content} / pairs."""
        if isinstance(prompt, str):
            messages: tuple[ChatMessage, ...] = (ChatMessage("user", prompt),)
        else:
            items = []
            for m in prompt:
                if isinstance(m, ChatMessage):
                    items.append(m)
                elif isinstance(m, Mapping):
                    items.append(ChatMessage(str(m["role"]), str(m["content"])))
                else:
                    items.append(ChatMessage(str(m[0]), str(m[1])))
            messages = tuple(items)
        return ChatRequest(
            model=model,
            messages=messages,
            system=system,
            temperature=temperature,
            max_tokens=max_tokens,
            extra=MappingProxyType(dict(extra)) if extra else _EMPTY,
        )

    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.role == "user":
                return m.content
        return ""


@dataclass(frozen=True, slots=True)
class Usage:
    """The tokens a call used, as the provider reported them. `reported=False`: the target reported no
    usage (AgentV's `mock`, a `cli` target whose output has no `token_usage`, an API answer without both
    counts): the counts are then 0 for accounting only, and a `token-usage` check fails with "no data",
    as in AgentV."""

    input_tokens: int = 0
    output_tokens: int = 0
    reported: bool = True


NOT_REPORTED = Usage(0, 0, reported=False)


class Embeddings(list[list[float]]):
    """The vectors of an embeddings call, in input order, with what the provider says the call used
    (`usage`: its input tokens, None when the answer reports none) and which model answered."""

    def __init__(self, vectors: Sequence[list[float]] = (), *, usage: Usage | None = None,
                 model: str | None = None) -> None:
        super().__init__(vectors)
        self.usage = usage
        self.model = model


@dataclass(frozen=True, slots=True)
class ChatResult:
    text: str
    usage: Usage = field(default_factory=Usage)
    latency_ms: float = 0.0
    raw_model: str | None = None  # the model name the provider reports having used
    cached: bool = False  # True when served from the response cache (latency_ms is then the original one)
    tool_calls: tuple[ToolCall, ...] = ()  # the tool calls of the answer, in order (an empty trace: none)
    batched: bool = False  # answered through a provider batch API (run/generate/batch_stage.py): batch prices apply
    cost_usd: float | None = None  # a cost the target reports itself (a cli target's `cost_usd`), as AgentV reads it

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "usage": ({"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens}
                      if self.usage.reported else None),
            "latency_ms": self.latency_ms,
            "raw_model": self.raw_model,
        }
        if self.tool_calls:
            out["tool_calls"] = [c.to_json() for c in self.tool_calls]
        if self.cost_usd is not None:
            out["cost_usd"] = self.cost_usd
        return out

    @staticmethod
    def from_json(data: Mapping[str, Any], *, cached: bool = False) -> ChatResult:
        u = data.get("usage")
        return ChatResult(
            text=str(data.get("text", "")),
            usage=Usage(int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0))
            if isinstance(u, Mapping) else NOT_REPORTED,
            latency_ms=float(data.get("latency_ms") or 0.0),
            raw_model=data.get("raw_model"),
            cached=cached,
            tool_calls=calls_from_json(data.get("tool_calls")),
            cost_usd=float(c) if isinstance(c := data.get("cost_usd"), int | float) and not isinstance(c, bool) else None,
        )


# Error kinds. Strings rather than an enum so results files and the editor can show them as they are.
AUTH = "auth"  # 401/403
RATE_LIMIT = "rate_limit"  # 429
SERVER = "server"  # 5xx
BAD_REQUEST = "bad_request"  # other 4xx
NOT_FOUND = "not_found"  # 404 (unknown model or wrong base URL, most of the time)
TIMEOUT = "timeout"
CONNECTION = "connection"
BAD_RESPONSE = "bad_response"  # 2xx whose body is not what the API documents (malformed JSON, no choices)
BLOCKED = "blocked"  # the provider refused to answer (safety filter)
MISSING_KEY = "missing_key"
CONFIG = "config"  # bad model id, bad target settings
COMMAND = "command"  # a `cli` target's command failed


class ProviderError(Exception):
    """A failed provider call. `message` is safe to show and store: known secrets are scrubbed from it."""

    def __init__(
        self,
        kind: str,
        message: str,
        status: int | None = None,
        retryable: bool = False,
        *,
        retry_after: float | None = None,
        provider: str | None = None,
    ) -> None:
        # Scrub here, once, so that no code path (str, repr, traceback, results file) can leak a key that a
        # server echoed back in its error body.
        message = redact(message)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.provider = provider

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Survives pickling (a runner may use worker processes); args alone would lose kind and status.
        return (
            _rebuild_error,
            (self.kind, self.message, self.status, self.retryable, self.retry_after, self.provider),
        )

    def __repr__(self) -> str:
        return (
            f"ProviderError(kind={self.kind!r}, message={self.message!r}, status={self.status!r}, "
            f"retryable={self.retryable!r})"
        )

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "status": self.status, "retryable": self.retryable}


def _rebuild_error(
    kind: str, message: str, status: int | None, retryable: bool, retry_after: float | None, provider: str | None
) -> ProviderError:
    return ProviderError(kind, message, status, retryable, retry_after=retry_after, provider=provider)


# on_retry(attempt, delay, reason): attempt is the number of the retry about to happen (1 = first retry),
# delay the seconds waited before it, reason a short label: "429", "500", "timeout", "connection".
RetryCallback = Callable[[int, float, str], Any]


@runtime_checkable
class Provider(Protocol):
    """Anything that can answer a ChatRequest. `name` identifies it in messages and cache keys.

    `on_retry` is called before each retry the provider makes (the retry wrapper does; a provider that
    never retries accepts it and never calls it), so every provider is called the same way."""

    name: str

    async def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> ChatResult: ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """A provider with an embeddings endpoint. `model` overrides the provider's own embedding model."""

    name: str

    async def embed(self, texts: Sequence[str], *, model: str | None = None) -> list[list[float]]: ...


def cache_identity(provider: object) -> dict[str, Any]:
    """What distinguishes one provider's answers from another's, for cache keys. Never holds a secret."""
    ident = getattr(provider, "identity", None)
    if callable(ident):
        return dict(ident())
    return {"provider": getattr(provider, "name", type(provider).__name__)}
