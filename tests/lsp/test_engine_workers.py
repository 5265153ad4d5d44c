"""The engine worker processes (server/engine_workers.py, server/worker.py) over the real protocol.

A worker that dies (killed, or crashing on a text) or stops answering (busy with one job past the
timeout) is replaced by the spare, which has analysed the checked texts meanwhile; it gets the open
texts and the diagnostics come back, and the user is told. One past its memory bound is replaced between jobs. Requests past their budget ("still
checking") leave nothing behind: no job in flight, at most two analyses per document alive; a closed
document's memory goes back (read from /proc). Counted through `evalspec/workers`, never timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from .session import (
    CLIENTS,
    FAULTY_SERVER,
    HANG_GUARD_S,
    SERVER,
    RecordingClient,
    change,
    make_client,
    open_doc,
    published,
    start,
    still_checking_code,
)

BLUEPRINT = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  shuld: [x]\n"


def _config(command: list[str]) -> ClientServerConfig:
    return ClientServerConfig(server_command=command, client_factory=make_client)


@pytest_lsp.fixture(config=_config(FAULTY_SERVER), params=CLIENTS[1:], ids=["vscode"])
async def faulty(lsp_client: RecordingClient, request, tmp_path):
    """The faulty server's workers (faulty_server.py), the default budget, a 3 s worker timeout."""
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20, "workerTimeoutMs": 3000})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_config(SERVER), params=CLIENTS[1:], ids=["vscode"])
async def small_memory(lsp_client: RecordingClient, request, tmp_path):
    """Workers replaced past 64 MB (every one is past it once it has analysed something)."""
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20, "workerMemoryMb": 64,
                                                              "requestBudgetMs": 10_000})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_config(SERVER), params=CLIENTS[1:], ids=["vscode"])
async def edited(lsp_client: RecordingClient, request, tmp_path):
    """The real server, its defaults (two workers and the spare)."""
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_config(SERVER), params=CLIENTS[1:], ids=["vscode"])
async def hurried(lsp_client: RecordingClient, request, tmp_path):
    """The shortest request budget (50 ms), one worker: most requests on a large file are "still checking"."""
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20, "requestBudgetMs": 50,
                                                              "workers": 1})
    yield
    await lsp_client.shutdown_session()


async def state(client: RecordingClient) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async("evalspec/workers", None), HANG_GUARD_S)


async def worker_pids(client: RecordingClient) -> list[int]:
    return [w.pid for w in (await state(client)).workers]


async def until(check: Any, what: str) -> None:
    for _ in range(int(HANG_GUARD_S / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(what)


def hover_at(uri: str, line: int, character: int) -> lsp.HoverParams:
    return lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line, character))


async def test_a_killed_worker_is_replaced_and_the_diagnostics_come_back(faulty: RecordingClient,
                                                                         tmp_path: Path) -> None:
    client = faulty
    uri = open_doc(client, tmp_path / "a.weval.yml", BLUEPRINT)
    first = await published(client, uri, version=1)
    assert [d.code for d in first.diagnostics] == ["unknown-key"]
    before = await worker_pids(client)
    os.kill(before[0], signal.SIGKILL)  # the worker that has the document (the first one asked)
    again = await published(client, uri, version=1, where=lambda p: p is not first)
    assert [d.code for d in again.diagnostics] == ["unknown-key"]
    assert any("restarted" in m.message and "killed by signal 9" in m.message for m in client.messages)
    assert before[0] not in await worker_pids(client)
    # The replacement may still be loading what completion needs: "still checking" is asked again, as
    # an editor does on the next keystroke.
    for _ in range(int(HANG_GUARD_S / 0.2)):
        try:
            completion = await client.text_document_completion_async(lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(5, 2)))
            break
        except JsonRpcException as exc:
            assert exc.code == still_checking_code(client) and "still checking" in exc.message, exc
            await asyncio.sleep(0.2)
    assert completion is not None and any(i.label == "should" for i in completion.items)


async def test_a_text_that_crashes_the_worker_is_named_and_the_others_are_served(faulty: RecordingClient,
                                                                                 tmp_path: Path) -> None:
    client = faulty
    other = open_doc(client, tmp_path / "other.weval.yml", BLUEPRINT)
    await published(client, other, version=1)
    bad = open_doc(client, tmp_path / "bad.weval.yml", BLUEPRINT + "# CRASH\n")
    # Checked again once in a new worker (a worker may be killed from outside while a job is in
    # flight), then named when it stops that one too.
    await until(lambda: asyncio.sleep(0, any("bad.weval.yml" in m.message for m in client.messages)),
                "no message named the file")
    assert sum("restarted" in m.message for m in client.messages) == 2
    assert any("checked again after its next change" in m.message for m in client.messages)
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=other)))
    assert symbols
    change(client, bad, 2, (6, 0), (6, 7), "")  # the trigger removed: checked again
    assert [d.code for d in (await published(client, bad, version=2)).diagnostics] == ["unknown-key"]


