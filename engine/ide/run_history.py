"""Results of earlier runs, read back from disk for an editor that opens a file.

Every run writes a journal (`<output>/…/<run label>.journal.jsonl`, run/journal.py) whose first line
names the eval file it ran. `load_history(output, path)` reads the journals of `path` found under the
output folder, oldest first, and keeps per item the results of the newest run that covered it, with
that run's time, the fingerprints of the items' text it ran (for "text changed since") and the newest
whole-file run's summary. Nothing is run, and nothing but the journals' first lines is read for runs of
other files. Results files are found beside the journal (the Weval comparison file of the same run
label, the AgentV results file the header names) for "show results".
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..run.events import RunSummary
from ..run.journal import JournalState
from ..run.journal import load as load_journal
from .runs import CellResult, detail_error, model_summary

MAX_JOURNALS = 2000  # journals looked at under one output folder (their first line only)
# Where runs keep their journals (WevalPlan / AgentvPlan.output_folder_parts): only these folders are
# listed, never the artefact folders beside them (thousands of files per run). A journal, and the one
# it replaced (run/journal.py keeps the previous run of a label beside it).
JOURNAL_GLOBS = ("live/blueprints/*/*.journal*.jsonl", "agentv/*/*.journal*.jsonl")
JOURNAL_NAMES = (".journal.jsonl", ".journal.prev.jsonl")


@dataclass
class PastRun:
    journal: Path
    header: dict[str, Any]
    when: float  # the journal's last write: when the run ended or stopped

    @property
    def whole_file(self) -> bool:
        return not self.header.get("select")


@dataclass
class RunHistory:
    results: dict[str, dict[str, CellResult]] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)
    summary: RunSummary | None = None
    summary_when: float | None = None
    journal: str | None = None  # of the newest run
    files: list[str] = field(default_factory=list)  # result files of the newest run

    @property
    def empty(self) -> bool:
        return not self.results and self.summary is None


def same_file(recorded: str, path: Path, base: Path) -> bool:
    """Is the file a journal header names `path`? A relative name is taken from `base` (the CLI's
    working folder is not known; the workspace folder is the usual one)."""
    p = Path(recorded)
    if not p.is_absolute():
        p = base / p
    try:
        return os.path.realpath(p) == os.path.realpath(path)
    except (OSError, ValueError):
        return False


def _header(journal: Path) -> dict[str, Any] | None:
    try:
        with journal.open("rb") as f:
            first = f.readline(1 << 20)
        head = json.loads(first)
    except (OSError, ValueError):
        return None
    return head if isinstance(head, dict) and head.get("t") == "run" else None


def past_runs(output: Path, path: Path, base: Path) -> list[PastRun]:
    """The runs of `path` journaled under `output`, oldest first."""
    runs: list[PastRun] = []
    if not output.is_dir():
        return runs
    found = (journal for pattern in JOURNAL_GLOBS for journal in output.glob(pattern))
    for n, journal in enumerate(found):
        if n >= MAX_JOURNALS:
            break
        if not journal.name.endswith(JOURNAL_NAMES):
            continue
        head = _header(journal)
        if head is None:
            continue
        recorded = head.get("path") or head.get("file")
        if not isinstance(recorded, str) or not same_file(recorded, path, base):
            continue
        try:
            when = journal.stat().st_mtime
        except OSError:
            continue
        runs.append(PastRun(journal, head, when))
    runs.sort(key=lambda r: (str(r.header.get("started") or ""), r.when))
    return runs


def load_history(output: Path, path: Path, base: Path | None = None) -> RunHistory:
    history = RunHistory()
    runs = past_runs(output, path, base or path.parent)
    for run in runs:
        state = load_journal(run.journal)
        cells = _cells(state, run.when)
        recorded = run.header.get("fp")
        fps: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        for item, by_model in cells.items():
            history.results[item] = by_model  # a newer run of the item replaces the older one whole
            if item in fps:
                history.fingerprints[item] = str(fps[item])
            else:
                history.fingerprints.pop(item, None)
        if run.whole_file and cells:
            history.summary = _summary(run, cells, state.done)
            history.summary_when = run.when
        history.journal = str(run.journal)
        history.files = result_files(run)
    return history


def _cells(state: JournalState, when: float) -> dict[str, dict[str, CellResult]]:
    out: dict[str, dict[str, CellResult]] = {}
    answers = {cell: str(turns[max(turns)].get("text") or "") for cell, turns in state.turns.items() if turns}
    for cell, rec in state.failures.items():
        out.setdefault(cell.item, {})[cell.model] = CellResult(cell.model, error=str(rec.get("error") or "failed"),
                                                               when=when)
    for cell, rec in state.scores.items():
        found = rec.get("r")
        details: dict[str, Any] = found if isinstance(found, dict) else {}
        score = rec.get("s")
        out.setdefault(cell.item, {})[cell.model] = CellResult(
            cell.model, score=float(score) if isinstance(score, int | float) else None,
            verdict=str(rec["v"]) if rec.get("v") else None, error=detail_error(details),
            answer=answers.get(cell), details=details, when=when)
    for cell, text in answers.items():  # answered, never scored: the run stopped in between
        by_model = out.setdefault(cell.item, {})
        if cell.model not in by_model:
            by_model[cell.model] = CellResult(cell.model, answer=text, cancelled=not state.done, when=when)
    return out


def _summary(run: PastRun, cells: dict[str, dict[str, CellResult]], done: bool) -> RunSummary:
    per_model: dict[str, list[CellResult]] = {}
    for by_model in cells.values():
        for model, cell in by_model.items():
            per_model.setdefault(model, []).append(cell)
    return RunSummary(kind=str(run.header.get("kind") or ""), run_label=str(run.header.get("run_label") or ""),
                      models=tuple(model_summary(m, c) for m, c in per_model.items()), interrupted=not done)


def result_files(run: PastRun) -> list[str]:
    """The run's results files beside its journal, newest first."""
    folder = run.journal.parent
    results = run.header.get("results")
    if isinstance(results, str) and results:  # AgentV names its results file in the header
        candidate = folder / Path(results).name
        return [str(candidate)] if candidate.is_file() else []
    label = str(run.header.get("run_label") or "")
    if not label:
        return []
    found = sorted(folder.glob(f"{glob_escape(label)}_*_comparison.json"),
                   key=lambda p: p.stat().st_mtime if p.exists() else 0, reverse=True)
    return [str(p) for p in found]


def result_files_of(journal: Path) -> list[str]:
    """The results files of the run `journal` records (none when it wrote none)."""
    head = _header(journal)
    if head is None:
        return []
    try:
        when = journal.stat().st_mtime
    except OSError:
        return []
    return result_files(PastRun(journal, head, when))


def glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


__all__ = ["PastRun", "RunHistory", "load_history", "past_runs", "result_files", "result_files_of"]
