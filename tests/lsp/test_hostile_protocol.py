"""What a client sends cannot hang or break the server (issue 15 item 7 and the 1 s promise).

Messages the typed client would refuse to build (a negative position, a line of 2^31, a lone
surrogate) are sent as raw JSON-RPC. Every request must be answered, with a result or an error.
"""

from __future__ import annotations

import asyncio
import itertools
from concurrent.futures import Future
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
    RecordingClient,
    make_client,
    open_doc,
    published,
    start,
    still_checking_code,
)

BLUEPRINT = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  shuld: [x]\n"
_ids = itertools.count()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=FAULTY_SERVER, client_factory=make_client),
                    params=CLIENTS[1:], ids=["vscode"])
async def hanging_client(lsp_client: RecordingClient, request, tmp_path):
    """The faulty server (an analysis of a text holding HANG takes 40 s), default settings."""
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20})
    yield
    if not lsp_client.stopped:  # one test exits the server itself
        await lsp_client.shutdown_session()


async def raw_request(client: RecordingClient, method: str, params: Any) -> Any:
    """Send a request as raw JSON (no client-side validation); its result, or its error raised."""
    msg_id = f"raw-{next(_ids)}"
    future: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._result_types[msg_id] = client.protocol.get_result_type(method)
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wait_for(asyncio.wrap_future(future), HANG_GUARD_S)


def raw_notify(client: RecordingClient, method: str, params: Any) -> None:
    client.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})


async def asked_again(ask: Any) -> Any:
    """What a client gets by asking again while the answer is "still checking" (the 0.4 s default budget
    can pass on a loaded machine): the answer, or the hang guard's timeout."""
    deadline = asyncio.get_running_loop().time() + HANG_GUARD_S
    while True:
        try:
            return await asyncio.wait_for(ask(), HANG_GUARD_S)
        except JsonRpcException as error:
            if "still checking" not in error.message or asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)


def where(uri: str, line: int, character: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


@pytest.mark.parametrize(("method", "params"), [
    (lsp.TEXT_DOCUMENT_HOVER, lambda uri: where(uri, -1, 0)),
    (lsp.TEXT_DOCUMENT_HOVER, lambda uri: where(uri, 0, -5)),
    (lsp.TEXT_DOCUMENT_COMPLETION, lambda uri: where(uri, 2**31, 0)),
    (lsp.TEXT_DOCUMENT_DEFINITION, lambda uri: where(uri, 3, 2**31)),
    (lsp.TEXT_DOCUMENT_REFERENCES, lambda uri: where(uri, 3, 2)),  # `context` is required
    (lsp.TEXT_DOCUMENT_CODE_ACTION, lambda uri: {"textDocument": {"uri": uri}, "range": {
        "start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}),
], ids=["negative-line", "negative-character", "line-2^31", "character-2^31", "references-no-context",
        "code-action-negative"])
async def test_invalid_params_get_an_error_reply(client: RecordingClient, tmp_path: Path, method: str,
                                                 params: Any) -> None:
    uri = open_doc(client, tmp_path / "t.weval.yml", BLUEPRINT)
    await published(client, uri, version=1)
    with pytest.raises(JsonRpcException) as caught:
        await raw_request(client, method, params(uri))
    assert caught.value.code == -32602  # InvalidParams
    assert "invalid params" in caught.value.message
    # The server goes on serving.
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(4, 3)))
    assert hover is not None and "prompt" in str(hover.contents)


async def test_a_second_initialize_is_refused_and_edits_still_work(client: RecordingClient, tmp_path: Path) -> None:
    uri = open_doc(client, tmp_path / "t.weval.yml", BLUEPRINT)
    await published(client, uri, version=1)
    with pytest.raises(JsonRpcException) as caught:
        await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    assert caught.value.code == -32600  # InvalidRequest
    assert "already initialized" in caught.value.message
    # The document opened before it is still known: an incremental edit lands and is checked.
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(5, 2), end=lsp.Position(5, 7)), text="should")]))
    assert not (await published(client, uri, version=2)).diagnostics


