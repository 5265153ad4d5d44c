"""Fixtures: evalspec-lsp in a subprocess, driven with each client profile in turn."""

from __future__ import annotations

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

from .session import CLIENTS, FAULTY_SERVER, SERVER, RecordingClient, capabilities, make_client, start

_IDS = ["nvim-0.7", "vscode"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client),
                    params=CLIENTS, ids=_IDS)
async def client(lsp_client: RecordingClient, request, tmp_path):
    """A push client (neither profile declares pull diagnostics)."""
    await start(lsp_client, request.param, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client),
                    params=CLIENTS, ids=_IDS)
async def pull_client(lsp_client: RecordingClient, request, tmp_path):
    """The same profiles, declaring `textDocument.diagnostic` as LSP 3.17 clients do."""
    await start(lsp_client, request.param, tmp_path, pull=True)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=FAULTY_SERVER, client_factory=make_client),
                    params=CLIENTS, ids=_IDS)
async def faulty_client(lsp_client: RecordingClient, request, tmp_path):
    """A server whose hover and whose analysis of some texts raise (see faulty_server.py)."""
    await start(lsp_client, request.param, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client),
                    params=CLIENTS, ids=_IDS)
async def plain_client(lsp_client: RecordingClient, request, tmp_path):
    """The profiles with markdown taken away: hover and documentation must come as plain text."""
    caps = capabilities(request.param)
    caps.text_document.hover.content_format = [lsp.MarkupKind.PlainText]
    caps.text_document.completion.completion_item.documentation_format = [lsp.MarkupKind.PlainText]
    await start(lsp_client, request.param, tmp_path, caps=caps)
    yield
    await lsp_client.shutdown_session()
