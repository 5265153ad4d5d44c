"""Which AgentV suites include a tests file: what `evalspec run cases.jsonl` suggests running instead.

A tests file (dataset) has no targets, judges or suite settings of its own, so it cannot be run alone;
the suite that names it (`tests: ./cases.jsonl`, a `file://` item or a glob) can. The search looks in
the dataset's folder tree, from the repository root (a folder with `.git`, at most a few levels up) down,
bounded in files and bytes; candidates are checked, never executed.

Outside a repository a suite's project is its own folder, and it may name only files below it
(SECURITY.md), so the only suites that can include the dataset lie directly in its folder or in one of
its parents: only those files are read, never the folders beside them (the attack run's seventh round saw
a dataset's run read every YAML file of its parent's other subfolders).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..file_source import read_regular_bytes

_LEVELS_UP = 3  # without a `.git`, the dataset's folder and at most this many parents
_MAX_FILES = 5000  # files looked at (names only); a big tree is cut off, not walked for minutes
_MAX_CANDIDATE_BYTES = 1 << 20
_SKIP_DIRS = {"node_modules", "__pycache__", "dist", "build", ".venv", "venv", ".git"}


def search_root(dataset: Path) -> Path:
    """The repository root when one is a few levels up, else the dataset folder's parent (an eval
    folder often keeps datasets in a subfolder); never the file system's root."""
    folder = dataset.resolve().parent
    for d in (folder, *folder.parents)[:_LEVELS_UP + 1]:
        if (d / ".git").exists():
            return d
    parent = folder.parent
    return folder if parent == folder or parent.parent == parent else parent


def _folders(dataset: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """(folder, subfolders, files) to look at: the repository's tree when the dataset is in one, else the
    dataset's folder and its parents up to the search root, each without its subfolders."""
    folder = dataset.resolve().parent
    root = search_root(dataset)
    if (root / ".git").exists():
        yield from os.walk(root)
        return
    for d in (folder, *folder.parents):
        try:
            files = [e.name for e in os.scandir(d) if e.is_file(follow_symlinks=False)]
        except OSError:
            files = []
        yield str(d), [], files
        if d == root:
            return


def suites_including(dataset: Path) -> list[Path]:
    """Suites under the dataset's search root whose tests come (partly) from `dataset`, nearest first."""
    from ..analysis import analyze_file
    from ..detect import FileKind

    target = dataset.resolve()
    found: list[Path] = []
    seen = 0
    for folder, dirs, files in _folders(dataset):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and (not d.startswith(".") or d == ".agentv"))
        seen += len(dirs)
        for name in sorted(files):
            seen += 1
            if seen > _MAX_FILES:
                return _nearest(found, target)
            if not name.endswith((".yaml", ".yml")):
                continue
            path = Path(folder) / name
            try:
                data = read_regular_bytes(path, _MAX_CANDIDATE_BYTES)  # a FIFO named x.yaml blocked the walk
            except (OSError, ValueError):
                continue
            if data is None:
                continue
            text = data.decode("utf-8", errors="replace")
            # Cheap first: a suite that includes the file names it, or uses a glob that may match it.
            if "tests" not in text or (target.name not in text and "*" not in text):
                continue
            analysis = analyze_file(path, env={})
            suite = analysis.suite
            if analysis.kind is FileKind.AGENTV and suite is not None and any(
                    _same(p, target) for p in suite.tests_files):
                found.append(path)
    return _nearest(found, target)


def _same(p: Path, target: Path) -> bool:
    try:
        return p.resolve() == target
    except OSError:
        return False


def _nearest(found: list[Path], target: Path) -> list[Path]:
    def distance(p: Path) -> int:
        common = os.path.commonpath([str(p.resolve().parent), str(target.parent)])
        return len(p.resolve().parent.parts) + len(target.parent.parts) - 2 * len(Path(common).parts)

    return sorted(found, key=lambda p: (distance(p), str(p)))
