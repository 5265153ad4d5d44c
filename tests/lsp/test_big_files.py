"""A 4 MB blueprint over the protocol (issue 15): the outline, folding, lenses, diagnostics and quick
fixes of ~12,000 prompts are complete and in the right places, and building them (on worker threads,
sent as JSON without lsprotocol objects) does not hold up a request on another document.

No durations are asserted; the one check about time is an order: a hover on a small file, sent just
after the big file's outline was asked for, is answered first. bench/lsp_big.py measures the times.
"""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

from evalspec.analysis import MAX_PER_KIND

from .session import CLIENTS, SERVER, RecordingClient, change, make_client, open_doc, start

CAP = 4 * 1024 * 1024
GUARD_S = 600.0  # only stops a broken server from hanging the suite (a loaded machine is slow)
SMALL = "title: small\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: hi\n  should: [be brief]\n"


def prompt(i: int, typo: bool) -> str:
    return (f'- id: p{i}\n  prompt: "Question {i}: explain concept {i} in two sentences."\n'
            f'  ideal: "Concept {i} is explained here."\n  {"shuld" if typo else "should"}:\n'
            f'    - "mentions concept {i} by name"\n    - $contains: "answer"\n'
            f'  should_not:\n    - $contains: "As an AI"\n')


def blueprint(typo: bool) -> tuple[str, int]:
    """A blueprint just under the editor's 4 MB cap, and its number of prompts."""
    head = "title: Big\nmodels:\n  - openai:gpt-4o-mini\n---\n"
    parts, size, n = [head], len(head), 0
    while size + len(prompt(n, typo)) < CAP - 1024:
        parts.append(prompt(n, typo))
        size += len(prompt(n, typo))
        n += 1
    return "".join(parts), n


def first_line_of(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client),
                    params=CLIENTS[1:], ids=["vscode"])
async def big_client(lsp_client: RecordingClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20, "requestBudgetMs": GUARD_S * 1000, "runCosts": False})
    yield
    await lsp_client.shutdown_session()


async def diagnostics_of(client: RecordingClient, uri: str) -> list[lsp.Diagnostic]:
    async def wait() -> list[lsp.Diagnostic]:
        while True:
            for params in reversed(client.published):
                if params.uri == uri and params.version == 1:
                    return list(params.diagnostics)
            client.published_event.clear()
            await client.published_event.wait()

    return await asyncio.wait_for(wait(), GUARD_S)


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def test_a_4_mb_blueprint_outline_folding_and_lenses(big_client: RecordingClient, tmp_path):
    text, n = blueprint(typo=False)
    assert n > 10_000 and len(text.encode()) < CAP
    small = open_doc(big_client, tmp_path / "small.yml", SMALL)
    uri = open_doc(big_client, tmp_path / "big.yml", text)
    assert await diagnostics_of(big_client, uri) == []  # analysed, and valid

    # The outline asked for first, then a hover on the small file: the hover does not wait for it.
    order: list[str] = []
    outline = asyncio.ensure_future(big_client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=doc(uri))))
    outline.add_done_callback(lambda _: order.append("outline"))
    hover = asyncio.ensure_future(big_client.text_document_hover_async(
        lsp.HoverParams(text_document=doc(small), position=lsp.Position(line=5, character=4))))
    hover.add_done_callback(lambda _: order.append("hover"))
    symbols, info = await asyncio.wait_for(asyncio.gather(outline, hover), GUARD_S)
    assert info is not None
    assert order == ["hover", "outline"]

    prompts = [s for s in symbols if s.name.startswith("p")]
    assert len(prompts) == n
    for i in (0, n // 2, n - 1):
        s = prompts[i]
        line = first_line_of(text, f"- id: p{i}\n")
        assert s.name.startswith(f"p{i}") and isinstance(s, lsp.DocumentSymbol)
        assert s.selection_range.start == lsp.Position(line=line, character=6)
        assert s.range.start.line == line and s.range.end.line == line + 7
        assert [c.name for c in s.children or ()][:1] == [f"mentions concept {i} by name"]
    # Asked again (as editors do after a while): the same outline.
    again = await big_client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc(uri)))
    assert again == symbols

    folds = await big_client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc(uri)))
    spans = {(r.start_line, r.end_line) for r in folds}
    last = first_line_of(text, f"- id: p{n - 1}\n")
    assert (last, last + 7) in spans and len(folds) >= 3 * n

    lenses = await big_client.text_document_code_lens_async(lsp.CodeLensParams(text_document=doc(uri)))
    titles = [lens.command.title for lens in lenses if lens.command is not None]
    assert titles.count("▶ Run") == n
    assert f"▶ Run all ({n} prompts)" in titles
    runs = [lens for lens in lenses if lens.command is not None and lens.command.title == "▶ Run"]
    assert runs[-1].range.start.line == last
    assert runs[-1].command is not None and list(runs[-1].command.arguments or ()) == [{"uri": uri, "item": f"p{n - 1}"}]


