"""Run lenses over the protocol: run the suite or one prompt / test through the engine, see the results
in the lenses and the hover, cancel a run, plan a run. Models are `echo` (offline) or a custom model
pointing at a fake provider on 127.0.0.1, so the real HTTP client is used and nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

from tests.run_records import records_of

from ..fakeprovider import FakeProvider, Reply
from .session import (
    CLIENTS,
    DEFAULT_OPTIONS,
    HANG_GUARD_S,
    SERVER,
    RecordingClient,
    change,
    make_client,
    open_doc,
    position_of,
    start,
)

BLUEPRINT = """\
title: Lenses
models:
  - openai:gpt-4o-mini
---
- id: greet
  prompt: Say hello
  should:
    - $contains: hello
- id: count
  prompt: Count to three
  should:
    - $contains: four
"""

AGENTV = """\
# evalspec: agentv
name: lenses
tests:
  - id: hello
    input: say hello
    criteria: says hello
    assert:
      - type: contains
        value: hello
  - id: bye
    input: say hi
    criteria: says bye
    assert:
      - type: contains
        value: bye
"""


class RunClient(RecordingClient):
    def __init__(self) -> None:
        super().__init__()
        self.finished: list[dict[str, Any]] = []
        self.finished_event = asyncio.Event()
        self.states: list[dict[str, Any]] = []

    @property
    def refreshes(self) -> int:
        """How often the server asked for the lenses again (workspace/codeLens/refresh)."""
        return self.refreshed.count(lsp.WORKSPACE_CODE_LENS_REFRESH)


def make_run_client(client: RunClient | None = None) -> RunClient:
    client = client if client is not None else RunClient()
    make_client(client)

    @client.feature("evalspec/runFinished")
    def finished(params: Any) -> None:
        client.finished.append(_plain(params))
        client.finished_event.set()

    @client.feature("evalspec/runState")
    def state(params: Any) -> None:
        client.states.append(_plain(params))

    return client


def _plain(value: Any) -> Any:
    """A notification's params or a command's answer as plain JSON data (pygls hands the client
    named tuples for shapes it does not know)."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client),
                    params=CLIENTS, ids=["nvim-0.7", "vscode"])
async def client(lsp_client: RunClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={
        **DEFAULT_OPTIONS, "run": {"models": ["echo"], "output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


async def lenses(client: RunClient, uri: str) -> list[lsp.CodeLens]:
    result = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    return list(result or [])


def titles(found: list[lsp.CodeLens]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for lens in found:
        assert lens.command is not None
        out.setdefault(lens.range.start.line, []).append(lens.command.title)
    return out


async def execute(client: RunClient, command: str, **args: Any) -> Any:
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=command, arguments=[args]))


async def run_to_end(client: RunClient, uri: str, item: str | None = None) -> dict[str, Any]:
    before = len(client.finished)
    args: dict[str, Any] = {"uri": uri} if item is None else {"uri": uri, "item": item}
    answer = await execute(client, "evalspec.run", **args)
    assert _plain(answer)["ok"] is True, answer

    async def wait() -> dict[str, Any]:
        while len(client.finished) <= before:
            client.finished_event.clear()
            await client.finished_event.wait()
        return client.finished[before]

    return await asyncio.wait_for(wait(), HANG_GUARD_S)


async def test_lenses_run_the_suite_and_show_results_in_place(client: RunClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "lenses.weval.yml", BLUEPRINT)
    before = titles(await lenses(client, uri))
    assert before[0] == ["▶ Run all (2 prompts)", "Plan"]
    assert before[4] == ["▶ Run"] and before[8] == ["▶ Run"]
    run_lens = next(lens for lens in await lenses(client, uri) if lens.range.start.line == 8)
    assert run_lens.command.command == "evalspec.run"
    assert list(run_lens.command.arguments) == [{"uri": uri, "item": "count"}]

    done = await run_to_end(client, uri)
    assert done["interrupted"] is False and done["item"] is None
    assert done["summary"]["models"][0]["cells"] == 2
    # Clients that can be asked to fetch lenses again are asked; all are told the run's state.
    lens_caps = client.capabilities.workspace.code_lens
    assert (client.refreshes > 0) == bool(lens_caps and lens_caps.refresh_support)
    assert client.states[0]["running"] is True and client.states[-1]["running"] is False
    after = titles(await lenses(client, uri))
    # echo answers with the prompt: "Say hello" contains "hello"; "Count to three" lacks "four".
    assert after[4] == ["▶ Run", "✓ 1.00 echo[temp:0]"]
    assert after[8] == ["▶ Run", "✗ 0.00 echo[temp:0]"]
    assert after[0][:2] == ["▶ Run all (2 prompts)", "Plan"]
    assert after[0][2] == "last run: mean 0.50 · 1 pass · 1 fail"
    # The results are where the settings say, in the Weval layout, under the workspace folder.
    comparison = Path(done["files"][0])
    assert comparison.is_file() and comparison.is_relative_to(tmp_path / "results" / "live" / "blueprints")
    assert set(json.loads(comparison.read_text())["promptIds"]) == {"greet", "count"}
    # The suite's result lens opens that file (window/showDocument, or a message naming it).
    shown = _plain(await execute(client, "evalspec.showResults", uri=uri))
    assert shown["ok"] is True and shown["file"] == str(comparison)

    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=position_of(BLUEPRINT, "id: count")))
    assert hover is not None
    text = hover.contents.value
    assert text.startswith("**Last run** of `count`")  # the results first, then the field's documentation
    assert "**echo[temp:0]**: ✗ 0.00 (fail)" in text
    assert '- 0.00 Function: contains("four")' in text and "Count to three" in text
    assert "A stable identifier for the prompt" in text


