"""File paths written in eval files: listing candidates for completion, resolving them for links.

Only directory listings and stats: nothing a file says is opened or run here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..file_source import is_within

if TYPE_CHECKING:
    from ..analysis import Analysis

MAX_ENTRIES = 300
_SKIP = frozenset((".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"))
FILE_SCHEME = "file://"
_GLOB = frozenset("*?[")


def base_folder(analysis: Any) -> Path | None:
    path: Path | None = analysis.path
    return path.parent if path is not None else None


def entries(folder: Path, typed: str, *, dirs_only: bool = False, extensions: tuple[str, ...] = (),
            project: Path | None = None) -> list[tuple[str, bool]]:
    """(name, is_dir) of the entries a typed relative path could continue with, directories first.
    `project`: the eval file's project (its real path); a folder outside it (`../..`, `/proc/self/`, a
    link pointing out) is not listed: a reference there would be a file-outside-project finding, and the
    server shows nothing of the disk beyond the project (SECURITY.md)."""
    if "\x00" in typed:
        return []  # no path holds a NUL (the OS refuses it with ValueError)
    head = typed.rsplit("/", 1)[0] + "/" if "/" in typed else ""
    name_part = typed[len(head):]
    where = (folder / head) if head else folder
    out: list[tuple[str, bool]] = []
    try:
        if project is not None and not is_within(os.path.realpath(where), str(project)):
            return []
        with os.scandir(where) as it:
            for e in it:
                if e.name in _SKIP or (e.name.startswith(".") and not name_part.startswith(".")):
                    continue
                try:
                    is_dir = e.is_dir()
                except OSError:
                    continue
                if not is_dir and (dirs_only or (extensions and not e.name.lower().endswith(extensions))):
                    continue
                out.append((head + e.name, is_dir))
                if len(out) >= MAX_ENTRIES:
                    break
    except (OSError, ValueError):
        return []
    out.sort(key=lambda x: (not x[1], x[0].lower()))
    return out


def resolve(folder: Path | None, value: str, *, must_be_file: bool = True) -> Path | None:
    """The existing file (or folder) a relative or absolute path names, or None."""
    if folder is None or not value or "\n" in value or "\x00" in value or len(value) > 1024:
        return None
    text = value[len(FILE_SCHEME):] if value.startswith(FILE_SCHEME) else value
    if any(c in _GLOB for c in text) or "://" in text or "{{" in text:
        return None
    p = Path(text)
    if not p.is_absolute():
        p = folder / p
    try:
        if p.is_file() or (not must_be_file and p.is_dir()):
            return p.resolve()
    except OSError:
        return None
    return None


def project(analysis: Analysis) -> Path | None:
    """The real path of the eval file's project: its repository, else its folder (agentv/files.py)."""
    return analysis.memoised("ide.project", _project)


def _project(analysis: Analysis) -> Path | None:
    from ..agentv.files import FileSystem

    folder = base_folder(analysis)
    return FileSystem().real_root(folder) if folder is not None else None


def search_roots(analysis: Analysis) -> list[Path]:
    """Where AgentV looks for a relative reference: the eval file's folder, then each parent up to the
    repository root (engine/agentv/files.py); computed once per analysis."""
    return analysis.memoised("ide.search_roots", _search_roots)


def _search_roots(analysis: Analysis) -> list[Path]:
    from ..agentv.files import FileSystem

    folder = base_folder(analysis)
    return list(FileSystem().search_roots(folder)) if folder is not None else []


def resolve_searched(analysis: Any, value: str) -> Path | None:
    """A reference AgentV resolves against its search roots (content block files, judge prompts)."""
    for root in search_roots(analysis):
        hit = resolve(root, value)
        if hit is not None:
            return hit
    return None


_CUSTOM_EXTENSIONS = (".ts", ".js", ".mts", ".mjs")


def custom_assertions(analysis: Analysis) -> dict[str, Path]:
    """Custom assertion types: `.agentv/assertions/<type>.ts` (or .js) in the search roots, nearest first."""
    return analysis.memoised("ide.custom_assertions", _custom_assertions)


def _custom_assertions(analysis: Analysis) -> dict[str, Path]:
    found_types: dict[str, Path] = {}
    for root in search_roots(analysis):
        folder = root / ".agentv" / "assertions"
        try:
            found = sorted(folder.iterdir()) if folder.is_dir() else []
        except OSError:
            found = []
        for p in found[:MAX_ENTRIES]:
            if p.suffix in _CUSTOM_EXTENSIONS and p.stem not in found_types:
                found_types[p.stem] = p
    return found_types


def looks_like_path(text: str) -> bool:
    """A command-line word that names a file (`./check.py`, `judges/x.ts`), not a program (`bun`)."""
    return text.startswith((".", "/", "~")) or "/" in text or text.endswith(
        (".py", ".ts", ".js", ".sh", ".md", ".txt", ".yaml", ".yml", ".json", ".jsonl", ".csv", ".mjs"))
