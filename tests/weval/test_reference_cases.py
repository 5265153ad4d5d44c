"""Issue 25's Weval classes, each from its minimal case: evalspec answers as Weval's own code does.

Expected ids and scores are Weval's (weval-org/app at 51dc4d3), from ../shared/vectors/weval where noted.
"""

from __future__ import annotations

from typing import Any

import pytest

from evalspec.analysis import analyze
from evalspec.detect import FileKind
from evalspec.findings import Severity
from evalspec.registry.weval_functions import resolve_function
from evalspec.run.plan.weval import DEFAULT_JUDGES
from evalspec.run.score.functions import base_assessment
from evalspec.run.score.judges import judged_assessment
from evalspec.run.score.weval_judge import BACKUP_JUDGE, judge_label
from evalspec.run.write.weval_results import config_object
from evalspec.scoring.weval_aggregate import avg_coverage_extent, js_to_fixed
from evalspec.weval.model import Blueprint, Judge, Point


def check(text: str, path: str = "blueprints/t.yml") -> Any:
    return analyze(text, path, kind=FileKind.WEVAL)


def blueprint(text: str, path: str = "blueprints/t.yml") -> Blueprint:
    bp = check(text, path).weval.blueprint
    assert bp is not None
    return bp


def errors(text: str) -> list[str]:
    return [f.code for f in check(text).findings if f.severity is Severity.ERROR]


# --- rounding --------------------------------------------------------------------------------------

def test_rounding_adds_left_to_right_in_doubles_then_to_fixed() -> None:
    # 0 + .38 + .17 + .67 = 1.2200000000000002 in doubles, / 4 = 0.30500000000000005 → 0.31 (Weval);
    # summed exactly it is 0.305, which rounded half-even or from its binary value gives 0.30
    assert avg_coverage_extent([(0, 1, None), (0.38, 1, None), (0.17, 1, None), (0.67, 1, None)]) == 0.31


def test_to_fixed_rounds_the_binary_value() -> None:
    assert js_to_fixed(1.005, 2) == 1.0  # 1.005 is 1.00499999999999989… in binary
    assert js_to_fixed(0.125, 2) == 0.13  # an exact tie goes away from zero


# --- ids and normalization -------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "weval_id"), [
    # a $ref to a mapping is copied as written (its citation, weight or multiplier beside $ref dropped):
    # normalize.jsonl:32
    ("title: Refs\npoint_defs:\n  dsw: 'r.length / 100'\n  dobj: {$contains: x}\n  dtext: {'Is kind': 'src'}\n"
     "  dbad: true\n---\n- prompt: \"yes\"\n  should:\n    - {$ref: dobj, multiplier: 3, citation: c2}\n",
     "hash-df7b6a575746"),
    # should: [] is kept (normalize.jsonl:55), as is an explicit weight 1 (1e0)
    ('- prompt: "\\u2028sep"\n  weight: 1e0\n  should: []\n', "hash-9f1265f39af0"),
    # an explicit prompt weight 1 (normalize.jsonl:747)
    ('- prompt: "What is 2+2?"\n  weight: 1\n  should:\n    - "Point: with colon"\n', "hash-04382c3d2699"),
    # '' and null in an OR path: '' kept, null dropped (normalize.jsonl:862)
    ("title: T\nprompts:\n  - prompt: \"123\"\n    should:\n      - $matches: '['\n      - [a, null, '', b]\n",
     "hash-56225a8685c7"),
    # an extra key in a {role, content} message is kept (normalize.jsonl:932)
    ("messages:\n  - role: user\n    content: Hi\n    extra: 1\ndescription: D\nshuld:\n  - typo\nexpectations:\n"
     "  - Point text: Its citation\n  - [a, null, '', b]\n", "hash-7edfd2500e50"),
    # $is_json: null keeps its null argument (normalize.jsonl:829)
    ('- prompt: "a: b"\n  idealResponse: An ideal.\n  points:\n    - $is_json: null\n      weight: 2\n'
     "      citation: c\n    - []\n", "hash-3ecf228318f2"),
    # a block scalar ending the file without a line break keeps its final one (normalize.jsonl:27)
    ('title: B\n---\n- prompt: "Hi"\n  should:\n    - $js: |+\n        print(1)', "hash-9ebe501ba885"),
])
def test_auto_ids_are_wevals(text: str, weval_id: str) -> None:
    [prompt] = blueprint(text).prompts
    assert prompt.id == weval_id


def test_merge_keys_work() -> None:
    """normalize.jsonl:63: `<<: *base` brings the anchor's keys; the prompt's own keys win."""
    text = "- &base\n  prompt: Base\n  should: [x]\n- <<: *base\n  ideal: Other\n- <<: [*base]\n  prompt: List merge\n"
    result = check(text)
    assert [f.code for f in result.findings if f.severity is Severity.ERROR] == []
    first, second, third = result.weval.blueprint.prompts
    assert (first.id, second.id) == ("hash-98132a6d0e6a", "hash-534274236cc6")
    assert second.ideal == "Other" and [p.text for p in second.should] == ["x"]
    assert third.messages[0].content == "List merge"


