"""Earlier results read back for the editor from an output folder someone else made (a cloned repository's
`evalspec-results/`): never through a link, never a FIFO, never a file or line past its bound (the eighth
attack round, `bench/attack.py editor8`: a comparison file linked to the server's own stdin or a FIFO was
opened and read; one of 3 GB after a valid head, and a journal line of 3 GB, were read whole)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from evalspec import appendlog
from evalspec.ide import run_history
from evalspec.ide.run_history import load_history

BLUEPRINT = "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  should: [$contains: hi]\n"


def comparison(answer: str = "hi there") -> dict:
    return {"sourceBlueprintFileName": "x.weval.yml", "configId": "x", "runLabel": "lab",
            "allFinalAssistantResponses": {"p": {"echo": answer}},
            "evaluationResults": {"llmCoverageScores": {"p": {"echo": {"avgCoverageExtent": 1.0}}}}}


def project(tmp_path: Path) -> tuple[Path, Path, Path]:
    (tmp_path / ".git").mkdir()
    bp = tmp_path / "x.weval.yml"
    bp.write_text(BLUEPRINT)
    folder = tmp_path / "evalspec-results" / "live" / "blueprints" / "x"
    folder.mkdir(parents=True)
    return bp, tmp_path / "evalspec-results", folder


def load_within(out: Path, bp: Path, root: Path) -> dict:
    """load_history on a thread, with a generous bound against a hang (a FIFO open blocks for ever)."""
    got: dict = {}
    worker = threading.Thread(target=lambda: got.update(h=load_history(out, bp, root)), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "load_history hung"
    return got["h"].results


def test_a_comparison_file_of_our_own_is_read(tmp_path: Path) -> None:
    bp, out, folder = project(tmp_path)
    (folder / "lab_2026-01-01T00-00-00-000Z_comparison.json").write_text(json.dumps(comparison()))
    assert load_within(out, bp, tmp_path)["p"]["echo"].answer == "hi there"


def test_a_comparison_linked_elsewhere_is_not_read(tmp_path: Path) -> None:
    bp, out, folder = project(tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(comparison("read through a link")))
    (folder / "lab_2026-01-01T00-00-00-000Z_comparison.json").symlink_to(elsewhere)
    assert load_within(out, bp, tmp_path) == {}


@pytest.mark.parametrize("how", ["fifo", "link-to-fifo"])
def test_a_comparison_that_is_a_fifo_does_not_block(tmp_path: Path, how: str) -> None:
    bp, out, folder = project(tmp_path)
    name = folder / "lab_2026-01-01T00-00-00-000Z_comparison.json"
    if how == "fifo":
        os.mkfifo(name)
    else:
        os.mkfifo(tmp_path / "pipe")
        name.symlink_to(tmp_path / "pipe")
    try:
        assert load_within(out, bp, tmp_path) == {}
    finally:  # a reader still blocked in open() (the old code) is let go, so the test process can end
        fd = os.open(tmp_path / "pipe" if how != "fifo" else name, os.O_WRONLY | os.O_NONBLOCK) \
            if _has_reader(tmp_path / "pipe" if how != "fifo" else name) else None
        if fd is not None:
            os.close(fd)


def _has_reader(fifo: Path) -> bool:
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        return True
    except OSError:
        return False


def test_a_comparison_past_the_bound_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bp, out, folder = project(tmp_path)
    monkeypatch.setattr(run_history, "COMPARISON_MAX_BYTES", 100_000)
    big = json.dumps(comparison())[:-1] + ', "padding": "' + "x" * 200_000 + '"}'
    (folder / "lab_2026-01-01T00-00-00-000Z_comparison.json").write_text(big)
    assert load_within(out, bp, tmp_path) == {}


def test_a_journal_line_past_the_bound_is_skipped_not_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(appendlog, "LINE_MAX_BYTES", 1000)
    journal = tmp_path / "a.journal.jsonl"
    journal.write_bytes(b'{"a": 1}\n' + b'{"b": "' + b"0" * 50_000 + b'"}\n' + b'{"c": 3}\n' + b"0" * 5000)
    lines = list(appendlog.read_lines(journal))
    assert lines == [b'{"a": 1}', b'{"c": 3}']
