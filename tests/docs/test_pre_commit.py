"""`.pre-commit-hooks.yaml` works: the `pre-commit` package runs `evalspec check` as a hook on a scratch
git repository (`pre-commit try-repo` against this checkout), and a commit with a broken blueprint fails.

The `evalspec-check-system` hook is the one run here: it uses the `evalspec` on PATH (this test's own), so
nothing is downloaded. The `evalspec-check` hook (language: python) must be the same hook otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]

BROKEN = "- prompt: What is 2 + 2?\n  should:\n    - $contians: \"4\"\n"
CLEAN = "- prompt: What is 2 + 2?\n  should:\n    - $contains: \"4\"\n"


def _hooks() -> dict[str, dict[str, object]]:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {h["id"]: h for h in hooks}


def test_both_hooks_run_the_same_check() -> None:
    hooks = _hooks()
    python, system = hooks["evalspec-check"], hooks["evalspec-check-system"]
    assert python["language"] == "python" and system["language"] == "system"
    for key in ("entry", "types_or"):
        assert python[key] == system[key]
    assert python["entry"] == "evalspec check --ignore not-checked"  # every YAML file of a commit, no note for the others


@pytest.fixture
def scratch(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    if shutil.which("git") is None:
        pytest.fail("git is needed to test the pre-commit hook")
    repo = tmp_path / "project"
    (repo / "blueprints").mkdir(parents=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PATH": os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", ""))),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_INDEX_FILE", None)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    return repo, env


def _try_repo(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # try-repo clones this checkout (uncommitted changes included) and runs the hook on the staged files.
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "evalspec-check-system"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def test_the_hook_fails_a_broken_blueprint_and_passes_a_fixed_one(scratch: tuple[Path, dict[str, str]]) -> None:
    repo, env = scratch
    blueprint = repo / "blueprints" / "math.yml"
    blueprint.write_text(BROKEN, encoding="utf-8")
    (repo / "compose.yaml").write_text("services:\n  web:\n    image: nginx\n", encoding="utf-8")  # not an eval file
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    failed = _try_repo(repo, env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    out = failed.stdout
    assert "evalspec check" in out and "Failed" in out
    assert "blueprints/math.yml:3:7: error[unknown-function]: Unknown point function '$contians'" in out
    assert "compose.yaml" not in out.split("evalspec check", 1)[1]  # no finding on a file that is no eval file

    blueprint.write_text(CLEAN, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    passed = _try_repo(repo, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
