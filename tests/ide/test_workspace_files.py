"""The workspace's eval files (engine/ide/workspace_files.py): found bounded, checked without running anything."""

from __future__ import annotations

import os
from pathlib import Path

from evalspec.file_source import DiskSource
from evalspec.ide.workspace_files import check_file, eval_files
from evalspec.source import MAX_BYTES


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_walk_finds_yaml_and_json_and_skips_what_it_should(tmp_path: Path) -> None:
    a = _write(tmp_path / "blueprints" / "a.yml", "title: a\n")
    b = _write(tmp_path / "evals" / "b.eval.yaml", "tests: []\n")
    c = _write(tmp_path / "c.json", "{}")
    _write(tmp_path / "notes.md", "# no")
    _write(tmp_path / ".git" / "x.yml", "a: 1\n")
    _write(tmp_path / "node_modules" / "p" / "x.yml", "a: 1\n")
    _write(tmp_path / "big.yml", "a: " + "x" * (MAX_BYTES + 1) + "\n")
    outside = _write(tmp_path.parent / f"{tmp_path.name}-outside" / "o.yml", "title: o\n")
    os.symlink(outside.parent, tmp_path / "linked")
    os.symlink(outside, tmp_path / "link.yml")
    assert eval_files([tmp_path]) == [c, a, b]  # a folder's files, then its folders, sorted; no links
    assert eval_files([tmp_path], max_files=1) == [c]
    assert len(eval_files([tmp_path], max_listed=2)) < 3


def test_check_file_analyses_eval_files_only(tmp_path: Path) -> None:
    bp = _write(tmp_path / "blueprints" / "a.yml", "title: A\nmodels: [echo]\n---\n- id: a\n  prompt: hi\n  shuld: [x]\n")
    other = _write(tmp_path / "compose.yml", "services:\n  web:\n    image: nginx\n")
    analysis = check_file(bp, DiskSource())
    assert analysis is not None and "unknown-key" in {f.code for f in analysis.findings}
    assert check_file(other, DiskSource()) is None
    assert check_file(tmp_path / "missing.yml", DiskSource()) is None
    fifo = tmp_path / "fifo.yml"
    os.mkfifo(fifo)
    assert check_file(fifo, DiskSource()) is None  # refused without blocking
