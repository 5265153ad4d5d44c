"""Every runnable file of ../shared/corpus runs offline end to end: `-m echo`, judged by `echo` (whose
answers are not a judge's classification, so every judged point takes the judge-error path), with
every evaluation method. A run must finish with exit 0 (or 3, naming the cause, when every cell failed)
and leave its results on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.analysis import analyze_file
from evalspec.cli import main
from evalspec.detect import FileKind

from ..test_corpus import corpus_files


def runnable() -> list[Path]:
    out = []
    for path in corpus_files():
        analysis = analyze_file(path, env={})
        if analysis.kind in (FileKind.WEVAL, FileKind.AGENTV) and not analysis.errors \
                and path.suffix not in DATASETS:
            out.append(path)
    return out


DATASETS = (".jsonl", ".csv")  # tests files: run through the suite that includes them
RUNNABLE = runnable()
CORPUS_DATASETS = [p for p in corpus_files() if p.suffix in DATASETS
                   and analyze_file(p, env={}).kind is FileKind.AGENTV]


@pytest.mark.parametrize("path", CORPUS_DATASETS, ids=lambda p: p.name)
def test_running_a_corpus_dataset_names_its_suite(path: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(path), "-m", "echo", "-o", str(tmp_path / "out")]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Run the suite that includes it instead: evalspec run " in last, last
    suite = Path(last.split("evalspec run ")[-1].split(" (also")[0])
    assert analyze_file(suite, env={}).kind is FileKind.AGENTV


def test_most_of_the_corpus_is_runnable() -> None:
    assert len(RUNNABLE) >= 140


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.name)
def test_corpus_file_runs_offline(path: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    # --allow-outside-files: the corpus copy has no .git, so its examples' `../skills/…` references leave
    # each eval file's folder; in AgentV's repository they are inside it.
    code = main(["run", str(path), "-m", "echo", "--judge", "echo", "--eval-method", "all",
                 "-o", str(tmp_path / "out"), "--no-cache", "--allow-outside-files"])
    captured = capsys.readouterr()
    if code == 3:
        # Every cell failed for a reason outside evalspec (a workspace script the corpus does not ship):
        # the run says so in its last line and still writes what it has.
        assert "evalspec run: every call failed" in captured.err.strip().splitlines()[-1], captured.err
    else:
        assert code == 0, captured.err
    assert "Traceback" not in captured.err
    written = [p for p in (tmp_path / "out").rglob("*") if p.suffix in (".json", ".jsonl")
               and not p.name.endswith(".journal.jsonl")]
    assert written, "no results written"
    for p in written:
        if p.suffix == ".json":
            json.loads(p.read_text(encoding="utf-8"))
        else:
            for line in p.read_text(encoding="utf-8").splitlines():
                json.loads(line)
