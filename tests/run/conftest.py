"""Fixtures for runner tests: a judge-aware fake provider on 127.0.0.1, environments pointing at it,
and helpers to run the real CLI in-process or the runner API directly."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from fakeprovider import FakeProvider, Recorded, Reply  # noqa: E402

KEY = "sk-runner-test-0123456789abcdef"  # a fake key; tests assert it never leaks
CRITERION = re.compile(r"<CRITERION>\n(.*?)\n</CRITERION>", re.S)

Decide = Callable[[dict[str, Any]], "str | Reply | None"]


def criterion_of(req: dict[str, Any]) -> str | None:
    """The criterion a Weval judge request asks about, or None for any other request."""
    for m in req.get("messages") or []:
        found = CRITERION.search(str(m.get("content") or ""))
        if found:
            return found.group(1)
    return None


def classify(answer_class: str, reflection: str = "Judged by the fake.") -> str:
    return f"<reflection>{reflection}</reflection>\n<classification>{answer_class}</classification>"


class SmartFake(FakeProvider):
    """FakeProvider whose default answer can depend on the request (judges, key points, services)."""

    def __init__(self, decide: Decide | None = None) -> None:
        super().__init__()
        self.decide = decide

    def _respond(self, rec: Recorded, reply: Reply) -> tuple[int, bytes, dict[str, str]]:
        if reply.action == "answer" and reply.text is None and self.decide is not None:
            try:
                req = json.loads(rec.body or b"{}")
            except ValueError:
                req = {}
            if rec.path.endswith("/score"):  # a $call service
                out = self.decide({"path": rec.path, **req})
                return 200, (out or "{}").encode(), {}
            decided = self.decide(req)
            if isinstance(decided, Reply):  # e.g. Reply.ok(text, tool_calls=[...])
                reply = decided
            elif decided is not None:
                reply = Reply.ok(decided)
        return super()._respond(rec, reply)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    def judge_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.chat_requests() if criterion_of(r) is not None]


@pytest.fixture
def smart() -> Iterator[SmartFake]:
    with SmartFake() as server:
        yield server


def serving(smart: SmartFake, monkeypatch: pytest.MonkeyPatch, decide: Decide) -> SmartFake:
    """The fake answering with `decide`, every provider of this process's environment pointed at it: the
    body of a test module's `fake` fixture for runs through `evalspec.cli.main`."""
    smart.decide = decide
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    return smart


def env_for(fake: FakeProvider, **extra: str) -> dict[str, str]:
    """Every provider pointed at the fake server, OpenAI with a key, nothing else."""
    env = {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": fake.url("/v1"),
        "OPENROUTER_BASE_URL": fake.url("/v1"),
        "ANTHROPIC_BASE_URL": fake.url(""),
        "PATH": "/usr/bin:/bin",
    }
    env.update(extra)
    return env


def run_events(path: Path, options: Any) -> list[Any]:
    """Plan and run a file through the runner API; every event, in order."""
    from evalspec.analysis import analyze_file
    from evalspec.run.runner import plan_for, run

    analysis = analyze_file(path)
    assert not analysis.errors, [f.message for f in analysis.errors]
    plan = plan_for(analysis, options)

    async def collect() -> list[Any]:
        return [e async for e in run(plan, options)]

    return asyncio.run(collect())


def options(tmp_path: Path, env: dict[str, str], **kw: Any) -> Any:
    from evalspec.run.options import RunOptions

    kw.setdefault("output", tmp_path / "out")
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 5.0)
    return RunOptions(env=env, **kw)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def comparison(out: Path) -> dict[str, Any]:
    files = sorted(out.glob("live/blueprints/*/*_comparison.json"))
    assert files, f"no comparison file under {out}"
    return json.loads(files[-1].read_text(encoding="utf-8"))


def cost_file(out: Path) -> dict[str, Any]:
    """What the run paid: the cost file beside its newest results (run/cost/cost_file.py)."""
    files = sorted(out.rglob("*_cost.json"))
    assert files, f"no cost file under {out}"
    return json.loads(files[-1].read_text(encoding="utf-8"))


def of_type(events: list[Any], name: str) -> list[Any]:
    return [e for e in events if e.type == name]


# AgentV targets both AgentV test files use: a candidate model that the judge `grader` grades.
AGENTV_TARGETS = """targets:
  - name: default
    provider: openai
    model: candidate
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: grader
  - name: grader
    provider: openai
    model: grader-model
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
"""
