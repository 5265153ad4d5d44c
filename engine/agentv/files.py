"""Files an eval file refers to: where AgentV looks for them, and whether they exist.

AgentV resolves a relative reference (a content block's file, a judge prompt) against a list of
search roots: the eval file's folder, then each parent up to the repository root. Scripts of code
judges run in `cwd` (default: the eval file's folder), so their paths resolve against that one folder.
Nothing here reads a file's content except `read_text`, which is bounded; nothing runs anything.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..file_source import DiskSource, FileSource, expand_home, read_regular_bytes

MAX_ROOT_DEPTH = 12  # parents searched when no repository root (.git) is found

# A prompt that is one of these is a template file, not inline text.
_PROMPT_FILE = re.compile(r"^[^\n\r\t]{1,300}\.(md|markdown|txt|prompt|j2|jinja|jinja2|hbs|mustache|tmpl)$", re.I)
# An argv token that names a local script.
_SCRIPT_FILE = re.compile(r"\.(ts|tsx|mts|cts|js|mjs|cjs|py|sh|bash|zsh|rb|ps1|pl|php|lua)$", re.I)


def looks_like_prompt_file(text: str) -> bool:
    """Does a judge `prompt` string name a template file rather than hold the prompt itself?"""
    text = text.strip()
    if "\n" in text or "{{" in text:
        return False
    return bool(_PROMPT_FILE.match(text)) or (text.startswith(("./", "../")) and " " not in text)


def looks_like_script(token: str) -> bool:
    """Is an argv token a path to a local script (`../judges/check.ts`, `check_syntax.py`)?"""
    if not token or token.startswith("-") or "://" in token or "=" in token or "$" in token or "{" in token:
        return False
    return bool(_SCRIPT_FILE.search(token))


class FileSystem:
    """Files as the checker sees them, through the analysis's `FileSource` (the disk unless given),
    with cached existence checks, so a suite with many references to one file stats it once.

    `allow_outside`: whether files outside the project may be read (`evalspec run --allow-outside-files`);
    without it a reference that leaves the project is reported and its file never read. `project`: the
    project's root when the caller knows it better than the .git search (a copy of a repository).
    """

    def __init__(self, source: FileSource | None = None, *, allow_outside: bool = False,
                 project: Path | None = None) -> None:
        self.source: FileSource = source if source is not None else DiskSource()
        self.allow_outside = allow_outside
        self.project = project
        self._exists: dict[Path, bool] = {}
        self._roots: dict[Path, list[Path]] = {}
        self._real_roots: dict[Path, Path] = {}

    def exists(self, path: Path) -> bool:
        hit = self._exists.get(path)
        if hit is None:
            hit = self._exists[path] = self.source.exists(path)
        return hit

    def is_dir(self, path: Path) -> bool:
        return self.source.is_dir(path)

    def is_file(self, path: Path) -> bool:
        return self.source.is_file(path)

    def read_text(self, path: Path, limit: int = 1_048_576, *, folder: Path | None = None) -> str | None:
        """A small text file's content, or None when it is missing, too large or not text. With `folder`
        (the eval file's), also None when the file opened is not inside that folder's project or is
        hard-linked, unless files outside may be read (see `confinement`)."""
        inside = self.confinement(folder) if folder is not None else None
        return self.source.read_text(path, limit, inside=inside)

    def confinement(self, folder: Path) -> Path | None:
        """The folder reads for an eval file in `folder` are confined to: its project, with links
        followed; None with --allow-outside-files."""
        if self.allow_outside:
            return None
        return self.real_root(folder)

    def real_root(self, folder: Path) -> Path:
        root = self._real_roots.get(folder)
        if root is None:
            root = self._real_roots[folder] = self.source.resolve(self.project_root(folder))
        return root

    def hard_linked(self, path: Path) -> int:
        """The number of hard links of a regular file named by an eval file when it has more than one
        (0 otherwise): another name may lie anywhere, so it counts as outside the project."""
        links = self.source.links(path)
        return links if links > 1 else 0

    def search_roots(self, folder: Path) -> list[Path]:
        """The folder, then its parents up to the repository root (a folder holding .git)."""
        roots = self._roots.get(folder)
        if roots is None:
            roots = [folder]
            current = folder
            for _ in range(MAX_ROOT_DEPTH):
                if self.exists(current / ".git") or current.parent == current:
                    break
                current = current.parent
                roots.append(current)
            self._roots[folder] = roots
        return roots

    def project_root(self, folder: Path) -> Path:
        """The project an eval file in `folder` belongs to: its repository (the nearest folder holding
        .git), or the folder itself when it is in none."""
        if self.project is not None:
            return self.project
        top = self.search_roots(folder)[-1]
        return top if self.exists(top / ".git") else folder

    def outside(self, path: Path, folder: Path) -> bool:
        """Does `path`, with `..` and symlinks followed, lie outside the project of `folder`?"""
        root = self.real_root(folder)
        real = self.source.resolve(path)
        return real != root and root not in real.parents

    def resolve(self, reference: str, roots: list[Path]) -> Path | None:
        """The first existing file for `reference` among `roots` (absolute references as they are)."""
        ref = reference.strip()
        if not ref:
            return None
        candidate = expand_home(ref, self.source.env)
        if candidate.is_absolute():
            # AgentV treats "/x" as relative to the repository root first.
            for root in (roots[-1:] if roots else []):
                p = root / ref.lstrip("/")
                if self.exists(p):
                    return p
            return candidate if self.exists(candidate) else None
        for root in roots:
            p = root / candidate
            if self.exists(p):
                return p
        return None

    def find_custom_assertion(self, type_name: str, folder: Path) -> Path | None:
        """`.agentv/assertions/<type>.ts` (or .js) in the eval file's folder or a parent up to the root."""
        for root in self.search_roots(folder):
            for ext in (".ts", ".js", ".mts", ".mjs"):
                p = root / ".agentv" / "assertions" / f"{type_name}{ext}"
                if self.exists(p):
                    return p
        return None


def read_text(path: Path, limit: int = 1_048_576, *, inside: Path | None = None) -> str | None:
    """A small text file's content, or None when it is missing, too large or not text; with `inside`,
    also when the file opened lies outside that folder or is hard-linked (read_regular_bytes)."""
    try:
        # Never a FIFO or a device: they would block or never end.
        data = read_regular_bytes(path, limit, inside=inside)
        return data.decode("utf-8") if data is not None else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
