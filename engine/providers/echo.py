"""The `echo` model: answers with the last user message, without any network.

For dry runs of a whole blueprint (does every prompt reach a model, do the deterministic checks run?)
and for tests. `echo` and `echo:<anything>` both work; the suffix only tells several echo models apart.
"""

from __future__ import annotations

import time
from typing import Any

from evalspec.providers.base import ChatRequest, ChatResult, RetryCallback, Usage


class EchoProvider:
    name = "echo"

    def __init__(self, model: str = "echo") -> None:
        self.model = model

    def identity(self) -> dict[str, Any]:
        return {"provider": "echo"}

    async def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> ChatResult:
        t0 = time.perf_counter()
        text = req.last_user_text()
        # Whitespace-separated words stand in for tokens, so token columns are not all zero in dry runs.
        n_in = sum(len(m.content.split()) for m in req.messages) + len((req.system or "").split())
        return ChatResult(
            text=text,
            usage=Usage(n_in, len(text.split())),
            latency_ms=(time.perf_counter() - t0) * 1000.0,
            raw_model=req.model or self.model,
        )

    async def aclose(self) -> None:
        pass

    def __repr__(self) -> str:
        return "EchoProvider()"
