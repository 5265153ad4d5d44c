"""'Show results' over the protocol: the run's HTML report, written beside its results file, and the
same report as Markdown for editors that show it in a split; also after a cancelled run."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from pytest_lsp import ClientServerConfig

from .session import CLIENTS, DEFAULT_OPTIONS, SERVER, open_doc, start
from .test_run_lenses import BLUEPRINT, RunClient, _plain, execute, make_run_client, run_to_end


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_run_client),
                    params=CLIENTS, ids=["nvim-0.7", "vscode"])
async def client(lsp_client: RunClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={
        **DEFAULT_OPTIONS, "run": {"models": ["echo"], "output": "results", "cache": False}})
    yield
    await lsp_client.shutdown_session()


async def test_show_results_gives_the_html_report_and_markdown(client: RunClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "report.weval.yml", BLUEPRINT)
    assert _plain(await execute(client, "evalspec.showResults", uri=uri, open=False))["ok"] is False  # no run yet
    done = await run_to_end(client, uri)
    shown = _plain(await execute(client, "evalspec.showResults", uri=uri, open=False, markdown=True))
    assert shown["ok"] is True and shown["file"] == done["files"][0]
    report = Path(shown["report"])
    assert report.name.endswith("_comparison.report.html") and report.parent == Path(shown["file"]).parent
    html = report.read_text()
    assert html.startswith("<!doctype html>") and "Content-Security-Policy" in html
    assert shown["markdown"].startswith("## evalspec report: Lenses")
    assert "count" in shown["markdown"]  # the failing item is listed
