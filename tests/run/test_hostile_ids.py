"""Prompt ids that are no file names (bench/attack.py, fourth round, `names`): a 5,000-character id or
300 emoji stopped the artefacts with 'File name too long' (exit 2, no report), and `a/b` shared its
artefact files with `a_b`. Each id now has a file of its own, read back by the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalspec.cli import main
from evalspec.own_files import MAX_NAME_BYTES

from .conftest import AGENTV_TARGETS, SmartFake, env_for, write

IDS = ["x" * 5000, "\U0001f642" * 300, "a/b", "a_b", "a\x00b", "..", ".", "_", "ok"]


def _blueprint(tmp_path: Path) -> Path:
    lines = ["title: t", "models: [echo]", "---"]
    for i, ident in enumerate(IDS):
        lines += [f"- id: {json.dumps(ident, ensure_ascii=False)}", f"  prompt: question {i}",
                  "  should: [$contains: question]"]
    bp = tmp_path / "b.yml"
    bp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return bp


def test_every_prompt_id_gets_an_artefact_file_of_its_own(tmp_path: Path) -> None:
    assert main(["run", str(_blueprint(tmp_path)), "-o", str(tmp_path / "out")]) == 0
    [run_dir] = [p for p in (tmp_path / "out").rglob("*") if p.is_dir() and (p / "core.json").is_file()]
    files = sorted((run_dir / "responses").iterdir())
    assert len(files) == len(IDS)
    assert all(len(f.name.encode()) <= MAX_NAME_BYTES + len(".json") for f in files)
    # Each file holds its own prompt's answer (the echo model answers with the prompt).
    asked = sorted(re.search(r"question (\d+)", f.read_text(encoding="utf-8")).group(1) for f in files)  # type: ignore[union-attr]
    assert asked == sorted(str(i) for i in range(len(IDS)))
    # The report reads the artefact folder back.
    assert main(["report", str(run_dir), "-o", str(tmp_path / "r.html")]) == 0


@pytest.mark.parametrize("name", ["../../escaped", "a/b", "..", "x" * 3000])
def test_an_agentv_suite_name_keeps_its_results_in_the_output_folder(tmp_path: Path, smart: SmartFake,
                                                                      name: str, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # Before: a suite named ../../escaped wrote its journal, results and report two folders up. Such a name
    # breaks AgentV's metadata schema (^[a-z0-9-]+$, 64 characters), so its loader refuses the file, and so
    # does evalspec now (issue 25): nothing is run, nothing is written.
    project = tmp_path / "a" / "b"
    write(project / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(project / "s.eval.yaml", f"name: {json.dumps(name)}\ndescription: d\nexecution:\n  target: default\n"
                                            "tests:\n  - {id: t, input: hi, criteria: c, assert: [{type: contains, value: hi}]}\n")
    for key, value in env_for(smart).items():
        monkeypatch.setenv(key, value)
    assert main(["run", str(suite), "-o", str(project / "out")]) == 2
    assert "invalid-name" in capsys.readouterr().err
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    assert written == []
    assert smart.chat_requests() == []
