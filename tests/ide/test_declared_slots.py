"""Completion reads what a field's declaration says, never an owner's or a field's name: folders for a
`folder` field, paths for a `file_ref` one, a criterion's keys wherever a field's declared items are
rubric criteria. So a type added to the registry (registry.extend.registered) is completed as a
built-in one is, from its entry alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalspec.ide.completion import complete
from evalspec.registry.agentv_assertions import AssertionType
from evalspec.registry.extend import registered
from evalspec.registry.fields import F
from evalspec.registry.stages import Stage
from evalspec.run.score.judged_types import JudgedType, llm_judge_prompt

from .helpers import at, load

TEST = "tests:\n  - id: a\n    input: hi\n"
ASSERT = TEST + "    assert:\n      - type: "

CRITERIA = {"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/rubric_criterion"}]}}
STYLE = AssertionType(
    "style-judge", "An LLM judge checks the answer's style against criteria.", "The judge's score (0–1).",
    "- type: style-judge\n  criteria: [Short sentences]",
    (F("criteria", "The style criteria.", "array", required=True, schema=CRITERIA),
     F("prompt", "A judge prompt file.", "string", file_ref=True),
     F("cwd", "A folder the judge reads.", "string", file_ref=True, folder=True)),
    runnable=True, stage=Stage.JUDGE, scorer=JudgedType(llm_judge_prompt, criteria="criteria"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "tone.md").write_text("{{ answer }}")
    (tmp_path / "template").mkdir()
    (tmp_path / "setup.sh").write_text("true")
    return tmp_path / "suite.eval.yaml"


def _offered(path: Path, text: str) -> dict[str, Any]:
    clean, line, col = at(text)
    return {i.insert_text or i.label: i for i in complete(load(clean, "agentv", path), line, col, snippets=True).items}


CRITERION_PLACES = {
    "rubrics criteria": ASSERT + "rubrics\n        criteria:\n          - id: c1\n            ‸\n",
    "llm-judge rubrics": ASSERT + "llm-judge\n        rubrics:\n          - id: c1\n            ‸\n",
    "agent-judge rubrics": ASSERT + "agent-judge\n        rubrics:\n          - id: c1\n            ‸\n",
    "test rubrics (deprecated)": TEST + "    rubrics:\n      - id: c1\n        ‸\n",
    "a registered type's criteria": ASSERT + "style-judge\n        criteria:\n          - id: c1\n            ‸\n",
}


@pytest.mark.parametrize("text", CRITERION_PLACES.values(), ids=CRITERION_PLACES.keys())
def test_a_criterion_is_completed_wherever_the_declared_items_are_criteria(project: Path, text: str) -> None:
    with registered(STYLE):
        labels = {i.label for i in _offered(project, text).values()}
    assert {"outcome", "weight", "required", "score_ranges"} <= labels and "type" not in labels


def test_a_score_range_is_completed_from_the_criterion_declaration(project: Path) -> None:
    text = ASSERT + "rubrics\n        criteria:\n          - id: c1\n            score_ranges:\n              - ‸\n"
    assert {"score_range", "outcome"} <= {i.label for i in _offered(project, text).values()}


FOLDERS = {
    "code-judge cwd": ASSERT + "code-judge\n        command: [sh, x]\n        cwd: ‸\n",
    "workspace template": "workspace:\n  template: ‸\n" + TEST,
    "workspace hook cwd": "workspace:\n  hooks:\n    before_all:\n      command: [sh, x]\n      cwd: ‸\n" + TEST,
    "workspace setup cwd": "workspace:\n  setup:\n    script: [sh, x]\n    cwd: ‸\n" + TEST,
    "a registered type's folder": ASSERT + "style-judge\n        criteria: [x]\n        cwd: ‸\n",
}


@pytest.mark.parametrize("text", FOLDERS.values(), ids=FOLDERS.keys())
def test_a_folder_field_offers_folders_only(project: Path, text: str) -> None:
    with registered(STYLE):
        offered = _offered(project, text)
    assert {"judges/", "template/"} <= set(offered) and "setup.sh" not in offered


FILES = {
    "llm-judge prompt": ASSERT + "llm-judge\n        prompt: judges/‸\n",
    "agent-judge prompt": ASSERT + "agent-judge\n        prompt: judges/‸\n",
    "aggregator prompt": ASSERT + "composite\n        assert: []\n        aggregator:\n          type: llm-judge\n"
                         "          prompt: judges/‸\n",
    "a registered type's prompt": ASSERT + "style-judge\n        criteria: [x]\n        prompt: judges/‸\n",
}


@pytest.mark.parametrize("text", FILES.values(), ids=FILES.keys())
def test_a_file_field_offers_files(project: Path, text: str) -> None:
    with registered(STYLE):
        assert set(_offered(project, text)) == {"judges/tone.md"}


def test_without_the_entry_nothing_is_offered_for_its_fields(project: Path) -> None:
    assert _offered(project, CRITERION_PLACES["a registered type's criteria"]) == {}
