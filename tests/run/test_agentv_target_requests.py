"""What an AgentV target call sends, against AgentV v2.19.0's own requests (data/agentv_target_requests.json:
the bodies AgentV's runEvaluation sent to azure, anthropic and gemini targets, recorded under bun 1.3.3).

AgentV's ai-sdk providers (azure, anthropic, gemini) send "You are a careful assistant. Follow all provided
instructions and do not fabricate results." as the system prompt when the test has no system message of its
own (or only empty ones); a test's own system message replaces it. evalspec's OpenAI-compatible targets (no
AgentV kind: the same chat API as azure) get it alike; mock and cli targets get none (AgentV's neither)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import KEY, SmartFake, env_for, options, run_events, write

DATA = json.loads((Path(__file__).parent / "data" / "agentv_target_requests.json").read_text(encoding="utf-8"))
DEFAULT = "You are a careful assistant. Follow all provided instructions and do not fabricate results."


def _target(provider: str, fake: SmartFake) -> dict[str, Any]:
    base = {"name": "default", "provider": provider, "api_key": KEY}
    if provider == "azure":
        return {**base, "endpoint": fake.url(""), "deployment": "dep"}
    if provider == "anthropic":
        return {**base, "model": "claude-sonnet-4-5", "endpoint": fake.url("")}
    if provider == "gemini":
        return {**base, "model": "gemini-2.5-flash", "endpoint": fake.url("")}
    return {**base, "model": "candidate", "endpoint": fake.url("/v1")}  # openai


def _conversation(body: dict[str, Any]) -> tuple[str | None, list[tuple[str, str]]]:
    """(system prompt, [(role, text)]) of a Chat Completions, Messages or generateContent body."""
    if "contents" in body:  # Gemini
        instruction = body.get("systemInstruction")
        turns = [("assistant" if c["role"] == "model" else c["role"], "".join(p["text"] for p in c["parts"]))
                 for c in body["contents"]]
        return ("".join(p["text"] for p in instruction["parts"]) if instruction else None), turns

    def text(content: Any) -> str:
        return content if isinstance(content, str) else "".join(b["text"] for b in content)

    messages = body["messages"]
    if messages and messages[0]["role"] in ("system", "developer"):  # Chat Completions (azure: `developer`)
        system: str | None = text(messages[0]["content"])
        messages = messages[1:]
    else:  # Messages API
        system = text(body["system"]) if body.get("system") is not None else None
    return system, [(m["role"], text(m["content"])) for m in messages]


def _sent(tmp_path: Path, smart: SmartFake, provider: str, test_input: Any) -> dict[str, Any]:
    smart.decide = lambda req: "The answer."
    write(tmp_path / ".agentv" / "targets.yaml", json.dumps({"targets": [_target(provider, smart)]}))
    suite = write(tmp_path / "evals" / "a.eval.yaml", json.dumps(
        {"description": "d", "tests": [{"id": "t1", "input": test_input,
                                        "assert": [{"type": "contains", "value": "answer"}]}]}))
    run_events(suite, options(tmp_path, env_for(smart)))
    (rec,) = [r for r in smart.requests if r.method == "POST"]
    return rec.json


@pytest.mark.parametrize("case", sorted(DATA["cases"]))
def test_a_target_is_sent_agentvs_system_prompt(tmp_path: Path, smart: SmartFake, case: str) -> None:
    want = DATA["cases"][case]
    body = _sent(tmp_path, smart, want["target"]["provider"], want["input"])
    assert _conversation(body) == _conversation(want["body"])  # before: no system prompt without the test's


@pytest.mark.parametrize(("test_input", "system"), [("What is 2+2?", DEFAULT),
                                                    ([{"role": "system", "content": "Be terse."},
                                                      {"role": "user", "content": "What is 2+2?"}], "Be terse.")])
def test_an_openai_target_gets_it_as_azure_does(tmp_path: Path, smart: SmartFake, test_input: Any,
                                                system: str) -> None:
    body = _sent(tmp_path, smart, "openai", test_input)
    assert _conversation(body) == (system, [("user", "What is 2+2?")])


def test_a_mock_target_gets_none(tmp_path: Path) -> None:
    from evalspec.run.generate.agentv_messages import DEFAULT_SYSTEM_PROMPT, target_system

    assert DEFAULT_SYSTEM_PROMPT == DEFAULT
    assert (target_system(None, "mock"), target_system(None, "cli"), target_system("s", "azure"),
            target_system(None, "azure"), target_system(None, None)) == (None, None, "s", DEFAULT, DEFAULT)
