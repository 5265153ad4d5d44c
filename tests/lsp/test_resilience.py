"""A failing feature is logged and answered empty; the server keeps serving (see faulty_server.py)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled

from .session import HANG_GUARD_S, RecordingClient, change, open_doc, published

BLUEPRINT = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  shuld: [x]\n"


def errors_logged(client: RecordingClient) -> list[str]:
    return [m.message for m in client.log_messages if m.type == lsp.MessageType.Error]


async def test_a_raising_hover_is_logged_and_the_server_keeps_serving(faulty_client: RecordingClient, tmp_path):
    uri = open_doc(faulty_client, tmp_path / "t.weval.yml", BLUEPRINT)
    await published(faulty_client, uri, version=1)
    doc = lsp.TextDocumentIdentifier(uri=uri)

    hover = await faulty_client.text_document_hover_async(
        lsp.HoverParams(text_document=doc, position=lsp.Position(5, 3)))
    assert hover is None
    assert any("textDocument/hover" in m and "broken on purpose" in m for m in errors_logged(faulty_client))

    # Still serving: other requests answer and edits are still checked.
    symbols = await faulty_client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
    assert symbols is not None
    change(faulty_client, uri, 2, (5, 2), (5, 7), "should")
    assert not (await published(faulty_client, uri, version=2)).diagnostics


async def test_a_raising_analysis_is_logged_and_the_next_edit_is_checked(faulty_client: RecordingClient, tmp_path):
    uri = open_doc(faulty_client, tmp_path / "t.weval.yml", BLUEPRINT)
    await published(faulty_client, uri, version=1)
    change(faulty_client, uri, 2, (4, 12), (4, 12), " EXPLODE")
    # A request on the broken version is answered (empty), not left hanging, and the failure is logged.
    completion = await faulty_client.text_document_completion_async(lsp.CompletionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(5, 3)))
    assert completion is not None and not completion.items
    assert any("analysis of" in m and "broken on purpose" in m for m in errors_logged(faulty_client))
    assert not [p for p in faulty_client.published if p.version == 2]

    change(faulty_client, uri, 3, (4, 12), (4, 20), "")  # remove the trigger again
    report = await published(faulty_client, uri, version=3)
    assert [d.code for d in report.diagnostics] == ["unknown-key"]


async def test_a_cancelled_request_is_answered_as_cancelled(faulty_client: RecordingClient, tmp_path):
    uri = open_doc(faulty_client, tmp_path / "t.weval.yml", BLUEPRINT)
    await published(faulty_client, uri, version=1)
    change(faulty_client, uri, 2, (4, 12), (4, 12), " SLOW")  # the analysis of version 2 takes 1.5 s
    params = lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(5, 3))
    future = faulty_client.protocol.send_request(lsp.TEXT_DOCUMENT_COMPLETION, params, msg_id="slow-completion")
    faulty_client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="slow-completion"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(asyncio.wrap_future(future), HANG_GUARD_S)
    # The cancelled request did not stop the analysis: version 2's diagnostics still arrive.
    assert [d.code for d in (await published(faulty_client, uri, version=2)).diagnostics] == ["unknown-key"]
