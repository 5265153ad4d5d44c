"""The eval files a command is given: files named, and folders walked (hidden and build folders skipped).

`iter_eval_files` is what `check` reads; `eval_files_in` what `run DIR` runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

_SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".ruff_cache",
              "dist", "build"}
_EXTENSIONS = (".yml", ".yaml", ".json")


class UsageError(Exception):
    pass


def iter_eval_files(paths: Sequence[str]) -> Iterator[tuple[Path, bool]]:
    """Files to check: (path, named explicitly). Folders are walked; hidden and build folders skipped."""
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            yield p, True
        elif p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and (not d.startswith(".") or d == ".agentv"))
                for name in sorted(files):
                    if name.endswith(_EXTENSIONS):
                        yield Path(root) / name, False
        else:
            raise UsageError(f"no such file or folder: {raw}")


def eval_files_in(folder: Path) -> list[Path]:
    """The Weval blueprints and AgentV eval suites below `folder` (`evalspec run DIR`), by name or content
    as `check` finds them. Not runnable alone, so left out: AgentV tests files (a dataset, or a YAML list
    of tests a suite includes) and targets files."""
    from .detect import FileKind, kind_from_name

    out = []
    for path, _ in iter_eval_files([str(folder)]):
        if path.suffix.lower() in (".jsonl", ".csv", ".json") and kind_from_name(path) is None:
            continue
        kind = kind_from_name(path)
        if kind is None:
            from .analysis import analyze_file

            try:
                a = analyze_file(path)
            except Exception:  # a bug on one file: `check` reports it; not run here
                continue
            roots = a.parsed.documents if a.parsed is not None else []
            if a.kind is FileKind.AGENTV and not (roots and isinstance(roots[0].root, Mapping)):
                continue
            kind = a.kind
        if kind in (FileKind.WEVAL, FileKind.AGENTV):
            out.append(path)
    return out
