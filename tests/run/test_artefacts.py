"""The artefact folder on disk holds exactly what the comparison file implies, and no staging folder is left."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evalspec.run.write.weval_results import _artefacts, core_object

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hello.weval.yml"


def test_artefacts_are_written_only_when_asked_for(tmp_path: Path) -> None:
    """Without --artefacts a run leaves its database, the comparison and cost files and the report: a
    handful of files whatever the number of prompts (the artefact folder is a file per prompt and model)."""
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(EXAMPLE), "-m", "echo", "-m", "echo:second",
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    [comparison] = out.rglob("*_comparison.json")
    left = sorted(p.name for p in comparison.parent.iterdir())
    assert not (comparison.parent / comparison.name.removesuffix("_comparison.json")).exists()
    assert not list(out.rglob("core.json"))
    assert [n for n in left if not n.endswith(("_comparison.json", "_cost.json"))] == [
        next(n for n in left if n.endswith(".run.db")), "report.html"], left


def test_artefacts_match_the_comparison_file(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(EXAMPLE), "-m", "echo", "-m", "echo:second",
                           "-o", str(out), "--artefacts"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    [comparison] = out.rglob("*_comparison.json")
    full = json.loads(comparison.read_text())
    run_dir = comparison.with_name(comparison.name.removesuffix("_comparison.json"))
    expected = {rel: value for rel, value in _artefacts(full)}
    expected["core.json"] = core_object(full)
    on_disk = {p.relative_to(run_dir).as_posix(): json.loads(p.read_text()) for p in run_dir.rglob("*.json")}
    assert on_disk == json.loads(json.dumps(expected))
    assert len(expected) > 10
    assert not list(comparison.parent.glob(".*partial*")), "the staging folder must be renamed into place"
