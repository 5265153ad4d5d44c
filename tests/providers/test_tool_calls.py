"""Tool calls kept from chat answers (OpenAI, Anthropic, Gemini over the real clients) and read from a
`cli` target's output; odd shapes are dropped or kept as text, never a crash."""

from __future__ import annotations

import json
import pickle

import pytest
from fakeprovider import FakeProvider, Reply

from evalspec.providers import ChatRequest, provider_for_model
from evalspec.providers.base import ChatResult, ToolCall
from evalspec.providers.command import parse_answer
from evalspec.providers.tool_calls import (
    NO_INPUT,
    anthropic_tool_calls,
    calls_from_json,
    calls_from_messages,
    openai_tool_calls,
)

CALLS = [("search", {"q": "paris", "n": 2}), ("fetch", {"url": "https://x"})]


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest",
                                   "google:gemini-2.0-flash"])
async def test_real_clients_keep_tool_calls(fake: FakeProvider, client, env, model: str) -> None:
    fake.then(Reply.ok("calling tools", tool_calls=CALLS), Reply.ok("plain"))
    b = provider_for_model(model, client=client, env=env)
    res = await b.provider.chat(ChatRequest.of(b.model_name, "go"))
    assert [(c.tool, c.input) for c in res.tool_calls] == CALLS
    assert res.text == "calling tools"
    plain = await b.provider.chat(ChatRequest.of(b.model_name, "go"))
    assert plain.tool_calls == ()  # an answer without tool calls: an empty trace
    # Cached answers keep them (to_json / from_json).
    assert ChatResult.from_json(res.to_json()).tool_calls == res.tool_calls


def test_odd_shapes_are_dropped_or_kept_as_text() -> None:
    message = {"tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "{not json"}},
                              {"type": "function", "function": {"arguments": "{}"}},  # no name
                              "garbage", {"function": "x"},
                              {"id": "c1", "type": "function", "function": {"name": "b", "arguments": ""}}]}
    assert openai_tool_calls(message) == (ToolCall("a", "{not json"), ToolCall("b", {}, id="c1"))
    assert openai_tool_calls({"function_call": {"name": "legacy", "arguments": '{"x": 1}'}}) == (
        ToolCall("legacy", {"x": 1}),)
    assert openai_tool_calls(None) == ()
    assert anthropic_tool_calls([{"type": "tool_use", "name": "t", "input": {"a": 1}, "id": 7},
                                 {"type": "tool_use"}, {"type": "text", "text": "hi"}, 3]) == (ToolCall("t", {"a": 1}),)
    assert calls_from_messages([{"role": "assistant", "tool_calls": [
        {"tool": "x", "input": {"k": 1}, "output": "ok", "durationMs": 12},
        {"name": "y", "args": {"k": 2}, "duration_ms": -1}, {"input": 1}]}, "junk"]) == (
        ToolCall("x", {"k": 1}, "ok", 12.0), ToolCall("y", {"k": 2}))


def test_a_null_input_is_not_a_missing_one() -> None:
    """AgentV keeps a call's `input: null` as null (its trajectory's superset/subset checks throw on it) and
    writes no `input` for a call that gave none; both were None here, and rows wrote `input: null` for both."""
    null, missing = calls_from_json([{"tool": "a", "input": None}, {"tool": "b"}])
    assert null.input is None and missing.input is NO_INPUT
    assert null.to_json() == {"tool": "a", "input": None} and missing.to_json() == {"tool": "b"}
    assert calls_from_json([null.to_json(), missing.to_json()]) == (null, missing)  # results, cache, replay
    assert pickle.loads(pickle.dumps(missing)).input is NO_INPUT  # the run's worker processes
    assert openai_tool_calls({"tool_calls": [{"function": {"name": "f"}}, {"function": {"name": "g",
                                                                                        "arguments": "null"}}]}
                             ) == (ToolCall("f"), ToolCall("g", None))
    assert anthropic_tool_calls([{"type": "tool_use", "name": "t"}]) == (ToolCall("t"),)


def test_cli_output_forms() -> None:
    pretty = json.dumps({"output_messages": [{"role": "assistant", "content": "done",
                                              "tool_calls": [{"tool": "a", "input": {}}]}]}, indent=2)
    assert parse_answer(pretty) == ("done", (ToolCall("a", {}),))
    assert parse_answer('{"text": "t", "output": [{"role": "assistant", "tool_calls": [{"tool": "b"}]}]}') == (
        "t", (ToolCall("b"),))
    events = "\n".join(json.dumps(e) for e in [{"type": "tool_call", "tool": "a", "input": {"x": 1}},
                                               {"type": "tool_call", "name": "b", "args": {}},
                                               {"role": "assistant", "content": "final"}])
    assert parse_answer(events) == ("final", (ToolCall("a", {"x": 1}), ToolCall("b", {})))
    batch = "\n".join(json.dumps({"id": i, "text": f"answer {i}", "output": [
        {"role": "assistant", "tool_calls": [{"tool": f"t{i}"}]}]}) for i in ("x", "y"))
    assert parse_answer(batch, "y") == ("answer y", (ToolCall("ty"),))
    with pytest.raises(Exception, match="Batch output missing id 'z'"):
        parse_answer(batch, "z")
    assert parse_answer("plain text\n") == ("plain text", ())
    assert parse_answer("{broken json") == ("{broken json", ())
