"""What a run measured about one answer: usage, duration, cost, the trace, the workspace.

Usage, duration and cost are what the target reports, as AgentV reads them (None: not reported, and a
metric check then scores 0, "no … data"). The assertions the registry puts in the trace stage
(`registry.stages.Stage.TRACE`: the scorer of each reads `metrics()`) score these, code judges get them
in their payload. A chat target reports no cost (AgentV's AI SDK providers give none): the price-table
cost evalspec computes for it is what the run spent (`cost_usd` in the row, `--max-cost`), never a
score's input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...providers.base import ToolCall
from ...scoring.agentv_assertions import RunMetrics, TokenUsage


@dataclass
class Measured:
    answer: str
    usage: tuple[int, int] | None = None  # (input, output) tokens as the provider reported them
    duration_ms: float | None = None
    model: str | None = None  # the model the provider says answered
    cost_usd: float | None = None  # None: no price for the model, or (priced=False) none reported
    priced: bool = True  # the cost comes from the price table; False: from the target's report (mock, cli)

    @property
    def reported_cost(self) -> float | None:
        """The cost the target reported (what AgentV's checks read): None for a priced chat call."""
        return None if self.priced else self.cost_usd
    trace: list[dict[str, Any]] = field(default_factory=list)  # tool calls, as trace events
    calls: tuple[ToolCall, ...] = ()  # the same tool calls, for tool-trajectory (RunMetrics.trace)
    output_messages: list[dict[str, Any]] | None = None
    llm_calls: int = 1  # a chat target answers with one call
    workspace: str | None = None  # the test's workspace folder, when it has one
    file_changes: str | None = None  # the agent's changes to its workspace, as a diff (workspace/lifecycle.py)
    started: Any = None  # datetimes (made text only for a code judge's payload)
    ended: Any = None

    def token_usage(self) -> dict[str, int] | None:
        if self.usage is None:
            return None
        return {"input": self.usage[0], "output": self.usage[1], "total": self.usage[0] + self.usage[1]}

    def metrics(self) -> RunMetrics:
        names = [str(e.get("tool") or e.get("name")) for e in self.trace if e.get("tool") or e.get("name")
                 ] if self.trace else []
        usage = TokenUsage(self.usage[0], self.usage[1]) if self.usage is not None else None
        return RunMetrics(duration_ms=self.duration_ms, cost_usd=self.reported_cost, token_usage=usage,
                          tool_calls=len(names), llm_calls=self.llm_calls, tool_names=names, trace=self.calls)

    def payload_fields(self) -> dict[str, Any]:
        """The measured part of a code judge's stdin payload (judge_payload.code_judge_payload)."""
        return {"output_messages": self.output_messages, "trace": self.trace, "token_usage": self.token_usage(),
                "cost_usd": self.reported_cost, "duration_ms": self.duration_ms, "llm_calls": self.llm_calls,
                "workspace_path": self.workspace, "file_changes": self.file_changes, "start_time": _iso(self.started), "end_time": _iso(self.ended)}


def _iso(value: Any) -> str | None:
    from .files import iso_timestamp

    return iso_timestamp(value) if value is not None and not isinstance(value, str) else value
