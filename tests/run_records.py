"""Tests read a run's database as the records it holds, each as its JSON form (`Record.to_json()`: the
short keys the journal had, `"t"` first): `run_records(out)` for the one database under an output folder."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalspec.run.journal.records import RunHeader
from evalspec.run.journal.run_store import Journal, open_journal, records


def databases(folder: Path) -> list[Path]:
    """The run databases under `folder` (not the copy a fresh run keeps of the one before)."""
    return sorted(folder.rglob("*.run.db"))


def records_of(path: Path) -> list[dict[str, Any]]:
    """Every record of one database as JSON; none while it does not exist yet or cannot be read."""
    try:
        return [r.to_json() for r in records(path)]
    except (OSError, ValueError, sqlite3.Error):
        return []


def run_records(folder: Path) -> list[dict[str, Any]]:
    """The records of the first run database under `folder` ([] when there is none yet)."""
    found = databases(folder)
    return records_of(found[0]) if found else []


def journal_at(path: Path, *, fresh: bool) -> Journal:
    """The run database at `path` opened as a run opens it (its lock taken): emptied when `fresh`, else as
    `--resume` finds it; a minimal header names the run (its label: the file's name)."""
    header = RunHeader(kind="weval", file="bp.yml", run_label=path.name.split(".")[0], started="s")
    journal, _ = open_journal(path, resume=not fresh, header=header)
    return journal


def kill_once(proc: subprocess.Popen[Any], ready: Callable[[], bool], timeout: float = 30) -> None:
    """SIGKILL `proc` as soon as `ready()` holds (it must still be running then; within `timeout` s)."""
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            assert proc.poll() is None, "the run ended before it could be interrupted"
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
