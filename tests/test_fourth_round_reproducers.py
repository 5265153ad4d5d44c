"""The fourth attack run's reproducers (`bench/attack.py` areas replies, names, display, planted): JSON
nested past the standard parser in what models, judges, scripts and services send. Each raised
RecursionError: through the provider's parser it stopped `evalspec run` with a traceback (a tool call's
`arguments` 100,000 deep), elsewhere it made a check that could have been made "not scored" or a crash.
Now each is a ValueError where the input is malformed, or "not scored" with the reason where JavaScript
would have parsed it and evalspec cannot tell.
"""

from __future__ import annotations

import json
from pathlib import Path

from evalspec.cli import main
from evalspec.providers.command import parse_answer as command_answer
from evalspec.providers.http import _error_detail
from evalspec.providers.tool_calls import openai_tool_calls
from evalspec.run.score.agentv_judge import JudgeReplyError, parse_json_reply
from evalspec.run.score.code_judge import parse_answer as judge_answer
from evalspec.scoring.agentv_assertions import NotScored, evaluate_assertion
from evalspec.scoring.field_accuracy import score_fields
from evalspec.scoring.weval_points import PointContext, evaluate_point

from .fakeprovider import FakeProvider, Reply

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a": ' + DEEP + "}"


def test_a_tool_calls_arguments_nested_too_deeply_stay_text() -> None:
    [call] = openai_tool_calls({"tool_calls": [{"id": "1", "function": {"name": "f", "arguments": DEEP}}]})
    assert call.input == DEEP


def test_provider_error_bodies_command_output_and_script_answers_nested_too_deeply() -> None:
    assert _error_detail(DEEP_OBJECT.encode()).startswith('{"a": [[[')
    assert command_answer(DEEP_OBJECT) == (DEEP_OBJECT, ())
    outcome = judge_answer(DEEP_OBJECT.encode())
    assert outcome.error is not None and "not a JSON object" in outcome.error


def test_a_judge_reply_nested_too_deeply_is_a_bad_reply() -> None:
    try:
        parse_json_reply(DEEP_OBJECT)
    except JudgeReplyError as err:
        assert "not a JSON object" in str(err)
    else:
        raise AssertionError("no JudgeReplyError")


def test_answers_nested_too_deeply_in_json_checks() -> None:
    # JavaScript's JSON.parse takes it; evalspec's parser cannot: the check was not made.
    got = evaluate_assertion({"type": "is-json"}, DEEP)
    assert isinstance(got, NotScored) and "nested deeper" in got.reason
    # Weval's $is_json scans such a text without recursion, and answers as JSON.parse does
    # (tests/weval/data/point-vectors.jsonl holds the reference's answers for deep texts)
    point = evaluate_point("is_json", True, DEEP, PointContext(messages=[], model_id="m", prompt_id="p"))
    assert point.error is None and point.score == 1.0
    fields = score_fields({"type": "field-accuracy", "fields": [{"path": "a"}]}, DEEP_OBJECT,
                          [("assistant", {"a": 1})])
    assert fields.score == 0.0 and fields.misses


def test_a_run_whose_provider_sends_arguments_nested_too_deeply_finishes(tmp_path: Path) -> None:
    bp = tmp_path / "b.yml"
    bp.write_text("title: t\nmodels: [openai:candidate]\n---\n- id: p\n  prompt: hello\n  should: [$contains: hi]\n")
    body = {"choices": [{"message": {"content": "hi", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": DEEP}}]}}]}
    with FakeProvider() as fake:
        fake.then(Reply.raw(200, body))
        env = {"OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": fake.url("/v1")}
        import pytest

        with pytest.MonkeyPatch.context() as mp:
            for k, v in env.items():
                mp.setenv(k, v)
            assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--retries", "0", "--no-report"]) == 0
    [comparison] = (tmp_path / "out").rglob("*_comparison.json")
    assert json.loads(comparison.read_text())["allFinalAssistantResponses"]["p"]
