"""ARCHITECTURE.md stays true to the code (every file, folder and `module.name` it cites exists) and one page."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "ARCHITECTURE.md"
PACKAGES = {"engine": "evalspec", "server": "evalspec_lsp"}
_SKIP = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}

_FILE = re.compile(r"^[\w./-]+\.(?:py|js|css|lua|ts|toml|json)$")
_FOLDER = re.compile(r"^[\w./-]+/$")
_ATTRIBUTE = re.compile(r"^(\w+)\.([A-Za-z_]\w*)(?:\(\))?$")


def cited() -> list[str]:
    return re.findall(r"`([^`\s]+)`", DOC.read_text(encoding="utf-8"))


def repo_paths() -> tuple[set[str], set[str]]:
    """Every file and folder of the repository, as paths relative to its root."""
    files: set[str] = set()
    folders: set[str] = set()
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.name in _SKIP or entry.is_symlink():
                continue
            rel = entry.relative_to(ROOT).as_posix()
            if entry.is_dir():
                folders.add(rel)
                stack.append(entry)
            else:
                files.add(rel)
    return files, folders


def _found(name: str, paths: set[str]) -> bool:
    return any(p == name or p.endswith("/" + name) for p in paths)


def modules_named(stem: str) -> list[str]:
    """Import names of the engine/server modules whose file is `<stem>.py`."""
    out = []
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob(f"{stem}.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            out.append(".".join((package, *parts)))
    return out


# One page: what a reader takes in at one sitting. Details belong in the module docstrings it points to.
MAX_WORDS = 1300
MAX_LINES = 110


def test_the_page_is_one_page() -> None:
    text = DOC.read_text(encoding="utf-8")
    words, lines = len(text.split()), len(text.splitlines())
    assert words <= MAX_WORDS and lines <= MAX_LINES, (
        f"ARCHITECTURE.md is {words} words, {lines} lines: one page is at most {MAX_WORDS} words and "
        f"{MAX_LINES} lines; say it shorter, or move the detail to the module's docstring")


def test_the_page_cites_modules() -> None:
    names = cited()
    assert sum(1 for n in names if _FILE.match(n)) > 40  # the check below has something to check


def test_every_cited_file_and_folder_exists() -> None:
    files, folders = repo_paths()
    missing = [n for n in cited()
               if (_FILE.match(n) and not _found(n, files)) or (_FOLDER.match(n) and not _found(n.rstrip("/"), folders))]
    assert missing == []


def test_every_cited_module_attribute_exists() -> None:
    missing = []
    checked = 0
    for name in cited():
        match = _ATTRIBUTE.match(name)
        if match is None or _FILE.match(name):
            continue
        stem, attribute = match.groups()
        modules = modules_named(stem)
        if not modules:
            continue  # not a module of ours (`Analysis.memo` is checked as the class's field below)
        checked += 1
        if not any(hasattr(importlib.import_module(m), attribute) for m in modules):
            missing.append(name)
    assert checked >= 3
    assert missing == []


def test_cited_analysis_fields_exist() -> None:
    from evalspec.analysis import Analysis

    for name in cited():
        if name.startswith("Analysis."):
            attribute = name.split(".", 1)[1].rstrip("()").split(" ")[0]
            assert hasattr(Analysis, attribute) or attribute in Analysis.__dataclass_fields__, name
