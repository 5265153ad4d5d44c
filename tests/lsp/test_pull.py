"""Pull diagnostics for clients that declare them; push for the others; never both."""

from __future__ import annotations

from lsprotocol import types as lsp

from .session import RecordingClient, change, open_doc, published

BLUEPRINT = "title: T\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: Hi\n  shuld: [x]\n"


async def pull(client: RecordingClient, uri: str, previous: str | None = None):
    return await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), previous_result_id=previous))


async def test_pull_client_pulls_and_gets_unchanged_reports(pull_client: RecordingClient, tmp_path):
    assert pull_client.init_result.capabilities.diagnostic_provider is not None
    uri = open_doc(pull_client, tmp_path / "t.weval.yml", BLUEPRINT)

    first = await pull(pull_client, uri)
    assert first.kind == lsp.DocumentDiagnosticReportKind.Full
    assert [(d.code, d.range.start.line) for d in first.items] == [("unknown-key", 5)]
    assert first.result_id

    again = await pull(pull_client, uri, first.result_id)
    assert again.kind == lsp.DocumentDiagnosticReportKind.Unchanged
    assert again.result_id == first.result_id

    change(pull_client, uri, 2, (5, 2), (5, 7), "should")
    fixed = await pull(pull_client, uri, first.result_id)
    assert fixed.kind == lsp.DocumentDiagnosticReportKind.Full
    assert not fixed.items
    assert fixed.result_id != first.result_id

    assert pull_client.published == []  # a pull client is never pushed to


async def test_pull_for_an_unrelated_file_is_empty(pull_client: RecordingClient, tmp_path):
    uri = open_doc(pull_client, tmp_path / "compose.yml", "services:\n  web: {image: nginx\n")
    report = await pull(pull_client, uri)
    assert report.kind == lsp.DocumentDiagnosticReportKind.Full
    assert not report.items


async def test_push_client_is_pushed_to_and_offered_no_pull(client: RecordingClient, tmp_path):
    assert client.init_result.capabilities.diagnostic_provider is None
    uri = open_doc(client, tmp_path / "t.weval.yml", BLUEPRINT)
    report = await published(client, uri, version=1)
    assert [d.code for d in report.diagnostics] == ["unknown-key"]


async def test_pull_reports_findings_of_an_external_tests_file_as_related(pull_client: RecordingClient, tmp_path):
    (tmp_path / "cases.yaml").write_text("- id: ok\n  input: Hi\n  criteria: Says hi\n\n- id: bad\n  input: Hello\n")
    suite = "name: s\ndescription: d\ntests:\n  - id: inline\n    input: Hi\n    criteria: Says hi\n" \
            "  - file://cases.yaml\n"
    uri = open_doc(pull_client, tmp_path / "suite.eval.yaml", suite)
    cases_uri = (tmp_path / "cases.yaml").as_uri()

    report = await pull(pull_client, uri)
    assert not report.items
    [incomplete] = report.related_documents[cases_uri].items
    assert (incomplete.code, incomplete.range.start.line) == ("incomplete-test", 4)

    change(pull_client, uri, 2, (6, 0), (7, 0), "")  # drop the reference: the other file is cleared
    report = await pull(pull_client, uri, report.result_id)
    assert not report.related_documents[cases_uri].items
