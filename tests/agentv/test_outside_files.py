"""Files outside the project are reported by `check` and never read (issue 15 item 10): `..` escapes,
absolute paths, symlinks that point out, tests files outside the folder; the project is the repository
(the nearest folder holding .git) or, when there is none, the eval file's folder. And a secret put into
an input by `${{ VAR }}` is warned about (and registered for masking)."""

from __future__ import annotations

import os
from pathlib import Path

from evalspec.agentv import check_agentv
from evalspec.providers.redact import redact
from evalspec.source import parse_yaml

from .helpers import check, codes


def _blocks(*values: str) -> str:
    items = "".join(f"          - {{type: file, value: {v}}}\n" for v in values)
    return ("name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input:\n"
            "      - role: user\n        content:\n" + items)


def test_references_that_leave_the_project_are_reported_and_not_resolved(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    project = tmp_path / "proj"
    (project / "evals").mkdir(parents=True)
    os.symlink(outside, project / "evals" / "link.txt")
    (project / "evals" / "inside.md").write_text("fine")
    depth = "../" * len(project.parts)
    result = check(_blocks(f"{depth}etc/passwd", str(outside), "link.txt", "inside.md"), project,
                   name="evals/s.eval.yaml")
    found = [f for f in result.findings if f.code == "file-outside-project"]
    assert [f.span.start_line + 1 for f in found] == [9, 10, 11]
    assert "no folder above it holds .git" in found[0].message and "--allow-outside-files" in found[0].message
    blocks = result.suite.tests[0].input_messages[0].content  # type: ignore[union-attr]
    assert [b.resolved_path for b in blocks[:3]] == [None, None, None]  # never read, never sent
    assert blocks[3].resolved_path == project / "evals" / "inside.md"


def test_the_repository_is_the_project_when_there_is_one(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "x.md").write_text("x")
    result = check(_blocks("../prompts/x.md"), tmp_path, name="evals/s.eval.yaml")
    assert "file-outside-project" not in codes(result)


def test_a_tests_file_outside_is_not_read_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "far", "input": "from outside", "criteria": "x"}\n')
    project = tmp_path / "proj"
    project.mkdir()
    text = "name: s\ndescription: d\ntests: ../cases.jsonl\n"
    path = project / "s.eval.yaml"
    path.write_text(text)
    refused = check_agentv(parse_yaml(text), path, env={})
    assert [f.code for f in refused.findings] == ["file-outside-project"]
    assert refused.suite is None or refused.suite.tests == []
    allowed = check_agentv(parse_yaml(text), path, env={}, allow_outside=True)
    assert allowed.suite is not None and [t.id for t in allowed.suite.tests] == ["far"]


def test_a_secret_interpolated_into_an_input_is_a_warning_and_is_masked(tmp_path: Path) -> None:
    text = ("name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n"
            "    input: 'my key is ${{ SOME_API_KEY }}'\n")
    result = check(text, tmp_path, env={"SOME_API_KEY": "sk-interpolated-123456"})
    (f,) = [f for f in result.findings if f.code == "secret-in-input"]
    assert f.severity == "warning" and "SOME_API_KEY" in f.message
    assert redact("leak: sk-interpolated-123456") == "leak: ***"


def test_no_warning_where_a_secret_belongs(tmp_path: Path) -> None:
    text = ("name: s\ndescription: d\nexecution:\n  targets:\n    - name: t\n      provider: openai\n"
            "      api_key: ${{ OTHER_API_KEY }}\n      headers: {X-Custom: '${{ OTHER_TOKEN }}'}\n"
            "tests:\n  - id: a\n    criteria: c\n    input: hi\n")
    result = check(text, tmp_path, env={"OTHER_API_KEY": "k" * 10, "OTHER_TOKEN": "t" * 10})
    assert "secret-in-input" not in codes(result)


# The attack run's second round: scripts, working folders and workspaces that leave the project are
# findings too (each was run, copied or cloned before).

def _outside_world(tmp_path: Path) -> tuple[Path, Path]:
    """tmp/outside (a judge script, a workspace template, a workspace file, a repository folder) and
    tmp/proj (a repository holding evals/)."""
    outside = tmp_path / "outside"
    (outside / "tpl").mkdir(parents=True)
    (outside / "repo").mkdir()
    (outside / "judge.py").write_text("print('{\"score\": 1}')\n")
    (outside / "ws.yaml").write_text("template: tpl\n")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "evals").mkdir()
    return outside, project


