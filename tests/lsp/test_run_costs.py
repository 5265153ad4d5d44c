"""The Run lenses' costs over the protocol: `▶ Run · ≈ $…, N calls`, the `--dry-run` figures."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

from evalspec.cli import main
from evalspec.ide.run_costs import RunCost

from .session import CLIENTS, DEFAULT_OPTIONS, HANG_GUARD_S, SERVER, open_doc, start
from .test_run_lenses import RunClient, make_run_client

BLUEPRINT = """\
title: Costs
models: [echo]
---
- id: greet
  prompt: Say hello
  should:
    - $contains: hello
    - is friendly
- id: count
  prompt: Count to three
  should:
    - $contains: four
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client),
                    params=CLIENTS, ids=["nvim-0.7", "vscode"])
async def client(lsp_client: RunClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={
        **DEFAULT_OPTIONS, "runCosts": True, "run": {"models": ["openai:gpt-4o-mini"], "output": "results"}})
    yield
    await lsp_client.shutdown_session()


async def _titles_once_sized(client: RunClient, uri: str) -> dict[int, list[str]]:
    """The lens titles by line, asked again until the costs are in (they are sized in the background)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        found = await client.text_document_code_lens_async(
            lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
        out: dict[int, list[str]] = {}
        for lens in found or []:
            assert lens.command is not None
            out.setdefault(lens.range.start.line, []).append(lens.command.title)
        if out and all(" · " in titles[0] for titles in out.values()):
            return out
        assert time.monotonic() < deadline, out
        await asyncio.sleep(0.1)


def _dry_run(path: Path, *args: str) -> str:
    import contextlib
    import io
    from unittest import mock

    out = io.StringIO()
    # With a key set: without one `--dry-run` exits 2 (the run would be refused); the estimate is the same.
    with contextlib.redirect_stdout(out), mock.patch.dict("os.environ", {"OPENAI_API_KEY": "test-key"}):
        assert main(["run", str(path), "--dry-run", "--json", "-m", "openai:gpt-4o-mini", *args]) in (0, 1)
    cost = json.loads(out.getvalue())["plan"]["cost"]
    return RunCost(None if cost["unpriced"] else cost["usd"], sum(line["calls"] for line in cost["lines"]),
                   bool(cost["notes"]), tuple(cost["unpriced"])).text()


async def test_run_lenses_show_the_dry_runs_cost_and_calls(client: RunClient, tmp_path: Path):
    path = tmp_path / "blueprints" / "costs.yml"
    path.parent.mkdir()
    path.write_text(BLUEPRINT)
    uri = open_doc(client, path, BLUEPRINT)
    titles = await _titles_once_sized(client, uri)
    assert titles[0][0] == f"▶ Run all (2 prompts) · {_dry_run(path)}"
    assert titles[3][0] == f"▶ Run · {_dry_run(path, '--prompt', 'greet')}"
    assert titles[8][0] == f"▶ Run · {_dry_run(path, '--prompt', 'count')}"
    assert titles[3][0].startswith("▶ Run · ≈ $") and titles[3][0].endswith(" calls")
    if client.capabilities.workspace.code_lens and client.capabilities.workspace.code_lens.refresh_support:
        assert client.refreshes >= 1  # VS Code is told to ask again once the costs are in


async def test_an_unpriced_model_says_unknown(client: RunClient, tmp_path: Path):
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"run": {"models": ["openai:no-such-model-anywhere"]}}))
    uri = open_doc(client, tmp_path / "costs.yml", BLUEPRINT)
    titles = await _titles_once_sized(client, uri)
    assert titles[8] == ["▶ Run · cost unknown (no price for openai:no-such-model-anywhere), 1 call"]


async def test_the_setting_turns_costs_off(client: RunClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "costs.yml", BLUEPRINT)
    titles = await _titles_once_sized(client, uri)
    assert titles[3][0].startswith("▶ Run · ")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"runCosts": False}))
    found = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert [lens.command.title for lens in found if lens.range.start.line == 3] == ["▶ Run"]
