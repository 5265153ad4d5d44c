"""An editor's run is a process of its own (`python -m evalspec.ide.run_process`), over the protocol: the
LSP process never loads the runner; cancel stops that process, which writes what finished and marks
the run cancelled; a killed run process loses no finished call; the server gone, its run stops too.
The process is found through the server's `evalspec/workers` answer and /proc, never timed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest_lsp
from pytest_lsp import ClientServerConfig

from tests.run_records import databases, records_of

from ..fakeprovider import FakeProvider, Reply
from .session import CLIENTS, DEFAULT_OPTIONS, HANG_GUARD_S, SERVER, open_doc, position_of, start
from .test_run_lenses import (
    RunClient,
    _plain,
    custom_blueprint,
    execute,
    execute_settings,
    lenses,
    make_run_client,
    run_to_end,
    titles,
)

# Modules of the engine that only a run, or an analysis, loads: none of them in the LSP process.
RUN_ONLY = ("evalspec.run.runner", "evalspec.run.journal", "evalspec.run.generate", "evalspec.run.score",
            "evalspec.run.plan.plan_for", "evalspec.providers.http", "evalspec.analysis", "evalspec.ide.run_history")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client),
                    params=CLIENTS[1:], ids=["vscode"])
async def client(lsp_client: RunClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={
        **DEFAULT_OPTIONS, "run": {"models": ["echo"], "output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


KEY = "sk-from-the-servers-environment"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client,
                                              server_env={**os.environ, "EVALSPEC_TEST_KEY": KEY}))
async def keyed(lsp_client: RunClient, tmp_path):
    """A server started with an API key in its environment (never in the settings)."""
    await start(lsp_client, CLIENTS[1], tmp_path, options={
        **DEFAULT_OPTIONS, "run": {"output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


async def server_state(client: RunClient) -> dict[str, Any]:
    return _plain(await asyncio.wait_for(client.protocol.send_request_async("evalspec/workers", None), HANG_GUARD_S))


def alive(pid: int) -> bool:
    """Whether process `pid` is there and not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


async def until(check: Any, what: str) -> None:
    async def poll() -> None:
        while not await check():
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), HANG_GUARD_S)
    except TimeoutError:
        raise AssertionError(f"never: {what}") from None


async def slow_run(client: RunClient, fake: FakeProvider, tmp_path: Path) -> tuple[str, str, int]:
    """A run whose first call is answered and every later one hangs: (uri, text, the run's pid) once the
    first result is in."""
    fake.then(Reply.ok("hello"), *[Reply.hang(30) for _ in range(40)])
    await execute_settings(client, {"run": {"output": "results", "cache": False, "concurrency": 1}})
    text = custom_blueprint(fake) + "".join(
        f"- id: extra{i}\n  prompt: more {i}\n  should:\n    - $contains: x\n" for i in range(3))
    uri = open_doc(client, tmp_path / "slow.weval.yml", text)
    assert _plain(await execute(client, "evalspec.run", uri=uri))["ok"] is True
    greet = position_of(text, "- id: greet").line

    async def greeted() -> bool:
        return len(fake.requests) >= 2 and any("✓" in t for t in titles(await lenses(client, uri)).get(greet, []))

    await until(greeted, "the first result in the lens")
    [running] = (await server_state(client))["runProcesses"]
    assert running["uri"] == uri
    pid = running["pid"]
    assert pid != os.getpid() and alive(pid)
    return uri, text, pid


async def finished(client: RunClient) -> dict[str, Any]:
    async def wait() -> dict[str, Any]:
        while not client.finished:
            client.finished_event.clear()
            await client.finished_event.wait()
        return client.finished[-1]

    return await asyncio.wait_for(wait(), HANG_GUARD_S)


async def test_the_lsp_process_runs_nothing_itself(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        fake.answer = "hello there"
        await execute_settings(client, {"run": {"output": "results", "cache": False}})
        uri = open_doc(client, tmp_path / "http.weval.yml", custom_blueprint(fake))
        done = await run_to_end(client, uri)
        assert len(fake.requests) == 2 and done["summary"]["models"][0]["cells"] == 2
    state = await server_state(client)
    assert state["runProcesses"] == []
    loaded = state["modules"]
    # The board the run's events feed, and the server's end of the run's process: the list is the real one.
    assert "evalspec.ide.runs" in loaded and "evalspec.ide.run_process" in loaded
    assert not [m for m in loaded if m.startswith(RUN_ONLY)], loaded


async def test_the_run_process_calls_with_the_key_of_the_servers_environment(keyed: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        fake.answer = "hello there"
        text = custom_blueprint(fake).replace("    inherit: openai\n", "    inherit: openai\n    apiKeyEnv: EVALSPEC_TEST_KEY\n")
        uri = open_doc(keyed, tmp_path / "keyed.weval.yml", text)
        await run_to_end(keyed, uri)
    assert fake.requests and {r.headers.get("authorization") for r in fake.requests} == {f"Bearer {KEY}"}


async def test_cancel_stops_the_run_process_which_writes_what_finished(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        uri, text, pid = await slow_run(client, fake, tmp_path)
        assert _plain(await execute(client, "evalspec.cancelRun", uri=uri))["ok"] is True
        done = await finished(client)

        async def gone() -> bool:
            return not alive(pid)

        await until(gone, "the run process ended")
    assert done["cancelled"] is True and done["interrupted"] is True
    assert (await server_state(client))["runProcesses"] == []
    # The run process wrote the results of what finished, and its database says the run was cancelled,
    # with the call in flight (`count`), so a later session shows it as the lens does now.
    data = json.loads(Path(done["files"][0]).read_text())
    assert data["allFinalAssistantResponses"]["greet"] == {"local:fake[temp:0]": "hello"}
    [database] = databases(tmp_path / "results")
    stops = [r for r in records_of(database) if r["t"] == "stop"]
    assert len(stops) == 1 and stops[0]["why"] == "cancelled" and stops[0].get("cells"), stops
    count = position_of(text, "- id: count").line
    assert titles(await lenses(client, uri))[count][1] == "⊘ cancelled local:fake[temp:0]"


async def test_a_killed_run_process_loses_no_finished_call(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        uri, text, pid = await slow_run(client, fake, tmp_path)
        os.kill(pid, signal.SIGKILL)  # the out-of-memory killer, a user's `kill -9`
        done = await finished(client)
    assert done["interrupted"] is True and done["cancelled"] is False
    assert any("before the run did" in m.message for m in client.log_messages), "the user is told"
    greet = position_of(text, "- id: greet").line
    found = titles(await lenses(client, uri))
    assert found[greet][1] == "✓ 1.00 local:fake[temp:0]"  # what arrived stays in the editor
    assert not found[0][0].startswith("■")  # and the run is over: Run all again
    [database] = databases(tmp_path / "results")
    assert any(r["t"] == "gen" and r["text"] == "hello" for r in records_of(database))  # and on disk


async def test_the_server_gone_its_run_stops_and_keeps_what_finished(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        _, _, pid = await slow_run(client, fake, tmp_path)
        server = client._server
        assert server is not None
        server.kill()  # the server crashed: the run process sees its stdin end
        await server.wait()
        client.capabilities = None  # the session is over: the fixture has nothing to shut down

        async def gone() -> bool:
            return not alive(pid)

        await until(gone, "the run process ended after the server")
    [database] = databases(tmp_path / "results")
    found = records_of(database)
    assert any(r["t"] == "gen" and r["text"] == "hello" for r in found)
    assert any(r["t"] == "stop" and r["why"] == "cancelled" for r in found)