async def test_a_4_mb_blueprint_with_an_error_in_every_prompt(big_client: RecordingClient, tmp_path):
    text, n = blueprint(typo=True)
    small = open_doc(big_client, tmp_path / "small.yml", SMALL)
    uri = open_doc(big_client, tmp_path / "typos.yml", text)
    diagnostics = await diagnostics_of(big_client, uri)
    typos = [d for d in diagnostics if d.range.start.line != 0 and "shuld" in d.message]
    # The first thousand of a kind, then one more saying how many follow (issue 15: a file of a million
    # findings took most of a minute to publish); each at its own typo.
    assert len(typos) == MAX_PER_KIND + 1 < n
    assert all(d.code == "unknown-key" for d in typos)
    assert f"and {n - MAX_PER_KIND - 1:,} more 'unknown-key' findings after this one" in typos[-1].message
    assert not any("more 'unknown-key'" in d.message for d in typos[:-1])
    lines = text.split("\n")
    assert len({d.range.start.line for d in typos}) == len(typos)
    for d in (typos[0], typos[-1]):
        assert lines[d.range.start.line][d.range.start.character:d.range.end.character] == "shuld"
        assert d.source == "evalspec" and d.severity is not None
    # The whole file selected, with every diagnostic in it (what VS Code sends): a fix for each typo, and
    # a hover on the small file sent just after is answered too. Which answer comes first is not asserted:
    # 1,001 fixes take tens of milliseconds, and on a loaded machine (a full CI run at load 11) they came
    # first without holding the hover up. That a long request on one file holds up no request on another
    # is the outline test's above (a 4 MB outline against a hover).
    order: list[str] = []
    asked = asyncio.ensure_future(big_client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=len(lines) - 1, character=0)),
        context=lsp.CodeActionContext(diagnostics=diagnostics, only=[lsp.CodeActionKind.QuickFix]))))
    asked.add_done_callback(lambda _: order.append("code actions"))
    hover = asyncio.ensure_future(big_client.text_document_hover_async(
        lsp.HoverParams(text_document=doc(small), position=lsp.Position(line=5, character=4))))
    hover.add_done_callback(lambda _: order.append("hover"))
    actions, info = await asyncio.wait_for(asyncio.gather(asked, hover), GUARD_S)
    assert info is not None and sorted(order) == ["code actions", "hover"]
    fixed = {a.diagnostics[0].range.start.line for a in actions if a.diagnostics and "should" in a.title}
    assert fixed == {d.range.start.line for d in typos}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client),
                    params=CLIENTS[1:], ids=["vscode"])
async def hurried_client(lsp_client: RecordingClient, request, tmp_path):
    """The shortest request budget the settings allow (50 ms): what no large answer is built within."""
    await start(lsp_client, request.param, tmp_path, options={"debounceMs": 20, "requestBudgetMs": 50, "runCosts": False})
    yield
    await lsp_client.shutdown_session()


async def test_past_the_budget_a_plan_is_pending_then_shown_and_kept(hurried_client: RecordingClient, tmp_path):
    text, n = blueprint(typo=False)
    uri = open_doc(hurried_client, tmp_path / "big.yml", text)
    assert await diagnostics_of(hurried_client, uri) == []

    def plan_shown() -> bool:
        return any(f"{n:,} prompt(s)" in m.message and "big.yml" in m.message for m in hurried_client.messages)

    ask = lsp.ExecuteCommandParams(command="evalspec.plan", arguments=[{"uri": uri}])
    answer = await asyncio.wait_for(hurried_client.workspace_execute_command_async(ask), GUARD_S)
    # Planning 12,000 prompts takes far longer than 50 ms: the command answers at once that it goes on.
    assert answer["ok"] is True and "planning big.yml" in answer["pending"]
    assert not plan_shown()

    async def shown() -> None:
        while not plan_shown():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(shown(), GUARD_S)  # the plan follows as a message when it is ready
    # Kept with the analysis: answered within the 50 ms budget once the worker is free (on a loaded
    # machine it may still be busy with another job of the document for a moment: asked again then).
    for _ in range(5):
        again = await asyncio.wait_for(hurried_client.workspace_execute_command_async(ask), GUARD_S)
        if "plan" in again:
            break
        await asyncio.sleep(0.2)
    assert again["ok"] is True and again["plan"]["prompts"] == n, again


async def test_past_the_budget_the_outline_is_still_checking_then_complete(hurried_client: RecordingClient,
                                                                           tmp_path):
    text, n = blueprint(typo=False)
    uri = open_doc(hurried_client, tmp_path / "big.yml", text)
    assert await diagnostics_of(hurried_client, uri) == []
    ask = lsp.DocumentSymbolParams(text_document=doc(uri))
    refused = 0

    async def outline() -> list:
        nonlocal refused
        while True:  # built once per analysis on a worker thread; asked again, it is found ready
            try:
                return await hurried_client.text_document_document_symbol_async(ask)
            except Exception as exc:  # pygls raises the error response
                # The server's answer past its budget; on a machine so loaded that the server does not
                # answer within 0.9 s, its guard's.
                assert "still checking big.yml" in str(exc) or "evalspec is busy" in str(exc), exc
                refused += 1
                await asyncio.sleep(0.05)

    symbols = await asyncio.wait_for(outline(), GUARD_S)
    assert len([s for s in symbols if s.name.startswith("p")]) == n

    # A prompt added at the end: once the new version is published, its outline (built ahead, since
    # this client asks for outlines) holds it, never the outline of the text before.
    end = text.count("\n")
    change(hurried_client, uri, 2, (end, 0), (end, 0), "- id: added\n  prompt: new\n")

    async def published() -> None:
        while not any(p.uri == uri and p.version == 2 for p in hurried_client.published):
            hurried_client.published_event.clear()
            await hurried_client.published_event.wait()

    await asyncio.wait_for(published(), GUARD_S)
    symbols = await asyncio.wait_for(outline(), GUARD_S)
    names = [s.name for s in symbols]
    assert names[-1].startswith("added") and len([x for x in names if x.startswith("p")]) == n
