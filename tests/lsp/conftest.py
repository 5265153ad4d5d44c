"""Fixtures: evalspec-lsp in a subprocess, driven with each client profile in turn."""

from __future__ import annotations

import pytest_lsp
from pytest_lsp import ClientServerConfig

from .session import CLIENTS, FAULTY_SERVER, SERVER, RecordingClient, make_client, start

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
