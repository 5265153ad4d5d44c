"""A bounded expansion of tests globs (`file://**/*.yaml`), the way Python's `glob(recursive=True)` reads
them, but safe to run on every keystroke of an editor.

A plain recursive glob follows symlinked folders (a link `a -> .` makes `**` loop until the path is too
long) and goes wherever the pattern says (`/**/*.yaml` walks the whole disk). Here `**` never descends
into a symlinked folder and never enters a folder twice (by device and inode); no folder outside the
project root is listed; and the walk stops after a fixed number of entries, which the caller reports.
Every folder is listed, tested and resolved through the analysis's FileSource (file_source.py), so
nothing here touches the disk itself.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..file_source import FileSource, FolderEntry

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


def expand(pattern: str, base: Path, root: Path, source: FileSource, budget: int = MAX_ENTRIES) -> GlobResult:
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

    def real(path: str) -> str:
        return str(source.resolve(Path(path)))

    real_root = real(str(root))
    if not _inside(real(start), real_root):
        out.outside = start
        return out
    rest = parts[lead:]
    found: set[str] = set()
    seen: set[str] = set()  # folders entered by `**`, by their real path
    # (folder, folder as shown, index of the part to match in it)
    stack: list[tuple[str, str, int]] = [(start, start_shown, 0)]
    while stack:
        folder, shown, i = stack.pop()
        part = rest[i]
        last = i == len(rest) - 1
        if part == "**":
            if not source.is_dir(Path(folder)):
                continue
            key = real(folder)
            if key in seen:
                continue
            seen.add(key)
            if not last:
                stack.append((folder, shown, i + 1))  # `**` matches no folder at all, too
            for entry, path, entry_shown in _listing(source, folder, shown, out, budget):
                if entry.name.startswith("."):
                    continue  # as glob: `**` skips hidden names
                if last and entry.is_file:
                    found.add(entry_shown)
                if entry.is_dir and not entry.is_link:
                    stack.append((path, entry_shown, i))
            if out.truncated:
                break
            continue
        if not (_MAGIC & set(part)):
            path, path_shown = os.path.join(folder, part), os.path.join(shown, part)
            if last:
                if source.is_file(Path(path)):
                    found.add(path_shown)
            elif source.is_dir(Path(path)) and _inside(real(path), real_root):
                stack.append((path, path_shown, i + 1))
            continue
        for entry, path, entry_shown in _listing(source, folder, shown, out, budget):
            name = entry.name
            if name.startswith(".") and not part.startswith("."):
                continue
            if not fnmatch.fnmatchcase(name, part):
                continue
            if last:
                if entry.is_file:
                    found.add(entry_shown)
            elif entry.is_dir and (not entry.is_link or _inside(real(path), real_root)):
                stack.append((path, entry_shown, i + 1))
        if out.truncated:
            break
    out.matches = sorted(found)
    return out


def _listing(source: FileSource, folder: str, shown: str, out: GlobResult, budget: int
             ) -> list[tuple[FolderEntry, str, str]]:
    """(entry, its path, its path as shown) for the entries of `folder`, counted against the budget
    (the listing stops when it runs out)."""
    room = max(0, budget - out.visited)
    entries = source.list_folder(Path(folder), room + 1)
    if len(entries) > room:
        out.visited = budget + 1
        out.truncated = True
        entries = entries[:room]
    else:
        out.visited += len(entries)
    return [(e, os.path.join(folder, e.name), os.path.join(shown, e.name) if shown else e.name) for e in entries]