async def test_a_lone_surrogate_still_gets_diagnostics(client: RecordingClient, tmp_path: Path) -> None:
    uri = (tmp_path / "s.weval.yml").as_uri()
    text = "title: T\udca9\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi \ud83d\n  shuld: [x]\n"
    # json.dumps writes the surrogates as \udca9 escapes, as the attack run sent them.
    raw_notify(client, lsp.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {
        "uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    report = await published(client, uri, version=1)
    by_code = {d.code: d for d in report.diagnostics}
    assert set(by_code) == {"invalid-character", "unknown-key"}
    assert by_code["invalid-character"].range.start == lsp.Position(0, 8)
    assert by_code["unknown-key"].range.start == lsp.Position(5, 2)
    # Positions after the surrogate still line up: hover on the key after it.
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(4, 3)))
    assert hover is not None and "prompt" in str(hover.contents)
    # Escapes (engine/yaml_feed.py): a surrogate pair's is its character, a lone surrogate's is U+FFFD with a
    # warning; a blank line holding a tab is a blank line, and the positions after it are the text's.
    escaped = open_doc(client, tmp_path / "e.weval.yml", 'title: "T \\ud83d\\ude00"\n\t\n---\n- id: a\n'
                       '  prompt: "Hi \\ud83d"\n\t\n  shuld: [x]\n- id: b\n  prompt: "\\ud83d\\ude00"\n')
    report = await published(client, escaped, version=1)
    assert sorted((d.code, d.range.start.line, d.range.start.character) for d in report.diagnostics) == [
        ("invalid-character", 4, 10), ("unknown-key", 6, 2)]
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=escaped)))
    assert [(s.name, s.detail) for s in symbols or []][1:] == [("a", "Hi \ufffd"), ("b", "\U0001F600")]
    assert symbols and symbols[0].name == "T \U0001F600"


async def test_completion_after_a_tab_only_line(client: RecordingClient, tmp_path: Path) -> None:
    uri = open_doc(client, tmp_path / "t.weval.yml", "\t\n- ")
    await published(client, uri, version=1)
    result = await client.text_document_completion_async(lsp.CompletionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(1, 2)))
    assert result is not None
    assert not [m for m in client.log_messages if m.type == lsp.MessageType.Error]


async def test_a_stuck_analysis_delays_no_other_document(hanging_client: RecordingClient, tmp_path: Path) -> None:
    """A document whose analysis never ends gets an error within the request budget, not silence;
    requests on another document are answered meanwhile (before: one worker thread, queued behind)."""
    stuck = open_doc(hanging_client, tmp_path / "stuck.weval.yml", BLUEPRINT + "# HANG\n")
    other = open_doc(hanging_client, tmp_path / "other.weval.yml", BLUEPRINT)
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(hanging_client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=stuck), position=lsp.Position(5, 3))), HANG_GUARD_S)
    assert caught.value.code == still_checking_code(hanging_client)
    assert "still checking stuck.weval.yml" in caught.value.message

    report = await published(hanging_client, other, version=1)
    assert [d.code for d in report.diagnostics] == ["unknown-key"]
    symbols = await asked_again(lambda: hanging_client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=other))))
    assert symbols and any(s.name == "a" for s in symbols[-1:] + list(symbols[-1].children or []))


async def test_a_cpu_bound_analysis_delays_no_request_on_another_document(hanging_client: RecordingClient,
                                                                         tmp_path: Path) -> None:
    """An analysis that computes (holding the interpreter lock between the engine's yield points) for
    longer than the test waits: another document is checked, completed and outlined meanwhile."""
    busy = open_doc(hanging_client, tmp_path / "busy.weval.yml", BLUEPRINT + "# BUSY\n")
    await asyncio.sleep(0.2)  # let its analysis start
    other = open_doc(hanging_client, tmp_path / "other.weval.yml", BLUEPRINT)
    report = await published(hanging_client, other, version=1)
    assert [d.code for d in report.diagnostics] == ["unknown-key"]
    completion = await asked_again(lambda: hanging_client.text_document_completion_async(lsp.CompletionParams(
        text_document=lsp.TextDocumentIdentifier(uri=other), position=lsp.Position(5, 2))))
    items = completion.items if isinstance(completion, lsp.CompletionList) else completion or []
    assert any(i.label == "should" for i in items)
    symbols = await asked_again(lambda: hanging_client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=other))))
    assert symbols
    # All of that while the busy document was still being analysed: nothing published for it yet.
    assert not [p for p in hanging_client.published if p.uri == busy]


async def test_a_stuck_analysis_does_not_keep_the_server_alive(hanging_client: RecordingClient,
                                                               tmp_path: Path) -> None:
    open_doc(hanging_client, tmp_path / "stuck.weval.yml", BLUEPRINT + "# HANG\n")
    await asyncio.sleep(0.2)  # let the analysis start
    await hanging_client.shutdown_async(None)
    hanging_client.exit(None)
    assert await asyncio.wait_for(hanging_client._server.wait(), HANG_GUARD_S) == 0
