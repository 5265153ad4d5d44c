"""Large files: the editor keeps its 4 MB cap (analysed on every keystroke); `evalspec check` and `run`
read files up to 32 MB (a generated 100,000-prompt blueprint is 16 MB), and a bigger file is refused
with one finding, without being read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.analysis import analyze, analyze_file
from evalspec.cli import main
from evalspec.source import MAX_BYTES, MAX_FILE_BYTES


def _big_blueprint(path: Path) -> Path:
    """Three prompts of 1.5 MB each: over the editor's cap, far under the command line's."""
    body = "word " * 300_000
    lines = ["title: Big prompts", "models: [echo]", "---"]
    for i in range(3):
        lines += [f"- id: big{i}", f"  prompt: \"{i} {body}\"", "  should:", f"    - $contains: \"{i} word\""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert MAX_BYTES < path.stat().st_size < MAX_FILE_BYTES
    return path


def test_the_command_line_checks_and_runs_what_the_editor_refuses(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bp = _big_blueprint(tmp_path / "big.weval.yml")
    text = bp.read_text(encoding="utf-8")
    in_editor = analyze(text, str(bp))
    assert [f.code for f in in_editor.findings] == ["file-too-large"]
    assert "in the editor" in in_editor.findings[0].message and "32 MB" in in_editor.findings[0].message
    on_disk = analyze_file(bp)
    assert not on_disk.errors and on_disk.blueprint is not None and len(on_disk.blueprint.prompts) == 3
    assert main(["check", str(bp)]) == 0
    out = tmp_path / "out"
    assert main(["run", str(bp), "-o", str(out), "--eval-method", "none", "--no-report"]) == 0
    (comparison,) = out.glob("live/blueprints/*/*_comparison.json")
    data = json.loads(comparison.read_bytes())
    assert data["promptIds"] == ["big0", "big1", "big2"]
    scores = data["evaluationResults"]["llmCoverageScores"]
    assert all(scores[p]["echo[temp:0]"]["avgCoverageExtent"] == 1.0 for p in data["promptIds"])


def test_a_file_over_the_command_line_cap_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    bp = tmp_path / "huge.weval.yml"
    with bp.open("w", encoding="utf-8") as f:
        f.write("title: huge\nmodels: [echo]\n---\n- id: a\n  prompt: hi\n")
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: 32 MB on paper, nothing on the disk
    unnamed = tmp_path / "huge.yml"
    unnamed.write_bytes(b"")
    with unnamed.open("r+b") as f:
        f.write(b"title: huge\nmodels: [echo]\n---\n- id: a\n  prompt: hi\n  should: [$contains: hi]\n")
        f.truncate(MAX_FILE_BYTES + 1)

    def no_reading(self: Path) -> bytes:
        raise AssertionError(f"{self} was read")

    monkeypatch.setattr(Path, "read_bytes", no_reading)
    a = analyze_file(bp)
    assert [f.code for f in a.findings] == ["file-too-large"]
    assert "32.0 MB" in a.findings[0].message and "up to 32 MB" in a.findings[0].message
    assert main(["check", str(bp), str(unnamed)]) == 1
    out = capsys.readouterr().out
    assert "huge.weval.yml:1:1: error[file-too-large]" in out and "huge.yml:1:1: error[file-too-large]" in out
    assert main(["run", str(bp), "-o", str(tmp_path / "out")]) == 2
    assert "evalspec checks files up to 32 MB" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
