"""Results of earlier runs, read back from disk for an editor that opens a file.

Every run keeps a database (`<output>/…/<run label>.run.db`, run/journal/database.py) whose run row
names the eval file it ran (an earlier evalspec's journal, `….journal.jsonl`, is read too). `load_history(output, path)` reads the journals of `path` found under the
output folder, oldest first, and keeps per item the results of the newest run that covered it, with
that run's time, the fingerprints of the items' text it ran (for "text changed since") and the newest
run's summary (of one prompt too: what the editor showed when that run ended, so a restart changes
nothing; the calls a cancel stopped are cancelled cells). Weval comparison files with no journal beside them (the reference tool's,
or a journal deleted) are read too, matched by their `sourceBlueprintFileName`. Nothing is run, and
only the first line of a journal (the first 64 KB of a comparison file) is read for runs of other
files. Results files are found beside the journal (the Weval comparison file of the same run label,
the AgentV results file the header names) for "show results".
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jsonio import loads
from ..own_files import open_own
from ..run.events import RunSummary
from ..run.journal.records import RunHeader
from ..run.journal.run_store import JournalState, read_header
from ..run.journal.run_store import load as load_journal
from ..scoring.agentv_aggregate import verdict
from .runs import CellResult, RunHistory, detail_error, model_summary

MAX_JOURNALS = 2000  # journals looked at under one output folder (their first line only)
# Where runs keep their journals (WevalPlan / AgentvPlan.output_folder_parts): only these folders are
# listed, never the artefact folders beside them (thousands of files per run). A database, and the one
# it replaced (run/journal/run_store.py keeps the previous run of a label beside it); an earlier
# evalspec's journals.
JOURNAL_GLOBS = ("live/blueprints/*/*.run*.db", "agentv/*/*.run*.db",
                 "live/blueprints/*/*.journal*.jsonl", "agentv/*/*.journal*.jsonl")
JOURNAL_NAMES = (".run.db", ".run.prev.db", ".journal.jsonl", ".journal.prev.jsonl")


@dataclass
class PastRun:
    journal: Path
    header: RunHeader
    when: float  # the journal's last write: when the run ended or stopped

    @property
    def whole_file(self) -> bool:
        return not self.header.select


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
        head = read_header(journal, fingerprints=False)
        if head is None:
            continue
        recorded = head.path or head.file
        if not recorded or not same_file(recorded, path, base):
            continue
        head = read_header(journal)  # with the items' fingerprints: a run of this file
        if head is None:
            continue
        try:
            when = _last_write(journal)
        except OSError:
            continue
        runs.append(PastRun(journal, head, when))
    runs.sort(key=lambda r: r.when)
    return runs


def _last_write(journal: Path) -> float:
    """When the run last wrote to its database: a running or killed run's rows may still be in the
    write-ahead log beside it."""
    when = journal.stat().st_mtime
    try:
        return max(when, Path(f"{journal}-wal").stat().st_mtime)
    except OSError:
        return when


@dataclass
class PastComparison:
    """A Weval comparison file with no journal beside it (written by the reference tool, or its journal
    was deleted): its results are read too, with no fingerprints (never marked as older than the text)."""

    file: Path
    when: float


_SOURCE_NAME = re.compile(rb'"sourceBlueprintFileName"\s*:\s*("(?:[^"\\]|\\.)*")')
HEAD_BYTES = 64 * 1024  # the comparison file's identity fields come first
# A comparison file larger than this is not read back into the editor (`evalspec report` still reads it):
# 100,000 cells are ~110 MB; 3 GB of zeros after a valid head (a few MB in a git clone) was read whole.
COMPARISON_MAX_BYTES = 256 << 20


def _read_comparison(file: Path, limit: int | None = None) -> bytes | None:
    """The first `limit` bytes (all, without one) of a comparison file in the output folder, opened as an
    own file (never through a link: a cloned results folder could point one at the editor's own stdin,
    /proc/self/fd/0, or a FIFO); None when it is larger than COMPARISON_MAX_BYTES or cannot be read."""
    try:
        with os.fdopen(open_own(file, os.O_RDONLY), "rb") as f:
            if os.fstat(f.fileno()).st_size > COMPARISON_MAX_BYTES:
                return None
            return f.read(limit if limit is not None else COMPARISON_MAX_BYTES + 1)
    except OSError:  # NotOwnFile included
        return None


def past_comparisons(output: Path, path: Path) -> list[PastComparison]:
    found: list[PastComparison] = []
    for n, file in enumerate(output.glob("live/blueprints/*/*_comparison.json")):
        if n >= MAX_JOURNALS:
            break
        label = file.name.rsplit("_", 2)[0]
        if any((file.parent / f"{label}{suffix}").exists() for suffix in JOURNAL_NAMES):
            continue  # the journal of that run label says it (and newer runs of it) better
        try:
            head = _read_comparison(file, HEAD_BYTES)
            m = _SOURCE_NAME.search(head) if head is not None else None
            if m is None or json.loads(m.group(1)) != path.name:
                continue
            found.append(PastComparison(file, file.stat().st_mtime))
        except (OSError, ValueError):
            continue
    return found


def _comparison_cells(data: dict[str, Any], when: float) -> dict[str, dict[str, CellResult]]:
    out: dict[str, dict[str, CellResult]] = {}
    answers = data.get("allFinalAssistantResponses") or {}
    errors = data.get("errors") or {}
    coverage = (data.get("evaluationResults") or {}).get("llmCoverageScores") or {}
    for pid, by_model in answers.items():
        if not isinstance(by_model, dict):
            continue
        for model, text in by_model.items():
            if model in ("IDEAL_BENCHMARK", "ideal"):
                continue
            error = (errors.get(pid) or {}).get(model) if isinstance(errors.get(pid), dict) else None
            found = (coverage.get(pid) or {}).get(model) if isinstance(coverage.get(pid), dict) else None
            details: dict[str, Any] = found if isinstance(found, dict) else {}
            score = details.get("avgCoverageExtent")
            value = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
            out.setdefault(str(pid), {})[str(model)] = CellResult(
                str(model), score=value, verdict=verdict(value) if value is not None else None,
                error=str(error) if error else detail_error(details), answer=None if error else str(text or ""),
                details=details, when=when)
    return out


def load_history(output: Path, path: Path, base: Path | None = None) -> RunHistory:
    history = RunHistory()
    sources: list[PastRun | PastComparison] = [*past_runs(output, path, base or path.parent),
                                               *past_comparisons(output, path)]
    sources.sort(key=lambda s: s.when)  # oldest first: a newer run of an item replaces an older one
    for source in sources:
        if isinstance(source, PastComparison):
            whole = _read_comparison(source.file)
            try:
                data = loads(whole) if whole is not None and len(whole) <= COMPARISON_MAX_BYTES else None  # too deep: ValueError too
            except ValueError:
                continue
            if not isinstance(data, dict):
                continue
            cells = _comparison_cells(data, source.when)
            for item, by_model in cells.items():
                history.results[item] = by_model
                history.fingerprints.pop(item, None)
            if cells:
                history.summary = _summary_of(str(data.get("runLabel") or ""), "weval", cells, True)
                history.summary_when = source.when
                history.cancelled = False
                history.files = [str(source.file)]
                history.journal = None
            continue
        run = source
        try:
            state = load_journal(run.journal)
        except (OSError, ValueError, sqlite3.Error):  # removed or damaged since its header was read
            continue
        cells = _cells(state, run.when)
        fps = (state.header or run.header).fp  # a resume of a changed file writes the header again
        for item, by_model in cells.items():
            history.results[item] = by_model  # a newer run of the item replaces the older one whole
            if item in fps:
                history.fingerprints[item] = str(fps[item])
            else:
                history.fingerprints.pop(item, None)
        if cells:  # the newest run's, as the editor showed it when that run ended (one prompt's too)
            history.summary = _summary(run, cells, state.done)
            history.summary_when = run.when
            history.cancelled = state.stopped == "cancelled"
        history.journal = str(run.journal)
        history.files = result_files(run)
    return history


def _cells(state: JournalState, when: float) -> dict[str, dict[str, CellResult]]:
    out: dict[str, dict[str, CellResult]] = {}
    answers = {cell: turns[max(turns)].text for cell, turns in state.turns.items() if turns}
    for cell, failed in state.failures.items():
        out.setdefault(cell.item, {})[cell.model] = CellResult(cell.model, error=failed.error or "failed", when=when)
    for cell, rec in state.scores.items():
        details = rec.result
        score = rec.score
        out.setdefault(cell.item, {})[cell.model] = CellResult(
            cell.model, score=float(score) if score is not None else None,
            verdict=rec.verdict or None, error=detail_error(details),
            answer=answers.get(cell), details=details, when=when)
    for cell, text in answers.items():  # answered, never scored: the run stopped in between
        by_model = out.setdefault(cell.item, {})
        if cell.model not in by_model:
            by_model[cell.model] = CellResult(cell.model, answer=text, cancelled=not state.done, when=when)
    for cell in state.stopped_cells:  # its call was in flight when the run was cancelled
        by_model = out.setdefault(cell.item, {})
        if cell.model not in by_model:
            by_model[cell.model] = CellResult(cell.model, cancelled=True, when=when)
    return out


def _summary(run: PastRun, cells: dict[str, dict[str, CellResult]], done: bool) -> RunSummary:
    return _summary_of(run.header.run_label, run.header.kind, cells, done)


def _summary_of(label: str, kind: str, cells: dict[str, dict[str, CellResult]], done: bool) -> RunSummary:
    per_model: dict[str, list[CellResult]] = {}
    for by_model in cells.values():
        for model, cell in by_model.items():
            per_model.setdefault(model, []).append(cell)
    return RunSummary(kind=kind, run_label=label, models=tuple(model_summary(m, c) for m, c in per_model.items()),
                      interrupted=not done)


def result_files(run: PastRun) -> list[str]:
    """The run's results files beside its journal, newest first."""
    folder = run.journal.parent
    results = run.header.results
    if results:  # the run row names its results file (AgentV from the start, Weval from its first export)
        candidate = folder / Path(results).name
        return [str(candidate)] if candidate.is_file() else []
    label = run.header.run_label
    if not label:
        return []
    found = sorted(folder.glob(f"{glob_escape(label)}_*_comparison.json"),
                   key=lambda p: p.stat().st_mtime if p.exists() else 0, reverse=True)
    return [str(p) for p in found]


def result_files_of(journal: Path) -> list[str]:
    """The results files of the run `journal` records (none when it wrote none)."""
    head = read_header(journal)
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
