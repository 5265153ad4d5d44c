"""AgentV's `mock` target: always answers with the configured `response` text, after an optional delay.
It reports no token usage (and the runner reads no duration from it), as AgentV's mock."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from evalspec.providers.base import NOT_REPORTED, ChatRequest, ChatResult, RetryCallback

# AgentV's default, so a mock target without `response` answers the same in both tools.
DEFAULT_MOCK_RESPONSE = (
    '{"answer":"Mock provider response. Configure targets.yaml to supply a custom value."}'
)


class MockProvider:
    def __init__(
        self,
        response: str | None = None,
        *,
        name: str = "mock",
        delay_ms: float = 0.0,
        delay_min_ms: float = 0.0,
        delay_max_ms: float = 0.0,
    ) -> None:
        self.name = name
        self.response = DEFAULT_MOCK_RESPONSE if response is None else str(response)
        self.delay_ms = float(delay_ms)
        self.delay_min_ms = float(delay_min_ms)
        self.delay_max_ms = float(delay_max_ms)

    def identity(self) -> dict[str, Any]:
        return {"provider": "mock", "response": self.response}

    def _delay(self) -> float:
        if self.delay_min_ms > 0 or self.delay_max_ms > 0:
            lo = max(0.0, self.delay_min_ms)
            return random.uniform(lo, max(lo, self.delay_max_ms)) / 1000.0
        return self.delay_ms / 1000.0

    async def chat(self, req: ChatRequest, *, on_retry: RetryCallback | None = None) -> ChatResult:
        t0 = time.perf_counter()
        delay = self._delay()
        if delay > 0:
            await asyncio.sleep(delay)
        return ChatResult(
            text=self.response,
            usage=NOT_REPORTED,  # AgentV's mock reports no usage, no cost, no duration
            latency_ms=(time.perf_counter() - t0) * 1000.0,
            raw_model="mock",
        )

    async def aclose(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"MockProvider(name={self.name!r})"
