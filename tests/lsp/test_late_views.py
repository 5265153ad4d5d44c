"""A view asked for before its document is checked: answered "still checking" within the request budget,
then, once the document is checked, the client is asked to request its lenses, hints and semantic tokens
again (VS Code asks for them only on an edit or when told to: without it a file opened while the server
warms up shows none of them)."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from .session import (
    CLIENTS,
    DEFAULT_OPTIONS,
    FAULTY_SERVER,
    HANG_GUARD_S,
    RecordingClient,
    make_client,
    open_doc,
    start,
)

# faulty_server.py takes 1.5 s to analyse a text holding SLOW; the request budget here is 0.1 s.
BLUEPRINT = "title: T\nmodels: [echo]\n---\n- id: a\n  prompt: Hi\n  should: [x]\n# SLOW\n"
VIEWS = [lsp.WORKSPACE_CODE_LENS_REFRESH, lsp.WORKSPACE_INLAY_HINT_REFRESH, lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=FAULTY_SERVER, client_factory=make_client),
                    params=CLIENTS, ids=["nvim-0.7", "vscode"])
async def client(lsp_client: RecordingClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={**DEFAULT_OPTIONS, "requestBudgetMs": 100})
    yield
    await lsp_client.shutdown_session()


async def test_views_answered_still_checking_are_refreshed_once_checked(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "blueprints" / "late.yml", BLUEPRINT)
    with pytest.raises(JsonRpcException) as caught:
        await client.text_document_code_lens_async(lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert caught.value.code == -32803 and "still checking late.yml" in caught.value.message
    assert not client.refreshed  # not before the document is checked
    workspace = client.capabilities.workspace if client.capabilities else None
    supported = [m for m, caps in zip(VIEWS, (workspace.code_lens, workspace.inlay_hint, workspace.semantic_tokens),
                                      strict=True) if caps is not None and caps.refresh_support] if workspace else []
    if not supported:  # Neovim 0.7: nothing it could act on is sent
        await asyncio.sleep(3)
        assert not client.refreshed
        return
    assert client.profile.startswith("visual-studio-code")  # 1.65: lenses and tokens (hints came later)
    for _ in range(int(HANG_GUARD_S / 0.05)):
        if set(client.refreshed) >= set(supported):
            break
        await asyncio.sleep(0.05)
    assert sorted(client.refreshed) == sorted(supported)  # once each
    # Asked again (as each refresh makes VS Code do), the lenses come.
    for _ in range(int(HANG_GUARD_S / 0.2)):
        try:
            lenses = await client.text_document_code_lens_async(
                lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
            break
        except JsonRpcException as exc:
            assert exc.code == -32803
            await asyncio.sleep(0.2)
    assert lenses and lenses[0].command is not None and lenses[0].command.title.startswith("▶ Run")