async def test_one_prompt_runs_alone_and_edits_mark_results_as_older(client: RunClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "lenses.weval.yml", BLUEPRINT)
    done = await run_to_end(client, uri, "greet")
    assert done["item"] == "greet" and done["summary"]["models"][0]["cells"] == 1
    found = titles(await lenses(client, uri))
    assert found[4] == ["▶ Run", "✓ 1.00 echo[temp:0]"]
    assert found[8] == ["▶ Run"]  # not run
    # Change the greet prompt's text: its result no longer describes what is written.
    change(client, uri, 2, (5, 10), (5, 15), "howdy")  # "Say hello" -> "Say howdy"
    await asyncio.sleep(0.2)
    found = titles(await lenses(client, uri))
    assert found[4] == ["▶ Run", "✓ 1.00 echo[temp:0] (text changed since)"]


async def test_a_file_with_errors_is_not_run(client: RunClient, tmp_path: Path):
    broken = BLUEPRINT.replace("$contains: four", "$contian: four")
    uri = open_doc(client, tmp_path / "lenses.weval.yml", broken)
    found = titles(await lenses(client, uri))
    assert found[0] == ["✗ 1 error(s): fix them to run"]
    assert 4 not in found  # no run lens on the prompts
    answer = _plain(await execute(client, "evalspec.run", uri=uri))
    assert answer["ok"] is False and "1 error(s)" in answer["error"]
    assert not (tmp_path / "results").exists()


async def test_plan_says_what_a_run_would_do(client: RunClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "lenses.weval.yml", BLUEPRINT)
    answer = _plain(await execute(client, "evalspec.plan", uri=uri))
    assert answer["ok"] is True
    if "pending" in answer:  # past the request budget (a loaded machine): the plan comes as a message
        async def shown() -> None:
            while not any("2 prompt(s)" in m.message for m in client.messages):
                await asyncio.sleep(0.05)

        await asyncio.wait_for(shown(), HANG_GUARD_S)
    else:
        assert answer["plan"]["cells"] == 2 and answer["plan"]["effective_models"] == ["echo[temp:0]"]
    assert any("2 prompt(s)" in m.message for m in client.messages)
    assert not (tmp_path / "results").exists()  # planning runs nothing


