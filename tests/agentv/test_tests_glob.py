"""Recursive tests globs are bounded (issue 15 item 3): no symlink loops, no walk outside the project,
a cap on what one suite's globs may list; and otherwise the files Python's glob would find."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

from evalspec.agentv import tests_glob
from evalspec.cli import main
from evalspec.file_source import DiskSource

from .helpers import check, codes, one

DISK = DiskSource()

CASE = "- {id: %s, input: hi, criteria: ok}\n"


def test_symlink_loop_beside_a_recursive_glob(tmp_path: Path) -> None:
    """The reproducer: `tests: [file://**/*.yaml]` beside `a -> .` (Python's glob followed the link
    until the path was too long, listing the tree again at every level)."""
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "loop").symlink_to("..")
    result = check("tests:\n  - file://**/*.yaml\n", tmp_path, files={"cases/one.yaml": CASE % "one"})
    assert codes(result) == ["tests-file-repeated"]  # the eval file matches its own glob, once
    assert [t.id for t in result.suite.tests] == ["one"]  # type: ignore[union-attr]


def test_check_of_the_reproducer_folder_ends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "suite.eval.yaml").write_text("tests:\n  - file://**/*.yaml\n")
    (tmp_path / "cases.yaml").write_text(CASE % "c1")
    assert main(["check", str(tmp_path / "suite.eval.yaml")]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_glob_from_the_disk_root_is_refused_without_walking(tmp_path: Path) -> None:
    result = check("tests:\n  - file:///**/*.nothing.yaml\n", tmp_path)
    f = one(result, "tests-glob-outside")
    assert f.severity == "error" and "'/'" in f.message and "outside the project" in f.message


def test_a_glob_into_the_parent_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    result = check("tests:\n  - file://../**/*.yaml\n", tmp_path / "evals", files={})
    assert codes(result) == ["tests-glob-outside"]


def test_the_repository_root_bounds_globs(tmp_path: Path) -> None:
    """With a repository (.git) above the eval file, a glob may reach anywhere inside it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "s.yaml").write_text(CASE % "shared")
    (tmp_path / "evals").mkdir()
    result = check("tests:\n  - file://../shared/**/*.yaml\n", tmp_path / "evals")
    assert codes(result) == []
    assert [t.id for t in result.suite.tests] == ["shared"]  # type: ignore[union-attr]


def test_a_glob_that_lists_too_much_stops_with_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tests_glob, "MAX_ENTRIES", 40)
    for i in range(6):
        sub = tmp_path / f"d{i}"
        sub.mkdir()
        for j in range(10):
            (sub / f"f{j}.txt").write_text("")
    (tmp_path / "d0" / "t.yaml").write_text(CASE % "t")
    result = check("tests:\n  - file://**/*.yaml\n", tmp_path)
    f = one(result, "tests-glob-too-broad")
    assert f.severity == "error" and "40" in f.message
    assert result.suite is None or result.suite.tests == []


def test_symlinked_folders_are_not_followed_by_double_star(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "r.yaml").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    got = tests_glob.expand("**/*.yaml", tmp_path, tmp_path, DISK)
    assert got.matches == ["real/r.yaml"]
    # A single `*` may go through the link (one level: it cannot loop), when it stays in the project.
    assert tests_glob.expand("*/r.yaml", tmp_path, tmp_path, DISK).matches == ["link/r.yaml", "real/r.yaml"]


def test_a_symlink_out_of_the_project_is_not_listed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.yaml").write_text("")
    project = tmp_path / "project"
    project.mkdir()
    (project / "out").symlink_to(outside)
    assert tests_glob.expand("*/*.yaml", project, project, DISK).matches == []
    assert tests_glob.expand("out/*.yaml", project, project, DISK).outside is not None


@pytest.mark.parametrize("pattern", ["**/*.yaml", "**", "*/*.yaml", "a/**/*.y*ml", "**/b/*.yaml", "a/b/**",
                                     "*.yaml", "**/.q.yaml", "d/.*", "a/*/c/*", "a/../x.yaml", "[ax]*/*.yaml"])
def test_same_files_as_python_glob_without_links(tmp_path: Path, pattern: str) -> None:
    for rel in ("x.yaml", "a/y.yaml", "a/b/z.yaml", "a/b/c/w.yml", "a/b/c/v.jsonl", ".hid/h.yaml", "d/.q.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    want = sorted(p for p in glob.glob(pattern, root_dir=tmp_path, recursive=True) if (tmp_path / p).is_file())
    assert tests_glob.expand(pattern, tmp_path, tmp_path, DISK).matches == want


def test_absolute_pattern_inside_the_project(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "k.yaml").write_text("")
    got = tests_glob.expand(f"{tmp_path}/**/*.yaml", tmp_path, tmp_path, DISK)
    assert got.matches == [os.path.join(str(tmp_path), "c", "k.yaml")]
