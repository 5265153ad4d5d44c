"""`analyze` reads other files and the environment only through the FileSource its caller gives."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from evalspec.analysis import analyze
from evalspec.file_source import MAX_READ, FolderEntry
from evalspec.ide import model_ids
from evalspec.spill_file import SpillFile


class MemorySource:
    """Files and an environment that exist only in memory (nothing of this is on disk)."""

    def __init__(self, files: dict[str, str], env: Mapping[str, str]) -> None:
        self.files = {Path(p): t for p, t in files.items()}
        self._env = env
        self.asked: list[Path] = []

    @property
    def env(self) -> Mapping[str, str]:
        return self._env

    def _folders(self) -> set[Path]:
        return {parent for p in self.files for parent in p.parents}

    def read_text(self, path: Path, limit: int = MAX_READ, *, inside: Path | None = None) -> str | None:
        self.asked.append(path)
        return self.files.get(Path(os.path.abspath(path)))

    def links(self, path: Path) -> int:
        return 1

    def size(self, path: Path) -> int | None:
        text = self.files.get(Path(os.path.abspath(path)))
        return len(text.encode()) if text is not None else None

    def exists(self, path: Path) -> bool:
        return self.is_file(path) or self.is_dir(path)

    def is_file(self, path: Path) -> bool:
        return Path(os.path.abspath(path)) in self.files

    def is_dir(self, path: Path) -> bool:
        return Path(os.path.abspath(path)) in self._folders()

    def glob(self, folder: Path, pattern: str) -> list[str]:
        return sorted(str(p.relative_to(folder)) for p in self.files if p.parent == folder and p.match(pattern))

    def list_folder(self, folder: Path, limit: int) -> list[FolderEntry]:
        folder = Path(os.path.abspath(folder))
        names = sorted({p.relative_to(folder).parts[0] for p in self.files if folder in p.parents})
        return [FolderEntry(n, self.is_file(folder / n), self.is_dir(folder / n), False) for n in names][:limit]

    def mtime(self, path: Path) -> float | None:
        return 1.0 if self.exists(path) else None

    def resolve(self, path: Path) -> Path:
        return Path(os.path.abspath(path))

    def scratch_file(self, prefix: str) -> SpillFile:
        return SpillFile(prefix)


ROOT = Path("/nonexistent-evalspec-source-test")


def test_an_agentv_suite_reads_its_tests_file_and_environment_from_the_source() -> None:
    source = MemorySource({str(ROOT / "cases.yaml"): "- id: from-memory\n  input: ${{ GREETING }}\n  criteria: c\n"
                                                      "- id: incomplete\n  input: Hello\n"},
                          env={"GREETING": "Hi"})
    suite = "name: s\ndescription: d\ntests: ./cases.yaml\n"
    a = analyze(suite, ROOT / "suite.eval.yaml", source=source)
    assert a.suite is not None and [t.id for t in a.suite.tests] == ["from-memory"]
    assert not [f for f in a.findings if f.code in ("missing-tests-file", "undefined-variable")]
    assert [f.code for f in a.findings if f.path] == ["incomplete-test"]  # found in the in-memory file
    assert ROOT / "cases.yaml" in a.dependencies


def test_without_the_variable_in_the_source_environment_it_is_unset(monkeypatch) -> None:
    source = MemorySource({str(ROOT / "cases.yaml"): "- id: t\n  input: ${{ GREETING }}\n  criteria: c\n"}, env={})
    monkeypatch.setenv("GREETING", "set in the process, which the source does not show")
    a = analyze("name: s\ndescription: d\ntests: ./cases.yaml\n", ROOT / "suite.eval.yaml", source=source)
    assert any("GREETING" in f.message for f in a.findings)


def test_weval_model_collections_come_from_the_source() -> None:
    source = MemorySource({str(ROOT / "models" / "CORE.json"): '["openai:gpt-4o-mini", "anthropic:claude-3"]',
                           str(ROOT / ".git" / "HEAD"): "ref"}, env={})
    text = "title: t\nmodels: [CORE]\n---\n- prompt: hi\n  should: [greets]\n"
    a = analyze(text, ROOT / "blueprints" / "b.yml", source=source)
    assert a.blueprint is not None
    assert not [f for f in a.findings if "CORE" in f.message], [f.message for f in a.findings]
    assert ROOT / "models" / "CORE.json" in a.dependencies


def test_an_edited_collection_is_read_again_though_its_folder_did_not_change() -> None:
    """A collection file edited in place (or open with unsaved edits in the editor) leaves its folder's
    mtime as it was: the next analysis still reads it, through the source, and depends on it."""
    core = ROOT / "models" / "CORE.json"
    source = MemorySource({str(core): '["openai:gpt-4o-mini"]', str(ROOT / ".git" / "HEAD"): "ref"}, env={})
    text = "title: t\nmodels: [CORE]\n---\n- prompt: hi\n  should: [greets]\n"
    first = analyze(text, ROOT / "blueprints" / "b.yml", source=source)
    source.files[core] = '["anthropic:claude-3-haiku", "openai:gpt-4o"]'  # same folder, same mtime
    again = analyze(text, ROOT / "blueprints" / "b.yml", source=source)
    assert first.blueprint is not None and again.blueprint is not None
    assert first.blueprint.models_resolved == ["openai:gpt-4o-mini"]
    assert again.blueprint.models_resolved == ["anthropic:claude-3-haiku", "openai:gpt-4o"]
    assert core in again.dependencies
    # completion and hover offer the collections the check read (nothing of this is on disk)
    assert model_ids.collections(again) == {"CORE": ["anthropic:claude-3-haiku", "openai:gpt-4o"]}


def test_a_tests_glob_lists_folders_through_the_source() -> None:
    source = MemorySource({str(ROOT / ".git" / "HEAD"): "ref",
                           str(ROOT / "cases" / "a.yaml"): "- id: a\n  input: hi\n  criteria: c\n",
                           str(ROOT / "cases" / "deep" / "b.yaml"): "- id: b\n  input: hi\n  criteria: c\n"}, env={})
    a = analyze("name: s\ndescription: d\ntests:\n  - file://cases/**/*.yaml\n", ROOT / "suite.eval.yaml",
                source=source)
    assert a.suite is not None and sorted(t.id for t in a.suite.tests) == ["a", "b"], [f.message for f in a.findings]
    assert ROOT / "cases" / "deep" in a.dependencies  # a file added there changes the suite


def test_a_home_relative_tests_path_uses_the_sources_home(monkeypatch) -> None:
    monkeypatch.setenv("HOME", "/nonexistent-process-home")
    source = MemorySource({str(ROOT / "home" / "cases.yaml"): "- id: from-home\n  input: hi\n  criteria: c\n"},
                          env={"HOME": str(ROOT / "home")})
    a = analyze("name: s\ndescription: d\ntests: ~/cases.yaml\n", ROOT / "suite.eval.yaml", source=source)
    assert a.suite is not None and [t.id for t in a.suite.tests] == ["from-home"], [f.message for f in a.findings]
