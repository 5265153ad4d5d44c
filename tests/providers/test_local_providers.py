"""Offline providers: echo, AgentV mock and cli targets."""

from __future__ import annotations

import shlex
import sys

import pytest

from evalspec.providers import ChatMessage, ChatRequest, provider_for_model, provider_from_target
from evalspec.providers.base import COMMAND, CONFIG, TIMEOUT, ProviderError
from evalspec.providers.mock import DEFAULT_MOCK_RESPONSE

PY = shlex.quote(sys.executable)


async def test_echo_answers_with_the_last_user_message() -> None:
    b = provider_for_model("echo", env={})
    req = ChatRequest(
        model=b.model_name,
        messages=(ChatMessage("user", "first"), ChatMessage("assistant", "ok"), ChatMessage("user", "last one")),
    )
    res = await b.provider.chat(req)
    assert res.text == "last one"
    assert res.usage.output_tokens == 2
    assert provider_for_model("echo:a", env={}).model_id == "echo:a"


async def test_mock_target() -> None:
    p = provider_from_target({"name": "m", "provider": "mock", "response": "canned"})
    assert (await p.chat(ChatRequest.of("", "anything"))).text == "canned"
    p = provider_from_target({"name": "m", "provider": "mock", "delay_ms": 20})
    res = await p.chat(ChatRequest.of("", "x"))
    assert res.text == DEFAULT_MOCK_RESPONSE and res.latency_ms >= 15


def _cli(template: str, **settings) -> object:
    return provider_from_target({"name": "agent", "provider": "cli", "command_template": template, **settings})


async def test_cli_prompt_is_one_argument_never_a_shell_command(tmp_path) -> None:
    p = _cli(f"{PY} -c 'import sys; print(repr(sys.argv[1:]))' --q={{PROMPT}} tail")
    prompt = "hi there; touch pwned && $(echo x) `y`"
    res = await p.chat(ChatRequest.of("", prompt))
    assert res.text == repr([f"--q={prompt}", "tail"])
    assert not (tmp_path / "pwned").exists()


async def test_cli_prompt_file_and_output_file() -> None:
    script = "import sys; t=open(sys.argv[1]).read(); open(sys.argv[2],'w').write(t.upper())"
    p = _cli(f"{PY} -c {shlex.quote(script)} {{PROMPT_FILE}} {{OUTPUT_FILE}}")
    res = await p.chat(ChatRequest.of("", "write me"))
    assert res.text == "WRITE ME"


async def test_cli_json_answer_is_unwrapped_and_multi_turn_prompt_rendered() -> None:
    script = "import json,sys; print(json.dumps({'text': sys.argv[1]}))"
    p = _cli(f"{PY} -c {shlex.quote(script)} {{PROMPT}}")
    req = ChatRequest(model="", messages=(ChatMessage("user", "a"), ChatMessage("user", "b")), system="s")
    assert (await p.chat(req)).text == "system: s\n\nuser: a\n\nuser: b"


async def test_cli_failure_and_timeout() -> None:
    p = _cli(f"{PY} -c 'import sys; sys.stderr.write(\"boom\"); sys.exit(3)'")
    with pytest.raises(ProviderError) as e:
        await p.chat(ChatRequest.of("", "x"))
    assert e.value.kind == COMMAND and "code 3" in e.value.message and "boom" in e.value.message

    p = _cli(f"{PY} -c 'import time; time.sleep(30)'", timeout_seconds=0.3)
    with pytest.raises(ProviderError) as e:
        await p.chat(ChatRequest.of("", "x"))
    assert e.value.kind == TIMEOUT


async def test_cli_missing_output_file() -> None:
    p = _cli(f"{PY} -c 'pass' {{OUTPUT_FILE}}")
    with pytest.raises(ProviderError, match="OUTPUT_FILE"):
        await p.chat(ChatRequest.of("", "x"))


def test_cli_configuration_errors() -> None:
    with pytest.raises(ProviderError, match="GUIDELINES") as e:
        _cli("agent {PROMPT} {GUIDELINES}")
    assert e.value.kind == CONFIG
    with pytest.raises(ProviderError, match="command_template"):
        provider_from_target({"name": "agent", "provider": "cli"})


async def test_cli_command_not_found() -> None:
    p = _cli("definitely-not-a-command-evalspec {PROMPT}")
    with pytest.raises(ProviderError) as e:
        await p.chat(ChatRequest.of("", "x"))
    assert e.value.kind == CONFIG and "not found" in e.value.message


async def test_cli_cwd_is_relative_to_base_dir(tmp_path) -> None:
    (tmp_path / "work").mkdir()
    p = provider_from_target(
        {"name": "a", "provider": "cli", "command_template": f"{PY} -c 'import os; print(os.getcwd())'",
         "cwd": "work"},
        base_dir=tmp_path,
    )
    assert (await p.chat(ChatRequest.of("", "x"))).text == str(tmp_path / "work")


async def test_every_provider_takes_on_retry_alike() -> None:
    calls: list[tuple[int, float, str]] = []
    providers = [
        provider_for_model("echo", env={}).provider,
        provider_from_target({"name": "m", "provider": "mock", "response": "r"}),
        _cli(f"{PY} -c 'print(1)'"),
    ]
    for p in providers:
        res = await p.chat(ChatRequest.of("", "x"), on_retry=lambda *a: calls.append(a))
        assert res.text
    assert calls == []
