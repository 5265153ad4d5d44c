"""The git commit a blueprint comes from (`sourceCommitSha`), read from `.git` files, never by running git.

Running `git` in a folder someone else controls can execute their configuration (`core.fsmonitor`,
…), and opening or running a file must not do that; the few files that name HEAD's commit are plain
text: `.git/HEAD`, the loose ref it points at, else `packed-refs`. A worktree or submodule has a `.git`
*file* (`gitdir: …`) whose folder may name the shared one in `commondir`. Anything unexpected gives
None: the results simply leave `sourceCommitSha` out.
"""

from __future__ import annotations

import re
from pathlib import Path

_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")  # SHA-1, or SHA-256 repositories
_MAX_READ = 1 << 20  # packed-refs of a big repository is a few hundred KB


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            return f.read(_MAX_READ).decode("utf-8", "replace")
    except OSError:
        return None


def git_dir_of(start: Path) -> Path | None:
    """The git folder of the repository holding `start` (walking up), or None."""
    try:
        folder = start.resolve()
    except OSError:
        return None
    for d in (folder, *folder.parents):
        dot = d / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            text = _read(dot) or ""
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:"):].strip())
                target = target if target.is_absolute() else (d / target)
                return target if target.is_dir() else None
            return None
    return None


def head_commit(start: Path) -> str | None:
    """The commit HEAD names in the repository holding `start`, or None (not in git, unborn branch, …)."""
    git_dir = git_dir_of(start)
    if git_dir is None:
        return None
    head = (_read(git_dir / "HEAD") or "").strip()
    if _SHA.match(head):
        return head  # a detached HEAD
    if not head.startswith("ref:"):
        return None
    ref = head[len("ref:"):].strip()
    if not ref.startswith("refs/") or ".." in ref.split("/"):
        return None
    common = git_dir
    named = (_read(git_dir / "commondir") or "").strip()
    if named:
        common = Path(named) if Path(named).is_absolute() else git_dir / named
    for folder in dict.fromkeys((git_dir, common)):
        loose = (_read(folder / ref) or "").strip()
        if _SHA.match(loose):
            return loose
    for folder in dict.fromkeys((git_dir, common)):
        for line in (_read(folder / "packed-refs") or "").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref and _SHA.match(sha):
                return sha
    return None


def blueprint_file_name(path: Path) -> str:
    """`sourceBlueprintFileName`: the dashboard links `<repo>/blob/<sha>/blueprints/<this>`, so the path
    below the `blueprints/` folder when there is one (`subdir/x.yml`), else the file's name."""
    parts = path.resolve().parts if path.is_absolute() else path.parts
    if "blueprints" in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index("blueprints")
        return "/".join(parts[i + 1:])
    return path.name
