"""After a restart the results state is the one before it: a server started afresh on the same file shows
the same lenses (only their age added) and the same status-bar state as the session that ran it, after
a run of one prompt and after a cancelled run (issue 29: the file lens lost its summary and the status
bar said "nothing scored")."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import ClientServerConfig

from ..fakeprovider import FakeProvider, Reply
from .session import CLIENTS, DEFAULT_OPTIONS, HANG_GUARD_S, SERVER, open_doc, start
from .test_run_lenses import (
    BLUEPRINT,
    RunClient,
    _plain,
    execute,
    lenses,
    make_run_client,
    run_to_end,
    titles,
)

AGE = re.compile(r" \((just now|\d+ min ago)\)")


async def session(root: Path, profile: str, run: dict[str, Any]) -> RunClient:
    client = await ClientServerConfig(server_command=SERVER, client_factory=make_run_client).start()
    assert isinstance(client, RunClient)
    await start(client, profile, root, options={**DEFAULT_OPTIONS, "run": run})
    return client


def shown(found: dict[int, list[str]]) -> dict[int, list[str]]:
    """The lenses without the age that results read back from disk carry."""
    return {line: [AGE.sub("", t) for t in ts] for line, ts in found.items()}


async def settled(client: RunClient, uri: str, expect_line: int) -> dict[int, list[str]]:
    async def wait() -> dict[int, list[str]]:
        while True:
            found = titles(await lenses(client, uri))
            if len(found.get(expect_line, [])) > 1 and len(found.get(0, [])) > 2:
                return found
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(wait(), HANG_GUARD_S)


def last_state(client: RunClient, uri: str) -> dict[str, Any]:
    return next(s for s in reversed(client.states) if s["uri"] == uri)


async def restarted(root: Path, profile: str, run: dict[str, Any], path: Path, text: str,
                    line: int) -> tuple[dict[int, list[str]], dict[str, Any]]:
    client = await session(root, profile, run)
    try:
        uri = open_doc(client, path, text)
        found = await settled(client, uri, line)
        return found, last_state(client, uri)
    finally:
        await client.shutdown_session()


@pytest.mark.parametrize("profile", CLIENTS, ids=["nvim-0.7", "vscode"])
async def test_one_prompt_run_then_a_restart(tmp_path: Path, profile: str):
    run = {"models": ["echo"], "output": "results", "cache": False}
    path = tmp_path / "one.weval.yml"
    path.write_text(BLUEPRINT)
    client = await session(tmp_path, profile, run)
    try:
        uri = open_doc(client, path, BLUEPRINT)
        await run_to_end(client, uri, "count")
        before = titles(await lenses(client, uri))
        state = last_state(client, uri)
    finally:
        await client.shutdown_session()
    assert before[8] == ["▶ Run", "✗ 0.00 echo[temp:0]"]
    assert before[0][2] == "last run: mean 0.00 · 0 pass · 1 fail"
    assert state["running"] is False and state["mean"] == 0.0

    after, state_after = await restarted(tmp_path, profile, run, path, BLUEPRINT, 8)
    assert after[0][2].startswith("last run (just now): ")  # read back from disk, with its age
    assert shown(after) == before
    assert state_after["mean"] == state["mean"] == 0.0  # the status bar: "mean 0.00", not "nothing scored"


@pytest.mark.parametrize("profile", CLIENTS, ids=["nvim-0.7", "vscode"])
async def test_cancelled_run_then_a_restart(tmp_path: Path, profile: str):
    with FakeProvider() as fake:
        fake.then(Reply.ok("hello"), *[Reply.hang(30) for _ in range(4)])
        run = {"output": "results", "cache": False, "concurrency": 1}
        text = f"""\
title: Slow
models:
  - id: local:fake
    url: {fake.url('/v1')}
    modelName: fake-1
    inherit: openai
---
- id: greet
  prompt: Say hello
  should:
    - $contains: hello
- id: count
  prompt: Count to three
  should:
    - $contains: three
"""
        path = tmp_path / "slow.weval.yml"
        path.write_text(text)
        client = await session(tmp_path, profile, run)
        try:
            uri = open_doc(client, path, text)
            assert _plain(await execute(client, "evalspec.run", uri=uri))["ok"] is True

            async def second_call() -> None:
                while len(fake.requests) < 2:
                    await asyncio.sleep(0.02)

            await asyncio.wait_for(second_call(), HANG_GUARD_S)
            assert _plain(await execute(client, "evalspec.cancelRun", uri=uri))["ok"] is True

            async def ended() -> None:
                while not client.finished:
                    client.finished_event.clear()
                    await client.finished_event.wait()

            await asyncio.wait_for(ended(), HANG_GUARD_S)
            before = titles(await lenses(client, uri))
            state = last_state(client, uri)
        finally:
            await client.shutdown_session()
        calls = len(fake.requests)
        assert before[7] == ["▶ Run", "✓ 1.00 local:fake[temp:0]"]
        assert before[11] == ["▶ Run", "⊘ cancelled local:fake[temp:0]"]
        assert before[0][2] == "cancelled: mean 1.00 · 1 pass · 0 fail"

        after, state_after = await restarted(tmp_path, profile, run, path, text, 11)
        assert shown(after) == before
        assert state_after["mean"] == state["mean"] == 1.0
        assert len(fake.requests) == calls  # nothing ran again
