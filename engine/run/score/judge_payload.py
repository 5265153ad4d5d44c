"""The snake_case JSON a code judge reads on stdin, field for field as AgentV v2.19 writes it.

Current names (`question`, `criteria`, `expected_output`, `reference_answer`, `answer`, `output`,
`input`, `trace`, `token_usage`, `cost_usd`, `duration_ms`, `config`, …) and, beside them, the names
older AgentV judges read (`expected_outcome`, `candidate_answer`, `input_messages`,
`expected_messages`, `output_messages`, `trace_summary`), so scripts written for either release work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...agentv.model import AgentvTest, ContentBlock, Message


def message_json(m: Message) -> dict[str, Any]:
    item: dict[str, Any] = {"role": m.role, "content": _content_json(m.content)}
    if m.tool_calls:
        item["tool_calls"] = [{"tool": c.tool, "input": c.input, "output": c.output,
                               **({"id": c.id} if c.id else {})} for c in m.tool_calls]
    if m.name:
        item["name"] = m.name
    if m.tool_call_id:
        item["tool_call_id"] = m.tool_call_id
    return item


def _content_json(content: Any) -> Any:
    if isinstance(content, list) and content and all(isinstance(b, ContentBlock) for b in content):
        return [{"type": b.type, "value": b.value} for b in content]
    return content


def trace_summary(trace: Sequence[Mapping[str, Any]] | None, token_usage: Mapping[str, Any] | None,
                  cost_usd: float | None, duration_ms: float | None, llm_calls: int | None) -> dict[str, Any]:
    """AgentV's older `trace_summary`: counts only."""
    names = [str(e.get("tool") or e.get("name")) for e in trace or () if e.get("tool") or e.get("name")]
    by_name: dict[str, int] = {}
    for n in names:
        by_name[n] = by_name.get(n, 0) + 1
    return {"event_count": len(trace or ()), "tool_names": sorted(by_name), "tool_calls_by_name": by_name,
            "error_count": sum(1 for e in trace or () if e.get("error")), "llm_call_count": llm_calls,
            "token_usage": dict(token_usage) if token_usage is not None else None, "cost_usd": cost_usd,
            "duration_ms": duration_ms}


def code_judge_payload(test: AgentvTest, answer: str, *, config: Mapping[str, Any] | None = None,
                       output_messages: Sequence[Mapping[str, Any]] | None = None,
                       trace: Sequence[Mapping[str, Any]] | None = None,
                       token_usage: Mapping[str, Any] | None = None, cost_usd: float | None = None,
                       duration_ms: float | None = None, llm_calls: int | None = None,
                       workspace_path: str | None = None, file_changes: str | None = None,
                       start_time: str | None = None, end_time: str | None = None) -> dict[str, Any]:
    from .agentv_judge import question_text

    expected = [message_json(m) for m in test.expected_messages]
    inputs = [message_json(m) for m in test.input_messages]
    output = list(output_messages) if output_messages is not None else [{"role": "assistant", "content": answer}]
    files = [str(b.resolved_path or b.value) for m in test.input_messages if isinstance(m.content, list)
             for b in m.content if isinstance(b, ContentBlock) and b.type == "file"]
    summary = trace_summary(trace, token_usage, cost_usd, duration_ms, llm_calls)
    return {
        "test_id": test.id,
        "question": question_text(test),
        "criteria": test.criteria or "",
        "expected_output": expected,
        "reference_answer": test.reference_answer,
        "answer": answer,
        "output": output,
        "input": inputs,
        "input_files": files,
        "trace": list(trace or ()),
        "token_usage": dict(token_usage) if token_usage is not None else None,
        "cost_usd": cost_usd,
        "duration_ms": duration_ms,
        "start_time": start_time,
        "end_time": end_time,
        "file_changes": file_changes,
        "workspace_path": workspace_path,
        "metadata": test.metadata or None,
        "config": dict(config) if config else None,
        # Names older judges read.
        "expected_outcome": test.criteria or "",
        "candidate_answer": answer,
        "input_messages": inputs,
        "expected_messages": expected,
        "output_messages": output,
        "guideline_files": [],
        "trace_summary": summary,
    }
