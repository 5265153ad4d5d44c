"""AgentV workspace repositories (`workspace.repos`: cloned with real git from a local repository,
checked out at a ref or an ancestor, shallow, sparse, reset between tests, diffed for the judges),
`mode: static` and `hooks.enabled: false`, through real runs against the fake provider."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evalspec.run.workspace.repos import RepoError, parse_repos

from .conftest import SmartFake, env_for, options, run_events, write
from .test_agentv_execution import PY, _rows, _workspace_suite


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
                          ).stdout.strip()


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    """A repository with three commits on main (version.txt 1, 2, 3) and a branch `feature`."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for n in (1, 2, 3):
        (repo / "version.txt").write_text(f"{n}\n")
        (repo / "docs").mkdir(exist_ok=True)
        (repo / "docs" / "guide.md").write_text(f"guide {n}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"v{n}")
    _git(repo, "branch", "feature", "HEAD~2")
    return repo


# The agent reports what it sees in app/ (its working folder is the workspace), then edits it.
AGENT_SEES = """import os, sys
seen = open("app/version.txt").read().strip() if os.path.exists("app/version.txt") else "none"
docs = os.path.exists("app/docs/guide.md")
open("app/version.txt", "a").write("edited\\n") if os.path.exists("app/version.txt") else None
open("app/new.txt", "w").write("new\\n") if os.path.isdir("app") else None
open(sys.argv[2], "w").write(f"version={seen} docs={docs}")
"""

SEES_TESTS = """  - {id: one, input: a, criteria: c, assert: [{type: contains, value: version}]}
  - {id: two, input: b, criteria: c, assert: [{type: contains, value: version}]}
"""


def _answers(tmp_path: Path) -> dict[str, str]:
    return {tid: row["answer"] for tid, row in _rows(tmp_path / "out").items()}


def test_repos_are_cloned_at_the_ref_and_ancestor(tmp_path: Path, smart: SmartFake, upstream: Path) -> None:
    bp = _workspace_suite(tmp_path, f"""  isolation: per_test
  repos:
    - path: app
      source: {{type: local, path: {upstream}}}
      checkout: {{ref: main, ancestor: 1}}
""", tests=SEES_TESTS)
    (tmp_path / "agent.py").write_text(AGENT_SEES)
    run_events(bp, options(tmp_path, env_for(smart)))
    assert _answers(tmp_path) == {"one": "version=2 docs=True", "two": "version=2 docs=True"}


def test_a_branch_other_than_the_default_and_a_shallow_clone(tmp_path: Path, smart: SmartFake,
                                                                upstream: Path) -> None:
    bp = _workspace_suite(tmp_path, f"""  isolation: per_test
  repos:
    - {{path: app, source: {{type: local, path: {upstream}}}, checkout: {{ref: feature}}}}
""", tests="  - {id: one, input: a, criteria: c, assert: [{type: contains, value: version}]}\n")
    (tmp_path / "agent.py").write_text(AGENT_SEES)
    run_events(bp, options(tmp_path, env_for(smart)))
    assert _answers(tmp_path) == {"one": "version=1 docs=True"}


def test_sparse_checkout_leaves_other_folders_out(tmp_path: Path, smart: SmartFake, upstream: Path) -> None:
    bp = _workspace_suite(tmp_path, f"""  isolation: per_test
  repos:
    - {{path: app, source: {{type: local, path: {upstream}}}, clone: {{depth: 1}}, sparse: [/version.txt]}}
""", tests="  - {id: one, input: a, criteria: c, assert: [{type: contains, value: version}]}\n")
    (tmp_path / "agent.py").write_text(AGENT_SEES)
    run_events(bp, options(tmp_path, env_for(smart)))
    assert _answers(tmp_path) == {"one": "version=3 docs=False"}


def test_a_shared_workspace_with_reset_gives_each_test_a_clean_repo(tmp_path: Path, smart: SmartFake,
                                                                    upstream: Path) -> None:
    workspace = f"""  repos:
    - {{path: app, source: {{type: local, path: {upstream}}}}}
  hooks:
    after_each: {{reset: fast}}
"""
    bp = _workspace_suite(tmp_path, workspace, tests=SEES_TESTS)
    (tmp_path / "agent.py").write_text(AGENT_SEES)
    run_events(bp, options(tmp_path, env_for(smart), concurrency=1))
    # Both tests saw the untouched version: the first agent's edit was reset before the second test.
    assert set(_answers(tmp_path).values()) == {"version=3 docs=True"}


def test_without_reset_a_shared_workspace_keeps_the_first_agents_edit(tmp_path: Path, smart: SmartFake,
                                                                      upstream: Path) -> None:
    bp = _workspace_suite(tmp_path, f"""  repos:
    - {{path: app, source: {{type: local, path: {upstream}}}}}
""", tests=SEES_TESTS)
    (tmp_path / "agent.py").write_text(AGENT_SEES)
    run_events(bp, options(tmp_path, env_for(smart), concurrency=1))
    assert sorted(_answers(tmp_path).values()) == sorted(["version=3 docs=True", "version=3\nedited docs=True"])


def test_judges_see_the_repos_changes_as_a_git_diff(tmp_path: Path, smart: SmartFake, upstream: Path) -> None:
    write(tmp_path / "evals" / "changes.py", """import json, sys
p = json.load(sys.stdin)
print(json.dumps({"score": 1, "details": {"file_changes": p["file_changes"]}}))
""")
    bp = _workspace_suite(tmp_path, f"""  template: ./template
  isolation: per_test
  repos:
    - {{path: app, source: {{type: local, path: {upstream}}}}}
""", tests=f"""  - id: one
    input: a
    criteria: c
    assert:
      - {{type: code-judge, command: [{PY}, changes.py]}}
""")
    (tmp_path / "agent.py").write_text(AGENT_SEES)
    run_events(bp, options(tmp_path, env_for(smart)))
    changes = _rows(tmp_path / "out")["one"]["scores"][0]["details"]["file_changes"]
    # The template's diff leaves the repository out; git's diff names its files under app/.
    assert "+++ b/app/version.txt" in changes and "+edited" in changes
    assert "+++ b/app/new.txt" in changes and "+new" in changes
    assert "guide.md" not in changes  # untouched files of the repository are not "created"


def test_a_clone_that_fails_is_the_rows_error(tmp_path: Path, smart: SmartFake) -> None:
    bp = _workspace_suite(tmp_path, f"""  isolation: per_test
  repos:
    - {{path: app, source: {{type: local, path: {tmp_path / 'no-such-repo'}}}}}
""", tests="  - {id: one, input: a, criteria: c, assert: [{type: contains, value: x}]}\n")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["one"]
    assert row["execution_status"] == "execution_error"
    assert "git clone of" in row["error"] and "exited with code" in row["error"]


def test_static_mode_uses_the_folder_as_it_is_and_keeps_it(tmp_path: Path, smart: SmartFake) -> None:
    static = tmp_path / "evals" / "fixed"
    write(static / "seed.txt", "seed")
    bp = _workspace_suite(tmp_path, "  mode: static\n  path: ./fixed\n  isolation: per_test\n",
                          tests="  - {id: one, input: a, criteria: c, assert: [{type: contains, value: seed}]}\n")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["one"]
    assert row["answer"] == "cwd=evals saw=seed.txt" and row["score"] == 1.0
    assert (static / "made-by-one.txt").exists()  # the agent worked there, and the folder was not removed


def test_disabled_hooks_do_not_run(tmp_path: Path, smart: SmartFake) -> None:
    log = tmp_path / "log.txt"
    bp = _workspace_suite(tmp_path, f"""  template: ./template
  hooks:
    enabled: false
    before_each: {{command: [{PY}, log.py, before_each, {log}]}}
""")
    run_events(bp, options(tmp_path, env_for(smart)))
    assert not log.exists()
    assert all(row["score"] == 1.0 for row in _rows(tmp_path / "out").values())


@pytest.mark.parametrize(("raw", "message"), [
    ("x", "must be a list"),
    ([{"path": "../out", "source": {"type": "git", "url": "u"}}], "must be a folder inside the workspace"),
    ([{"path": "a", "source": {"type": "git", "url": "--upload-pack=evil"}}], "starts with '-'"),
    ([{"path": "a"}], "needs a source"),
    ([{"path": "a", "source": {"type": "svn", "url": "u"}}], "neither git nor local"),
    ([{"source": {"type": "git", "url": "u/a.git"}}, {"path": "a", "repo": "v"}], "two repositories go to 'a'"),
    ([{"path": "a", "repo": "u", "checkout": {"ref": "-x"}}], "checkout ref"),
    ([{"path": "a", "repo": "u", "clone": {"depth": 0}}], "depth"),
])
def test_bad_repos_are_clear_errors(tmp_path: Path, raw: object, message: str) -> None:
    with pytest.raises(RepoError, match=message):
        parse_repos(raw, tmp_path)
