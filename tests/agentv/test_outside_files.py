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