async def test_agentv_tests_run_from_lenses(client: RunClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "lenses.eval.yaml", AGENTV)
    found = titles(await lenses(client, uri))
    assert found[1] == ["▶ Run all (2 tests)", "Plan"]
    assert found[3] == ["▶ Run"] and found[9] == ["▶ Run"]
    done = await run_to_end(client, uri)
    assert done["summary"]["kind"] == "agentv"
    found = titles(await lenses(client, uri))
    assert found[3] == ["▶ Run", "✓ 1.00 echo"]
    assert found[9] == ["▶ Run", "✗ 0.00 echo"]
    rows = [json.loads(line) for line in Path(done["files"][0]).read_text().splitlines()]
    assert [r["test_id"] for r in rows] == ["hello", "bye"]


# --- a real provider over HTTP ----------------------------------------------------------------------

def custom_blueprint(fake: FakeProvider) -> str:
    return BLUEPRINT.replace("  - openai:gpt-4o-mini\n",
                             f"  - id: local:fake\n    url: {fake.url('/v1')}\n    modelName: fake-1\n    inherit: openai\n")


async def test_a_run_calls_the_model_over_http(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        fake.answer = "hello there"
        await execute_settings(client, {"run": {"output": "results", "cache": False}})  # the file's models
        text = custom_blueprint(fake)
        uri = open_doc(client, tmp_path / "http.weval.yml", text)
        await run_to_end(client, uri)
        assert len(fake.requests) == 2
        assert {r.json["model"] for r in fake.requests} == {"fake-1"}
        found = titles(await lenses(client, uri))
        assert found[position_of(text, "- id: greet").line][1] == "✓ 1.00 local:fake[temp:0]"


async def test_cancelling_a_run_keeps_what_arrived(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        fake.then(Reply.ok("hello"), *[Reply.hang(30) for _ in range(40)])
        await execute_settings(client, {"run": {"output": "results", "cache": False, "concurrency": 1}})
        text = custom_blueprint(fake) + "".join(
            f"- id: extra{i}\n  prompt: more {i}\n  should:\n    - $contains: x\n" for i in range(5))
        uri = open_doc(client, tmp_path / "slow.weval.yml", text)
        answer = _plain(await execute(client, "evalspec.run", uri=uri))
        assert answer["ok"] is True

        async def second_call() -> None:
            while len(fake.requests) < 2:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(second_call(), HANG_GUARD_S)
        found = titles(await lenses(client, uri))
        assert found[0][0].startswith("■ Cancel run")
        again = _plain(await execute(client, "evalspec.run", uri=uri))
        assert again["ok"] is False and "already going on" in again["error"]
        # Both profiles show work-done progress, and it is cancellable.
        [(token, reports)] = list(client.progress_reports.items())
        assert isinstance(reports[0], lsp.WorkDoneProgressBegin) and reports[0].cancellable
        if client.profile.startswith("visual-studio-code"):  # the progress notification's Cancel button
            client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=token))
        else:  # the `■ Cancel run` lens
            assert found[0][0].startswith("■ Cancel run")
            assert _plain(await execute(client, "evalspec.cancelRun", uri=uri))["ok"] is True

        async def wait() -> dict[str, Any]:
            while not client.finished:
                client.finished_event.clear()
                await client.finished_event.wait()
            return client.finished[-1]

        done = await asyncio.wait_for(wait(), HANG_GUARD_S)
        assert done["interrupted"] is True
        for reports in client.progress_reports.values():
            assert isinstance(reports[-1], lsp.WorkDoneProgressEnd) and reports[-1].message == "cancelled"
        found = titles(await lenses(client, uri))
        assert found[0][0] == "▶ Run all (7 prompts)"
        greet = position_of(text, "- id: greet").line
        assert found[greet][1] == "✓ 1.00 local:fake[temp:0]"  # the answer that arrived is kept
        journals = list((tmp_path / "results").rglob("*.run.db"))
        assert journals and any(r["t"] == "gen" and "hello" in r["text"] for r in records_of(journals[0]))


async def execute_settings(client: RunClient, settings: dict[str, Any]) -> None:
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"evalspec": settings}))
    await asyncio.sleep(0.05)


