"""A bounded expansion of tests globs (`file://**/*.yaml`), the way Python's `glob(recursive=True)` reads
them, but safe to run on every keystroke of an editor.

A plain recursive glob follows symlinked folders (a link `a -> .` makes `**` loop until the path is too
long) and goes wherever the pattern says (`/**/*.yaml` walks the whole disk). Here `**` never descends
into a symlinked folder and never enters a folder twice (by device and inode); no folder outside the
project root is listed; and the walk stops after a fixed number of entries, which the caller reports.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_ENTRIES = 20_000  # directory entries one suite's globs may look at
_MAGIC = frozenset("*?[")


@dataclass
class GlobResult:
    matches: list[str] = field(default_factory=list)  # sorted; relative to `base` unless the pattern is absolute
    outside: str | None = None  # the folder outside the project the pattern would search
    truncated: bool = False  # stopped after the entry budget; `matches` is incomplete
    visited: int = 0  # directory entries looked at


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def expand(pattern: str, base: Path, root: Path, budget: int = MAX_ENTRIES) -> GlobResult:
    """The files `pattern` matches from `base`, never listing a folder outside `root`."""
    out = GlobResult()
    absolute = os.path.isabs(pattern)
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    # The literal folders before the first wildcard: joined without listing anything.
    lead = 0
    while lead < len(parts) - 1 and not (_MAGIC & set(parts[lead])):
        lead += 1
    start_shown = os.path.join(*parts[:lead]) if lead else ""
    start = os.path.join(os.sep if absolute else str(base), start_shown)
    if absolute:
        start_shown = start
    real_root = os.path.realpath(root)
    real_start = os.path.realpath(start)
    if not _inside(real_start, real_root):
        out.outside = start
        return out
    rest = parts[lead:]
    found: set[str] = set()
    seen: set[tuple[int, int]] = set()
    # (folder on disk, folder as shown, index of the part to match in it)
    stack: list[tuple[str, str, int]] = [(start, start_shown, 0)]
    while stack:
        folder, shown, i = stack.pop()
        part = rest[i]
        last = i == len(rest) - 1
        if part == "**":
            if not _enter(folder, seen):
                continue
            if not last:
                stack.append((folder, shown, i + 1))  # `**` matches no folder at all, too
            for entry, entry_shown in _listing(folder, shown, out, budget):
                if entry.name.startswith("."):
                    continue  # as glob: `**` skips hidden names
                if last and _is_file(entry):
                    found.add(entry_shown)
                if _is_dir(entry, follow=False):
                    stack.append((entry.path, entry_shown, i))
            if out.truncated:
                break
            continue
        if not (_MAGIC & set(part)):
            path, path_shown = os.path.join(folder, part), os.path.join(shown, part)
            if last:
                if os.path.isfile(path):
                    found.add(path_shown)
            elif os.path.isdir(path) and _inside(os.path.realpath(path), real_root):
                stack.append((path, path_shown, i + 1))
            continue
        for entry, entry_shown in _listing(folder, shown, out, budget):
            name = entry.name
            if name.startswith(".") and not part.startswith("."):
                continue
            if not fnmatch.fnmatchcase(name, part):
                continue
            if last:
                if _is_file(entry):
                    found.add(entry_shown)
            elif _is_dir(entry, follow=True) and (not entry.is_symlink()
                                                  or _inside(os.path.realpath(entry.path), real_root)):
                stack.append((entry.path, entry_shown, i + 1))
        if out.truncated:
            break
    out.matches = sorted(found)
    return out


def _enter(folder: str, seen: set[tuple[int, int]]) -> bool:
    """First visit of this folder (by device and inode)?"""
    try:
        st = os.stat(folder)
    except OSError:
        return False
    key = (st.st_dev, st.st_ino)
    if key in seen:
        return False
    seen.add(key)
    return True


def _listing(folder: str, shown: str, out: GlobResult, budget: int) -> list[tuple[os.DirEntry[str], str]]:
    """The entries of `folder`, counted against the budget (the listing stops when it runs out)."""
    entries: list[tuple[os.DirEntry[str], str]] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                out.visited += 1
                if out.visited > budget:
                    out.truncated = True
                    break
                entries.append((entry, os.path.join(shown, entry.name) if shown else entry.name))
    except OSError:
        pass
    return entries


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str], *, follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False