async def test_a_worker_that_stops_answering_is_replaced(faulty: RecordingClient, tmp_path: Path) -> None:
    """200 hovers over a spot whose hover computes for 40 s: each is answered "still checking" within its
    budget; the worker is killed at its timeout (3 s here) and replaced, and nothing is left in flight."""
    client = faulty
    spin = open_doc(client, tmp_path / "spin.weval.yml", "# SPIN\n" + BLUEPRINT)
    await published(client, spin, version=1)
    answers = await asyncio.wait_for(asyncio.gather(
        *(client.text_document_hover_async(hover_at(spin, 5, 3)) for _ in range(200)), return_exceptions=True),
        HANG_GUARD_S)
    assert all(isinstance(a, JsonRpcException) and a.code == still_checking_code(client) for a in answers), \
        {(type(a).__name__, str(a)[:80]) for a in answers}
    await until(lambda: asyncio.sleep(0, any("has not answered" in m.message or "killed by signal 9" in m.message
                                              for m in client.messages)), "the stuck worker was not replaced")

    async def idle() -> bool:
        answer = await state(client)
        return bool(answer.jobs == 0 and answer.handlers == 1)

    await until(idle, "jobs or handlers were left behind")


async def test_a_worker_past_its_memory_bound_is_replaced_between_jobs(small_memory: RecordingClient,
                                                                        tmp_path: Path) -> None:
    client = small_memory
    uri = open_doc(client, tmp_path / "a.weval.yml", _prompts(3000))  # its analysis takes the worker past 64 MB
    await published(client, uri, version=1)
    before = set(await worker_pids(client))

    async def replaced() -> bool:
        return bool(set(await worker_pids(client)) - before)

    await until(replaced, "no worker was replaced")
    hover = await client.text_document_hover_async(hover_at(uri, 4, 3))  # the new worker analyses it again
    assert hover is not None and "prompt" in str(hover.contents)
    assert not any("restarted" in m.message for m in client.messages)  # a recycle is no failure


def _prompts(n: int) -> str:
    return "title: Big\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: Explain concept {i}.\n  should:\n    - mentions {i}\n" for i in range(n))


@pytest.mark.parametrize("edits", [60])
async def test_still_checking_answers_leave_at_most_two_analyses_alive(hurried: RecordingClient, tmp_path: Path,
                                                                        edits: int) -> None:
    """Typing into a large blueprint with the outline, folding, lenses, links, hover and completion asked
    after each edit, as VS Code asks for them: most answers are "still checking"; afterwards the worker
    holds the document's current analysis (and at most the one it replaced), and no job is in flight."""
    client = hurried
    text = _prompts(3000)
    uri = open_doc(client, tmp_path / "big.weval.yml", text)
    ident = lsp.TextDocumentIdentifier(uri=uri)
    still = 0
    for version in range(2, edits + 2):
        line = 4 + 4 * (version % 2000)
        change(client, uri, version, (line, 2), (line, 2), "x" if version % 2 else "")
        asks = [client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=ident)),
                client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=ident)),
                client.text_document_code_lens_async(lsp.CodeLensParams(text_document=ident)),
                client.text_document_document_link_async(lsp.DocumentLinkParams(text_document=ident)),
                client.text_document_hover_async(hover_at(uri, line, 3)),
                client.text_document_completion_async(lsp.CompletionParams(
                    text_document=ident, position=lsp.Position(line, 2)))]
        answers = await asyncio.wait_for(asyncio.gather(*asks, return_exceptions=True), HANG_GUARD_S)
        for a in answers:
            if isinstance(a, JsonRpcException):
                assert a.code in (still_checking_code(client), -32801), a  # still checking, or content modified
                still += 1
            else:
                assert not isinstance(a, BaseException), a
    assert still > 0  # the test saw what it is about

    async def settled() -> bool:
        answer = await state(client)
        return bool(answer.jobs == 0 and all(w.analyses <= 2 for w in answer.workers))

    await until(settled, "more than two analyses alive, or jobs left in flight")