def _outside_lines(text: str, tmp_path: Path) -> list[int]:
    result = check(text, tmp_path / "proj", name="evals/s.eval.yaml")
    return [f.span.start_line + 1 for f in result.findings if f.code == "file-outside-project"]


def test_code_judge_scripts_and_folders_outside_are_reported(tmp_path: Path) -> None:
    outside, _ = _outside_world(tmp_path)
    text = ("name: s\ndescription: d\ntests:\n  - id: a\n    criteria: c\n    input: hi\n    assert:\n"
            "      - {type: code-judge, command: [python3, ../../outside/judge.py]}\n"       # 8
            f"      - {{type: code-judge, command: [python3, {outside / 'judge.py'}]}}\n"    # 9
            "      - {type: code-judge, command: [python3, judge.py], cwd: ../../outside}\n"  # 10
            "      - {type: code-judge, command: 'python3 ../../outside/judge.py'}\n"         # 11
            "      - type: composite\n        assert: [{name: x, type: contains, value: x}]\n"
            "        aggregator: {type: code-judge, path: python3 ../../outside/judge.py}\n"  # 14
            "      - type: llm-judge\n        prompt: {command: [python3, ../../outside/judge.py]}\n")  # 16
    assert _outside_lines(text, tmp_path) == [8, 9, 10, 11, 14, 16]


def test_workspaces_outside_are_reported(tmp_path: Path) -> None:
    outside, project = _outside_world(tmp_path)
    os.symlink(outside / "tpl", project / "evals" / "tl")
    head = "name: s\ndescription: d\n"
    tests = "tests:\n  - id: a\n    criteria: c\n    input: hi\n"
    assert _outside_lines(head + "workspace: ../../outside/ws.yaml\n" + tests, tmp_path) == [3]
    assert _outside_lines(head + "workspace: {template: ../../outside/tpl}\n" + tests, tmp_path) == [3]
    assert _outside_lines(head + "workspace: {template: tl}\n" + tests, tmp_path) == [3]  # a link out
    assert _outside_lines(head + "workspace: {mode: static, path: ../../outside/tpl}\n" + tests, tmp_path) == [3]
    repos = ("workspace:\n  repos:\n    - {path: a, source: {type: local, path: ../../outside/repo}}\n"
             f"    - {{path: b, source: {{type: git, url: 'file://{outside / 'repo'}'}}}}\n"
             f"    - {{path: c, repo: {outside / 'repo'}}}\n"
             "    - {path: d, repo: 'https://example.com/x.git'}\n"
             "    - {path: e, repo: 'git@example.com:x.git'}\n")
    assert _outside_lines(head + repos + tests, tmp_path) == [5, 6, 7]
    hooks = ("workspace:\n  hooks:\n    before_all: {command: [sh, ../../outside/x.sh]}\n"
             "    after_all: {command: [ls], cwd: ../../outside}\n"
             "  setup: {script: [python3, ../../outside/judge.py]}\n")
    (outside / "x.sh").write_text("true\n")
    assert _outside_lines(head + hooks + tests, tmp_path) == [5, 6, 7]
    per_test = ("tests:\n  - id: a\n    criteria: c\n    input: hi\n"
                "    workspace: {template: ../../outside/tpl}\n")
    assert _outside_lines(head + per_test, tmp_path) == [7]


def test_inside_the_repository_nothing_is_reported(tmp_path: Path) -> None:
    _, project = _outside_world(tmp_path)
    (project / "judges").mkdir()
    (project / "judges" / "j.py").write_text("")
    (project / "tpl").mkdir()
    text = ("name: s\ndescription: d\nworkspace: {template: ../tpl, repos: [{path: r, source: {type: local, "
            "path: ../tpl}}]}\ntests:\n  - id: a\n    criteria: c\n    input: hi\n    assert:\n"
            "      - {type: code-judge, command: [python3, ../judges/j.py]}\n"
            "      - {type: code-judge, command: [python3, j.py], cwd: ../judges}\n")
    assert _outside_lines(text, tmp_path) == []
