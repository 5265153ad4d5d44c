"""Requests past their budget leave no work behind (issue 15): identical requests share one computation,
and a computation no request waits for any more stops at its next yield point.

An editor asks for a hover on every move of the mouse. Over a spot whose hover computes for long (the
faulty server's hover computes for 40 s in a text holding SPIN, passing the engine's yield points as a
real computation does), each request was answered "still checking" at the budget and left its own
computation running: 200 of them ran 200 worker threads for 40 s. Counted, not timed: the server's
`evalspec/workers` request says how many jobs run and how many threads there are.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from .session import (
    CLIENTS,
    FAULTY_SERVER,
    HANG_GUARD_S,
    RecordingClient,
    make_client,
    open_doc,
    published,
    start,
)

BLUEPRINT = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  shuld: [x]\n"
# 4 MB on one line that is quick to check (one prompt), with SPIN for the faulty hover
BIG = "# SPIN\ntitle: T\nmodels: [openai:gpt-4o-mini]\n---\n- prompt: \"" + "word " * 830_000 + "\"\n"
HOVERS = 200


@pytest_lsp.fixture(config=ClientServerConfig(server_command=FAULTY_SERVER, client_factory=make_client),
                    params=CLIENTS[1:], ids=["vscode"])
async def slow_hover_client(lsp_client: RecordingClient, request, tmp_path):
    """The faulty server with the default request budget (a request waits at most 0.4 s)."""
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20})
    yield
    await lsp_client.shutdown_session()


async def workers_state(client: RecordingClient) -> dict[str, Any]:
    answer = await asyncio.wait_for(client.protocol.send_request_async("evalspec/workers", None), HANG_GUARD_S)
    return {k: getattr(answer, k) for k in ("running", "foreground", "threads", "idle", "computations")}


async def test_hovers_past_their_budget_share_one_computation_that_stops(slow_hover_client: RecordingClient,
                                                                         tmp_path: Path) -> None:
    client = slow_hover_client
    big = open_doc(client, tmp_path / "big.weval.yml", BIG)
    small = open_doc(client, tmp_path / "small.weval.yml", BLUEPRINT)
    await published(client, big, version=1)
    await published(client, small, version=1)
    before = await workers_state(client)

    spot = lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=big), position=lsp.Position(4, 2_000_000))
    answers = await asyncio.wait_for(asyncio.gather(
        *(client.text_document_hover_async(spot) for _ in range(HOVERS)), return_exceptions=True), HANG_GUARD_S * 3)
    # Every one answered with an error: "still checking" at the budget (or the guard's "busy"), or dropped
    # by the guard's bound on requests in flight (ServerCancelled); none with a result.
    assert all(isinstance(a, JsonRpcException) and a.code in (-32803, -32802) for a in answers), \
        {(type(a).__name__, getattr(a, "code", None), str(a)[:80]) for a in answers}

    # A request on another document is answered with its result right behind them.
    symbols = await asyncio.wait_for(client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=small))), HANG_GUARD_S)
    assert symbols

    # The 200 shared their computations (few threads were started for them: one each, before), and with no
    # request waiting the computation stopped: nothing runs any more, though its hover had 40 s to go.
    after = await workers_state(client)
    assert after["threads"] - before["threads"] < 10, (before, after)
    for _ in range(int(HANG_GUARD_S / 0.05)):
        if after["running"] == 0 and after["computations"] == 0:
            break
        await asyncio.sleep(0.05)
        after = await workers_state(client)
    assert after["running"] == 0 and after["computations"] == 0 and after["foreground"] == 0, after
