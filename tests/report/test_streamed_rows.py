"""A big AgentV results file is read a row at a time (`sources._agentv_streamed`: rows in a spool on disk,
items made from the suite's tests when the page reads them): the report model and the page must be
exactly what reading the whole file gives, rows missing, repeated or without ids included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalspec.agentv import test_store
from evalspec.report import sources
from evalspec.report.html import render_html
from evalspec.report.markdown import render_markdown


def _whole(path: Path) -> Any:
    return sources._agentv_from_rows(path)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    whole = _whole(path)
    monkeypatch.setattr(sources, "STREAM_FROM_BYTES", 0)
    streamed = _whole(path)
    monkeypatch.undo()
    return whole, streamed


def test_a_real_runs_rows_read_the_same_streamed(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    whole, streamed = _both(runs["agentv"], monkeypatch)
    assert isinstance(streamed.items, sources.SpooledItems) and isinstance(streamed.cells, sources.SpooledCells)
    assert streamed == whole and len(whole.cells) > 2
    assert any(i.messages for i in whole.items)  # the inputs come from the suite
    assert render_html([streamed]) == render_html([whole])
    assert render_markdown([streamed]) == render_markdown([whole])


def test_rows_of_every_shape_read_the_same(runs: dict[str, Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A row repeated (the later wins), a target that answered only some tests, a row without ids, a test
    the suite lacks, and the tests in another order than the suite's."""
    rows = [json.loads(line) for line in runs["agentv"].read_text(encoding="utf-8").split("\n") if line]
    again = {**rows[0], "score": 0.123}
    second = next(r for r in rows if r["test_id"] != rows[0]["test_id"])
    other = {**second, "target": "another"}
    stranger = {**rows[0], "test_id": "not-in-the-suite"}
    changed = [rows[-1], *rows[:-1], again, other, {"score": 1}, stranger]
    out = runs["agentv"].parent / "variant_20260101T000000Z.jsonl"  # beside the journal the real run wrote
    out.write_text("".join(json.dumps(r) + "\n" for r in changed), encoding="utf-8")
    try:
        whole, streamed = _both(out, monkeypatch)
        assert streamed == whole
        assert whole.cells[(rows[0]["test_id"], rows[0]["target"])].score == 0.123
        assert (rows[0]["test_id"], "another") not in streamed.cells and (second["test_id"], "another") in streamed.cells
        assert len(streamed.cells) == len(whole.cells) == len({(r["test_id"], r["target"]) for r in changed if "test_id" in r})
        assert any("without test_id" in n for n in streamed.notes)
        assert render_html([streamed]) == render_html([whole])
    finally:
        out.unlink()


def test_the_suite_s_tests_on_disk_make_the_same_items(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _whole(runs["agentv"])
    monkeypatch.setattr(sources, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(test_store, "DEFAULT_BOUND", 1)
    streamed = _whole(runs["agentv"])  # read as load_results reads it (which adds the database's wall time)
    assert streamed == whole
    assert render_html([streamed]) == render_html([whole])
