"""targets.yaml read as AgentV v2.19.0 reads it (the `yaml` package, YAML 1.2 core schema), not as PyYAML's
YAML 1.1 reads it. The expected values are AgentV's own answers: `readTargetDefinitions` run under bun
1.3.3 on each text (a harness outside this repository)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalspec.run.plan.agentv import load_targets
from evalspec.run.plan.error import PlanError

HEAD = "targets:\n  - name: t\n    provider: mock\n"

# (`x:` as written, AgentV's value); PyYAML's differs on each of these but the last three.
VALUES = [
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"), ("y", "y"), ("Yes", "Yes"),
    ("0o17", 15), ("1:30", "1:30"), ("1_000", "1_000"), ("1e3", 1000), ("0b11", "0b11"),
    ("2024-10-21", "2024-10-21"), ("2024-10-21T10:00:00Z", "2024-10-21T10:00:00Z"), ("=", "="),
    ("017", 17), ("0x1F", 31), ("+12", 12), (".5", 0.5), ("True", True), ("Null", None),
    ("+.inf", math.inf), ("-.INF", -math.inf),
]


def _load(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "targets.yaml"
    path.write_text(text, encoding="utf-8")
    return load_targets(path)


@pytest.mark.parametrize(("written", "agentv"), VALUES, ids=[w for w, _ in VALUES])
def test_values_are_yaml_1_2_as_agentv_reads_them(tmp_path: Path, written: str, agentv: object) -> None:
    got = _load(tmp_path, HEAD + f"    x: {written}\n")["t"]["x"]
    assert (got, _kind(got)) == (agentv, _kind(agentv))


def _kind(v: object) -> str:
    """JavaScript's kinds: 1000 and 1000.0 are one number."""
    return "number" if isinstance(v, int | float) and not isinstance(v, bool) else type(v).__name__


def test_a_name_yaml_1_1_reads_as_false_is_a_name(tmp_path: Path) -> None:
    """PyYAML read `name: no` as False and dropped the target; AgentV names it 'no'."""
    assert list(_load(tmp_path, "targets:\n  - name: no\n    provider: mock\n")) == ["no"]
    assert list(_load(tmp_path, "targets:\n  - name: 1_000\n    provider: mock\n")) == ["1_000"]


def test_the_first_target_of_a_name_is_the_one(tmp_path: Path) -> None:
    text = "targets:\n  - {name: t, provider: mock, response: a}\n  - {name: t, provider: mock, response: b}\n"
    assert _load(tmp_path, text)["t"]["response"] == "a"


@pytest.mark.parametrize(("text", "where", "says"), [
    (HEAD + "    x: 1\n    x: 2\n", ":5:5:", "appears twice"),  # AgentV: Map keys must be unique at line 5, column 5
    (HEAD + "---\nx: 1\n", ":4:1:", "more than one YAML document"),
    ("targets: [\n", ":2:1:", "YAML syntax error"),
    ("targets:\n\t- name: t\n", ":2:1:", "YAML syntax error"),  # AgentV: Tabs are not allowed as indentation
    (HEAD + "  - 5\n", ":4:5:", "entry at index 1 must be an object"),
    ("targets:\n  - provider: mock\n", ":2:5:", "index 0 is missing a valid 'name'"),
    ("targets:\n  - name: t\n", ":2:5:", "'t' is missing a valid 'provider'"),
    ("targets:\n  - name: t\n    provider: ''\n", ":3:15:", "'t' is missing a valid 'provider'"),
    ("targets: {}\n", ":1:10:", "must have a 'targets' array"),
    ("- a\n", ":1:1:", "must be a YAML object"),
    ("", ":1:1:", "must be a YAML object"),
])
def test_what_agentv_refuses_is_refused_at_its_place(tmp_path: Path, text: str, where: str, says: str) -> None:
    with pytest.raises(PlanError) as err:
        _load(tmp_path, text)
    assert where in str(err.value) and says.lower() in str(err.value).lower()


def test_a_workspace_file_is_read_as_agentv_reads_it(tmp_path: Path) -> None:
    """AgentV reads a `workspace: file.yaml` with the `yaml` package too: `enabled: no` is the text "no"
    (hooks stay on; PyYAML read false and turned them off), a repeated key is refused at its place."""
    from evalspec.run.workspace.lifecycle import WorkspaceError, parse_workspace

    (tmp_path / "ws.yaml").write_text("hooks:\n  enabled: no\n  before_each:\n    command: [echo, hi]\n",
                                      encoding="utf-8")
    spec = parse_workspace("ws.yaml", tmp_path)
    assert spec is not None and "before_each" in spec.hooks
    (tmp_path / "ws.yaml").write_text("template: a\ntemplate: b\n", encoding="utf-8")
    with pytest.raises(WorkspaceError, match=r"ws.yaml: 2:1: the key 'template' appears twice"):
        parse_workspace("ws.yaml", tmp_path)