def test_a_numeric_id_is_its_javascript_text() -> None:
    [p] = blueprint("- id: 1e3\n  prompt: Hi\n").prompts
    assert p.id == "1000" and p.reference is not None and p.reference["id"] == 1000
    [zero] = blueprint("- id: 0\n  prompt: Hi\n").prompts
    assert zero.id.startswith("hash-")  # 0 is no id to the reference


def test_ref_to_a_mapping_scores_as_the_copy_reads() -> None:
    """The reference's evaluator reads the copied definition: its multiplier, not its weight, its citation."""
    text = ("title: T\npoint_defs:\n  d: {$contains: x, weight: 3, multiplier: 2, citation: def}\n---\n"
            "- prompt: Hi\n  should:\n    - {$ref: d, weight: 5, citation: mine}\n")
    [point] = blueprint(text).prompts[0].should
    assert (point.fn, point.weight, point.citation) == ("contains", 2.0, "def")


def test_ref_to_a_string_keeps_the_citation_beside_it() -> None:
    text = "title: T\npoint_defs:\n  d: 'r.length > 3'\n---\n- prompt: Hi\n  should:\n    - {$ref: d, weight: 2, citation: c}\n"
    [point] = blueprint(text).prompts[0].should
    assert (point.fn, point.fn_args, point.weight, point.citation) == ("js", "r.length > 3", 2.0, "c")


def test_empty_point_is_an_error() -> None:
    assert "empty-point" in errors("- prompt: Hi\n  should:\n    - [a, '']\n")


# --- results ---------------------------------------------------------------------------------------

def test_header_tags_are_normalized() -> None:
    bp = blueprint('title: Tagged\ntags: ["Mental Health", "mental_health", "_Featured", "Legal!"]\n---\n- prompt: Hi\n')
    assert bp.tags == ["mental-health", "_Featured", "legal"]


def test_path_id_is_the_place_of_the_path_in_its_block() -> None:
    [prompt] = blueprint("- prompt: Hi\n  should:\n    - a\n    - [b, c]\n").prompts
    assert [p.path_id for p in prompt.should] == [None, "path_1", "path_1"]


def test_should_and_should_not_paths_join_only_at_the_same_place() -> None:
    [same] = blueprint("- prompt: Hi\n  should:\n    - [a]\n  should_not:\n    - [b]\n").prompts
    assert [p.path_id for p in same.points] == ["path_0", "path_0"]  # one OR group, as in the reference
    [apart] = blueprint("- prompt: Hi\n  should:\n    - [a]\n  should_not:\n    - x\n    - [b]\n").prompts
    assert [p.path_id for p in apart.points] == ["path_0", None, "path_1"]


def _verdict(judge: Judge, score: float | None) -> dict[str, Any]:
    return {"judge": judge_label(judge), "score": score, "reflection": "r",
            "error": None if score is not None else "Client/Network error: down"}


def test_a_failing_default_judge_is_replaced_by_the_backup_judge() -> None:
    """aggregate.jsonl's judge-failures case: 0.875, 0.75 and the backup's 0.001 → 0.54, no warning."""
    point = Point.build(kind="text", text="T0", span=(0, 0, 0, 0))
    judges = list(DEFAULT_JUDGES)
    verdicts = [_verdict(judges[0], None), _verdict(judges[1], 0.875), _verdict(judges[2], 0.75)]
    out = judged_assessment(base_assessment(point), point, judges, verdicts, _verdict(BACKUP_JUDGE, 0.001))
    assert out["coverageExtent"] == 0.54 and "error" not in out
    assert out["judgeModelId"].endswith("backup-claude-4-5-haiku(openrouter:anthropic/claude-haiku-4.5))")
    # without the backup (it failed too): the partial consensus, with the reference's warning
    out = judged_assessment(base_assessment(point), point, judges, verdicts, _verdict(BACKUP_JUDGE, None))
    assert out["coverageExtent"] == 0.81 and out["error"].startswith("1 of 3 judges failed")


def test_prompt_system_null_and_other_evaluation_config_are_kept() -> None:
    text = "title: T\nevaluationConfig:\n  embedding: {model: x}\n---\n- prompt: Hi\n  system: null\n"
    bp = blueprint(text)
    cfg = config_object(bp, ["openai:gpt-4o"], bp.prompts)
    assert cfg["evaluationConfig"] == {"embedding": {"model": "x"}}
    [prompt] = bp.prompts
    assert "system" in prompt.reference and prompt.reference["system"] is None  # what config.prompts writes


@pytest.mark.parametrize(("written", "canonical"), [("expr", "js"), ("external", "call"), ("imatch_all_of",
                                                    "imatch_all_of"), ("not_start_with", "not_starts_with")])
def test_the_references_aliases(written: str, canonical: str) -> None:
    fn = resolve_function(written)
    assert fn is not None and fn.name == canonical


@pytest.mark.parametrize("name", ["start_with", "end_with", "imatches_all_of", "imatches_at_least_n_of"])
def test_names_weval_does_not_register(name: str) -> None:
    assert resolve_function(name) is None
    assert "unknown-function" in errors(f"- prompt: Hi\n  should:\n    - ${name}: x\n")
