"""Driving evalspec-lsp like an editor: a recording client, documents, edits and waits.

Waits have generous limits that only stop a broken server from hanging the suite; no test asserts a
duration.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER = [sys.executable, "-m", "evalspec_lsp"]
FAULTY_SERVER = [sys.executable, str(Path(__file__).with_name("faulty_server.py"))]
# The two client profiles every end-to-end test runs with (pytest-lsp's captured capabilities).
CLIENTS = ["neovim@v0.7.0", "visual-studio-code@v1.65.2"]
HANG_GUARD_S = 20.0
# The suite runs on shared, loaded machines: a request waits up to 10 s for its analysis here instead
# of the default budget (0.4 s), which test_hostile_protocol.py tests on its own.
# The Run lenses' costs (sized in the background) are off: lens titles stay what each test expects;
# test_run_costs.py turns them on.
DEFAULT_OPTIONS = {"debounceMs": 20, "requestBudgetMs": 10_000, "runCosts": False}


class RecordingClient(LanguageClient):
    """pytest-lsp's client that also keeps every publishDiagnostics, in order, with its version."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        self.published: list[lsp.PublishDiagnosticsParams] = []
        self.published_event = asyncio.Event()
        self.profile = ""
        self.init_result: lsp.InitializeResult | None = None
        self.messages: list[lsp.ShowMessageParams] = []  # window/showMessage, in order
        self.registrations: list[lsp.Registration] = []  # client/registerCapability, as an editor accepts them
        self.refreshed: list[str] = []  # workspace/{codeLens,inlayHint,semanticTokens,foldingRange}/refresh, in order


def make_client(client: RecordingClient | None = None) -> RecordingClient:
    """pytest-lsp's client features, with diagnostics and shown messages recorded (on `client`, or a
    new RecordingClient)."""
    client = client if client is not None else RecordingClient()
    mine = (lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lsp.WINDOW_SHOW_MESSAGE)
    register_lsp_features(client, {m: f for m, f in DEFAULT_CLIENT_FEATURES.items() if m not in mine})

    @client.feature(lsp.WINDOW_SHOW_MESSAGE)
    def show(params: lsp.ShowMessageParams) -> None:
        client.messages.append(params)

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    # The views an editor requests again when the server asks (VS Code does, for the capabilities it declares).
    for method in (lsp.WORKSPACE_CODE_LENS_REFRESH, lsp.WORKSPACE_INLAY_HINT_REFRESH,
                   lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH, lsp.WORKSPACE_FOLDING_RANGE_REFRESH):
        client.feature(method)(lambda params, method=method: client.refreshed.append(method))

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish(params: lsp.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)
        client.published_event.set()

    return client


def still_checking_code(client: LanguageClient) -> int:
    """The code a "still checking" answer has for this client: ServerCancelled where the client takes
    it as a cancellation (it says so for semantic tokens), else ContentModified."""
    caps = client.capabilities
    tokens = caps.text_document.semantic_tokens if caps and caps.text_document else None
    return -32802 if tokens is not None and tokens.server_cancel_support else -32801


def capabilities(profile: str, *, pull: bool = False) -> lsp.ClientCapabilities:
    caps = client_capabilities(profile)
    if pull:
        caps.text_document = caps.text_document or lsp.TextDocumentClientCapabilities()
        caps.text_document.diagnostic = lsp.DiagnosticClientCapabilities(dynamic_registration=False,
                                                                        related_document_support=True)
    return caps


async def start(client: RecordingClient, profile: str, root: Path, *, pull: bool = False,
                options: dict | None = None, caps: lsp.ClientCapabilities | None = None) -> lsp.InitializeResult:
    client.profile = profile
    client.init_result = await client.initialize_session(lsp.InitializeParams(
        capabilities=caps or capabilities(profile, pull=pull),
        root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        initialization_options=options if options is not None else DEFAULT_OPTIONS,
    ))
    return client.init_result


# --- documents --------------------------------------------------------------------------------------

def open_doc(client: LanguageClient, path: Path, text: str, language: str = "yaml", version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))
    return uri


def change(client: LanguageClient, uri: str, version: int, start: tuple[int, int], end: tuple[int, int],
           text: str) -> None:
    """One incremental change (LSP positions)."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(*start), end=lsp.Position(*end)), text=text)]))


def position_of(text: str, needle: str, *, after: bool = False, occurrence: int = 0) -> lsp.Position:
    """Where `needle` starts (or ends) in `text`, in UTF-16 units, as an editor would say it."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    if after:
        index += len(needle)
    line = text.count("\n", 0, index)
    prefix = text[text.rfind("\n", 0, index) + 1:index]
    return lsp.Position(line=line, character=len(prefix.encode("utf-16-le")) // 2)


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions) the way an editor does: from the last to the first."""
    lines = text.split("\n")

    def offset(p: lsp.Position) -> int:
        before = sum(len(line) + 1 for line in lines[:p.line])
        units, col = 0, 0
        line = lines[p.line] if p.line < len(lines) else ""
        while col < len(line) and units < p.character:
            units += 2 if ord(line[col]) > 0xFFFF else 1
            col += 1
        return before + col

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
        lines = text.split("\n")
    return text


def edits_of(action: lsp.CodeAction, uri: str) -> list[lsp.TextEdit]:
    """The text edits an action makes to `uri`, whichever shape of WorkspaceEdit the server chose."""
    assert action.edit is not None
    if action.edit.document_changes:
        return [e for change in action.edit.document_changes
                if isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == uri
                for e in change.edits]
    return list((action.edit.changes or {}).get(uri, []))


# --- waiting ----------------------------------------------------------------------------------------

async def published(client: RecordingClient, uri: str, version: int | None = None, *,
                    where: Callable[[lsp.PublishDiagnosticsParams], bool] | None = None,
                    ) -> lsp.PublishDiagnosticsParams:
    """The latest diagnostics published for `uri` (for `version`, when given, and matching `where`),
    waiting if need be."""

    def wanted(params: lsp.PublishDiagnosticsParams) -> bool:
        return params.uri == uri and (version is None or params.version == version) \
            and (where is None or where(params))

    async def wait() -> lsp.PublishDiagnosticsParams:
        while True:
            for params in reversed(client.published):
                if wanted(params):
                    return params
            client.published_event.clear()  # no await since the check: nothing can slip in between
            await client.published_event.wait()

    return await asyncio.wait_for(wait(), HANG_GUARD_S)


def codes_by_line(diagnostics: list[lsp.Diagnostic]) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for d in diagnostics:
        out.setdefault(d.range.start.line, set()).add(str(d.code))
    return out
