"""A request that waits on an answer `prepare_answers` started, which a newer analysis then dropped,
computes its own: it was answered RequestCancelled (the Neovim test saw its codeLens cancelled, and
Neovim 0.7 asks for no lenses after that). A request the client cancels is still cancelled."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from evalspec.analysis import analyze
from evalspec_lsp.server import EvalspecServer

BLUEPRINT = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: hi\n"


async def test_a_request_whose_prepared_answer_was_dropped_computes_its_own(tmp_path: Path) -> None:
    server = EvalspecServer()
    analysis = analyze(BLUEPRINT, tmp_path / "b.weval.yml", env={})
    prepared: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    server._remember(analysis, "lenses", prepared)  # as prepare_answers leaves it, not yet computed
    asyncio.get_running_loop().call_later(0.05, prepared.cancel)  # a newer analysis drops it
    got = await server.memoised_in_thread("file:///b.weval.yml", analysis, "lenses", lambda: 42)
    assert got == 42
    assert analysis.memo["lenses"].result() == 42  # and the next request shares it


async def test_a_request_the_client_cancels_is_still_cancelled(tmp_path: Path) -> None:
    server = EvalspecServer()
    analysis = analyze(BLUEPRINT, tmp_path / "b.weval.yml", env={})
    release = threading.Event()
    request = asyncio.ensure_future(server.memoised_in_thread("file:///b.weval.yml", analysis, "slow",
                                                              lambda: release.wait(5) and 1))
    await asyncio.sleep(0.05)
    request.cancel()  # what pygls does on $/cancelRequest
    with pytest.raises(asyncio.CancelledError):
        await request
    release.set()