async def test_the_spare_takes_over_a_killed_worker_with_the_analyses_made(edited: RecordingClient,
                                                                          tmp_path: Path) -> None:
    """The spare holds every checked text and analyses it while idle; when the document's worker is
    killed, the spare takes its place with that analysis (its process answers the document next), the
    diagnostics of the current version come back, and a new spare is started and given the text."""
    client = edited
    uri = open_doc(client, tmp_path / "a.weval.yml", _prompts(300))
    await published(client, uri, version=1)
    change(client, uri, 2, (5, 2), (5, 8), "shuld")  # `should` misspelt
    checked = await published(client, uri, version=2)
    assert [d.code for d in checked.diagnostics] == ["unknown-key"]

    async def spare_has(version: int, besides: set[int]) -> bool:
        spare = (await state(client)).spare
        return spare.pid not in besides and [uri, version] in spare.analysed

    await until(lambda: spare_has(2, set()), "the spare did not analyse the checked text")
    before = await state(client)
    holder = next(w.pid for w in before.workers if uri in w.assigned)
    os.kill(holder, signal.SIGKILL)
    again = await published(client, uri, version=2, where=lambda p: p is not checked)
    assert [d.code for d in again.diagnostics] == ["unknown-key"]
    after = await state(client)
    assert next(w.pid for w in after.workers if uri in w.assigned) == before.spare.pid
    hover = await client.text_document_hover_async(hover_at(uri, 4, 3))
    assert hover is not None and "prompt" in str(hover.contents)
    old = {w.pid for w in before.workers} | {before.spare.pid}
    await until(lambda: spare_has(2, old), "no new spare was given the text")


def _children_rss(server_pid: int) -> dict[int, int]:
    """Resident bytes of each process the server started, read from /proc (the server is not asked)."""
    pids = [int(c) for task in os.listdir(f"/proc/{server_pid}/task")
            for c in Path(f"/proc/{server_pid}/task/{task}/children").read_text().split()]
    sizes = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            sizes[pid] = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return sizes


async def test_a_closed_documents_memory_goes_back_to_the_system(edited: RecordingClient, tmp_path: Path) -> None:
    """Once a large blueprint is closed, without any other request, no process of the server keeps its
    memory: each is back within 16 MB of the largest worker's size before the file was opened (the
    worker that analysed it drops the analysis, and is replaced by a fresh process when the allocator
    keeps what was freed)."""
    client = edited
    first = await state(client)
    server_pid = int(Path(f"/proc/{first.workers[0].pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    loaded = max(_children_rss(server_pid).values())
    uri = open_doc(client, tmp_path / "big.weval.yml", _prompts(6000))
    await published(client, uri, version=1)
    await until(lambda: asyncio.sleep(0, max(_children_rss(server_pid).values()) > loaded + (32 << 20)),
                "no process grew with the document (the test would show nothing)")
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    await until(lambda: asyncio.sleep(0, max(_children_rss(server_pid).values()) < loaded + (16 << 20)),
                f"a process kept the closed document's memory: {_children_rss(server_pid)}, {loaded} before")


def test_a_document_moved_off_a_busy_worker_is_asked_again_not_answered_without_it() -> None:
    """A job waiting on a busy worker for a document that moves to another worker would be answered there
    after the `close` (as if the file had no analysis): it is "late" at the move, so it is asked again
    on the new worker (before: an unedited file never showed its earlier results, tests/nvim restart)."""
    import time

    from evalspec_lsp.engine_workers import LATE, EngineWorkers, Job, WorkerProcess

    class Pipe:
        def __init__(self) -> None:
            self.sent: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.sent.append(data)

    async def scenario() -> None:
        pool = EngineWorkers(["unused"], 2, texts=dict, on_restart=lambda why, job: None)
        pool.workers = [WorkerProcess(0), WorkerProcess(1)]
        loop = asyncio.get_running_loop()
        for w in pool.workers:
            w.ready.set_result(True)
            w.pipe = Pipe()  # type: ignore[assignment]
        busy, other = pool.workers
        long_ago = time.monotonic() - 10
        busy.heard = long_ago
        stuck = Job(1, "file:///other.yml", 1, loop.create_future(), sent=long_ago)
        waiting = Job(2, "file:///a.yml", 1, loop.create_future(), sent=long_ago)
        busy.jobs = {1: stuck, 2: waiting}
        busy.texts["file:///a.yml"] = 1
        pool.assigned.update({"file:///other.yml": 0, "file:///a.yml": 0})
        assert pool.worker_of("file:///a.yml") is other
        assert waiting.future.done() and waiting.future.result() == (LATE, None)
        assert not stuck.future.done()  # the other document's job stays where it runs
        assert "file:///a.yml" not in busy.texts and busy.pipe.sent  # type: ignore[union-attr]

    asyncio.run(scenario())
