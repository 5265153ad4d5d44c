"""The eval files of a workspace, and their findings, for the editor's whole-project Problems list.

`eval_files(roots)` walks the workspace folders for YAML and JSON files, bounded: at most MAX_LISTED
directory entries looked at and MAX_FILES files returned, no links followed, hidden folders and the usual
dependency and build folders skipped, files over the editor's size limit (source.MAX_BYTES) left out.
`check_file(path, source)` reads one (a regular file only: source.read_text refuses FIFOs and devices)
and analyses it with `source` for what it refers to; None when it is not an eval file or cannot be read.
Checking executes nothing from the file. Runs in an engine worker: a scan nobody waits for any more
is stopped with its worker.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..source import MAX_BYTES

MAX_FILES = 2_000  # eval-file candidates checked per scan
MAX_LISTED = 50_000  # directory entries looked at per scan
SUFFIXES = (".yml", ".yaml", ".json")
SKIP_DIRS = frozenset(("node_modules", "__pycache__", "dist", "build", "venv", "site", "results"))


def eval_files(roots: list[Path], *, max_files: int = MAX_FILES, max_listed: int = MAX_LISTED) -> list[Path]:
    """The candidate files under `roots`, in a stable order (sorted per folder), bounded."""
    out: list[Path] = []
    seen: set[Path] = set()
    listed = 0
    for root in roots:
        for path in _walk(root):
            listed += 1
            if listed > max_listed or len(out) >= max_files:
                return out
            if path in seen:
                continue
            seen.add(path)
            out.append(path)
    return out


def _walk(root: Path) -> Iterator[Path]:
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        folders: list[Path] = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue  # links are not followed: a workspace may not reach outside itself
                if entry.is_dir():
                    if not entry.name.startswith(".") and entry.name not in SKIP_DIRS:
                        folders.append(Path(entry.path))
                    continue
                if entry.is_file() and entry.name.endswith(SUFFIXES) and entry.stat().st_size <= MAX_BYTES:
                    yield Path(entry.path)
            except OSError:
                continue
        stack.extend(reversed(folders))


def check_file(path: Path, source: Any) -> Any:
    """The analysis of an eval file at `path` (read through `source`); None for other files."""
    from ..analysis import analyze
    from ..detect import FileKind

    try:
        text = source.read_text(path, MAX_BYTES)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if text is None:
        return None
    analysis = analyze(text, path, source=source)
    return analysis if analysis.kind is not FileKind.NONE else None
