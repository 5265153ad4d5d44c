"""A view asked for before its document is checked: answered "still checking" within the request budget,
in the code the client does not show as an error (ServerCancelled to a client that takes it as a
cancellation, as vscode-languageclient 9 says it does; ContentModified to the others), then, once the
document is checked, the client is asked to request its lenses, hints, semantic tokens and folding
ranges again (VS Code asks for them only on an edit or when told to: without it a file opened while
the server warms up shows none of them)."""

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
    capabilities,
    make_client,
    open_doc,
    start,
    still_checking_code,
)

# faulty_server.py takes 1.5 s to analyse a text holding SLOW; the request budget here is 0.1 s.
BLUEPRINT = "title: T\nmodels: [echo]\n---\n- id: a\n  prompt: Hi\n  should: [x]\n# SLOW\n"
VIEWS = [lsp.WORKSPACE_CODE_LENS_REFRESH, lsp.WORKSPACE_INLAY_HINT_REFRESH, lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
         lsp.WORKSPACE_FOLDING_RANGE_REFRESH]
MODERN_VSCODE = "vscode-languageclient-9"  # VS Code 1.65's profile with what client 9 adds to it


def modern_vscode() -> lsp.ClientCapabilities:
    caps = capabilities(CLIENTS[1])
    assert caps.text_document is not None and caps.text_document.semantic_tokens is not None
    assert caps.workspace is not None
    caps.text_document.semantic_tokens.server_cancel_support = True
    caps.workspace.folding_range = lsp.FoldingRangeWorkspaceClientCapabilities(refresh_support=True)
    caps.workspace.inlay_hint = lsp.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    return caps


@pytest_lsp.fixture(config=ClientServerConfig(server_command=FAULTY_SERVER, client_factory=make_client),
                    params=[*CLIENTS, MODERN_VSCODE], ids=["nvim-0.7", "vscode", "vscode-client-9"])
async def client(lsp_client: RecordingClient, request, tmp_path):
    modern = request.param == MODERN_VSCODE
    await start(lsp_client, CLIENTS[1] if modern else request.param, tmp_path,
                options={**DEFAULT_OPTIONS, "requestBudgetMs": 100}, caps=modern_vscode() if modern else None)
    lsp_client.profile = request.param
    yield
    await lsp_client.shutdown_session()


async def test_views_answered_still_checking_are_refreshed_once_checked(client: RecordingClient, tmp_path):
    uri = open_doc(client, tmp_path / "blueprints" / "late.yml", BLUEPRINT)
    with pytest.raises(JsonRpcException) as caught:
        await client.text_document_code_lens_async(lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert caught.value.code == still_checking_code(client) and "still checking late.yml" in caught.value.message
    assert caught.value.code == (-32802 if client.profile == MODERN_VSCODE else -32801)
    assert not client.refreshed  # not before the document is checked
    workspace = client.capabilities.workspace if client.capabilities else None
    supported = [m for m, caps in zip(VIEWS, (workspace.code_lens, workspace.inlay_hint, workspace.semantic_tokens,
                                              workspace.folding_range), strict=True)
                 if caps is not None and caps.refresh_support] if workspace else []
    if not supported:  # Neovim 0.7: nothing it could act on is sent
        await asyncio.sleep(3)
        assert not client.refreshed
        return
    # VS Code 1.65: lenses and tokens (hints and folding ranges came later)
    assert client.profile.startswith("visual-studio-code") or client.profile == MODERN_VSCODE
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
            assert exc.code == still_checking_code(client)
            await asyncio.sleep(0.2)
    assert lenses and lenses[0].command is not None and lenses[0].command.title.startswith("▶ Run")
