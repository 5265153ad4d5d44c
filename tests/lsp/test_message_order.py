"""The order read messages are handled in (server/message_order.py): a request about a document goes
ahead of other documents' notifications; a document's own messages, and barriers, keep their order.
And the analysis slots (documents.Slots): one a request waits for is started first."""

from __future__ import annotations

import asyncio
from typing import Any

from evalspec_lsp.documents import Job, Slots
from evalspec_lsp.message_order import MessageOrder


def _note(method: str, uri: str | None = None, **params: Any) -> dict[str, Any]:
    if uri is not None:
        params["textDocument"] = {"uri": uri}
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _req(msg_id: int, method: str, uri: str | None = None) -> dict[str, Any]:
    return {**_note(method, uri), "id": msg_id}


def _handled(*messages: dict[str, Any]) -> list[str]:
    order = MessageOrder()
    for m in messages:
        order.add(m, started=0.0, size=1)
    out = []
    while (item := order.next()) is not None:
        m = item.message
        label = m.get("method", "response").rsplit("/", 1)[-1]
        uri = (m.get("params") or {}).get("textDocument", {}).get("uri")
        out.append(f"{label} {uri}" if uri else label)
    assert order.count == 0 and order.size == 0 and order.documents_waiting == 0
    return out


def test_a_hover_goes_ahead_of_other_documents_opens_with_its_own_open() -> None:
    assert _handled(_note("textDocument/didOpen", "a"), _note("textDocument/didOpen", "b"),
                    _note("textDocument/didOpen", "c"), _req(1, "textDocument/hover", "b")) == [
        "didOpen b", "hover b", "didOpen a", "didOpen c"]


def test_a_documents_change_close_and_open_keep_their_order_before_its_request() -> None:
    assert _handled(_note("textDocument/didOpen", "x"), _note("textDocument/didOpen", "a"),
                    _note("textDocument/didChange", "x"), _note("textDocument/didClose", "x"),
                    _note("textDocument/didOpen", "x"), _note("textDocument/didChange", "a"),
                    _req(1, "textDocument/hover", "x"), _note("textDocument/didChange", "x")) == [
        "didOpen x", "didChange x", "didClose x", "didOpen x", "hover x", "didOpen a", "didChange a",
        "didChange x"]


def test_a_request_never_passes_a_barrier_or_another_request() -> None:
    assert _handled(_note("textDocument/didOpen", "a"), _note("workspace/didChangeConfiguration"),
                    _req(1, "textDocument/hover", "b")) == ["didOpen a", "didChangeConfiguration", "hover b"]
    # A command may act on any document: it waits for the notifications before it, and what follows
    # waits for it.
    assert _handled(_note("textDocument/didOpen", "a"), _req(1, "workspace/executeCommand"),
                    _req(2, "textDocument/hover", "b")) == ["didOpen a", "executeCommand", "hover b"]
    assert _handled(_note("textDocument/didOpen", "a"), _req(1, "textDocument/hover", "b"),
                    _req(2, "textDocument/completion", "c"), _note("textDocument/didOpen", "c")) == [
        "hover b", "completion c", "didOpen a", "didOpen c"]


def test_cancels_and_responses_go_ahead_with_the_requests() -> None:
    assert _handled(_note("textDocument/didOpen", "a"), _req(1, "textDocument/hover", "b"),
                    _note("$/cancelRequest", id=1), {"jsonrpc": "2.0", "id": "s1", "result": None},
                    _note("textDocument/didOpen", "b")) == [
        "hover b", "cancelRequest", "response", "didOpen a", "didOpen b"]


def test_what_went_ahead_says_how_many_it_passed() -> None:
    order = MessageOrder()
    for k in range(5):
        order.add(_note("textDocument/didOpen", f"d{k}"), started=0.0, size=10)
    order.add(_req(1, "textDocument/hover", "d4"), started=0.0, size=10)
    assert order.size == 60
    first, hover = order.next(), order.next()
    assert first is not None and first.message["params"]["textDocument"]["uri"] == "d4" and not first.passed
    assert hover is not None and hover.message["id"] == 1 and hover.passed == 4
    assert [order.next().passed for _ in range(4)] == [0, 0, 0, 0]  # type: ignore[union-attr]


def test_an_analysis_a_request_waits_for_gets_the_next_slot() -> None:
    async def main() -> list[int]:
        slots = Slots(1)
        loop = asyncio.get_running_loop()
        jobs = [Job(v, "", loop.create_future()) for v in range(5)]
        started: list[int] = []

        async def run(job: Job) -> None:
            await slots.acquire(job)
            started.append(job.version)
            await asyncio.sleep(0)
            slots.release()

        await slots.acquire(Job(-1, "", loop.create_future()))  # the one slot is taken
        tasks = [asyncio.create_task(run(job)) for job in jobs]
        await asyncio.sleep(0)  # all five queued, in order
        jobs[3].needed += 1
        slots.hurry(jobs[3])
        tasks[1].cancel()  # a queued one cancelled: skipped, its place not lost
        slots.release()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert slots.free == 1
        return started

    assert asyncio.run(main()) == [3, 0, 2, 4]