async def test_the_run_progress_shows_a_provider_slowed_by_429s(client: RunClient, tmp_path: Path):
    with FakeProvider() as fake:
        fake.answer = "hello"
        # The first two calls: 429, everyone waits 0.6 s (two throttled answers of two: a storm, not an
        # isolated 429, so the concurrency halves too).
        fake.then(Reply.rate_limited(1, retry_after_ms=600), Reply.rate_limited(1, retry_after_ms=600))
        await execute_settings(client, {"run": {"output": "results", "cache": False, "concurrency": 4}})
        text = custom_blueprint(fake) + "".join(
            f"- id: extra{i}\n  prompt: more {i}\n  should:\n    - $contains: hello\n" for i in range(6))
        uri = open_doc(client, tmp_path / "limited.weval.yml", text)
        await run_to_end(client, uri)
        messages = [r.message for reports in client.progress_reports.values() for r in reports
                    if isinstance(r, lsp.WorkDoneProgressReport) and r.message]
        # The progress names the slowed provider, its concurrency and why, while it is below the 4 asked.
        assert any(re.search(r"; local [123]/4 \(429: waiting 0\.6 s, concurrency 4 → 2\)", m) for m in messages), \
            messages
        assert len(fake.requests) == 10  # 8 prompts, two retried: bounded


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client),
                    params=CLIENTS[1:], ids=["vscode"])
async def hurried(lsp_client: RunClient, request, tmp_path):
    """The shortest request budget the settings allow (50 ms), with the offline `echo` model."""
    await start(lsp_client, request.param, tmp_path, options={
        "debounceMs": 20, "requestBudgetMs": 50, "runCosts": False, "run": {"models": ["echo"], "output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


async def test_past_the_budget_a_run_answers_pending_and_starts_when_planned(hurried: RunClient, tmp_path: Path):
    n = 3000  # planning hashes every prompt: far more than 50 ms
    text = "title: Many\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: Say hello {i}\n  should:\n    - $contains: hello\n" for i in range(n))
    uri = open_doc(hurried, tmp_path / "many.weval.yml", text)

    async def published() -> None:
        while not any(p.uri == uri for p in hurried.published):
            hurried.published_event.clear()
            await hurried.published_event.wait()

    await asyncio.wait_for(published(), HANG_GUARD_S * 6)
    answer = _plain(await asyncio.wait_for(execute(hurried, "evalspec.run", uri=uri), HANG_GUARD_S))
    assert answer["ok"] is True and "planning many.weval.yml" in answer["pending"]
    # A second run while the first is being planned is refused, as while it runs.
    again = _plain(await asyncio.wait_for(execute(hurried, "evalspec.run", uri=uri), HANG_GUARD_S))
    assert again == {"ok": False, "error": "a run of this file is already going on; cancel it first"}

    async def finished() -> dict[str, Any]:
        while not hurried.finished:
            hurried.finished_event.clear()
            await hurried.finished_event.wait()
        return hurried.finished[0]

    done = await asyncio.wait_for(finished(), HANG_GUARD_S * 6)  # the run started once planned, and ended
    assert done["uri"] == uri and not done["interrupted"] and not done["cancelled"]
    assert [m["cells"] for m in done["summary"]["models"]] == [n]  # one model (echo), every prompt ran


async def test_a_results_folder_that_cannot_be_written_is_said_not_logged_as_a_bug(client: RunClient, tmp_path: Path):
    # The fifth attack run: `output` set to /dev/null (or a file, a FIFO, /proc/self) in the settings
    # made the run fail with a NotADirectoryError traceback logged as a server bug, and the user was
    # told only that the run was interrupted.
    (tmp_path / "taken").write_text("a file where the results folder would be\n")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"evalspec": {"run": {"models": ["echo"], "output": str(tmp_path / "taken")}}}))
    uri = open_doc(client, tmp_path / "lenses.weval.yml", BLUEPRINT)
    done = await run_to_end(client, uri)
    assert done["interrupted"] is True
    said = [m.message for m in client.messages if m.type == lsp.MessageType.Error]
    assert any("cannot write the results" in m and "Not a directory" in m for m in said), said
