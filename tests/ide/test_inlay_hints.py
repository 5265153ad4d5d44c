"""Inlay hints (engine/ide/inlay_hints.py): generated ids, score shares, gates, collection sizes.

Shares are checked against the scorers themselves: scoring a prompt with one point (or one path) met
and the rest missed gives exactly that point's hinted share. Ids and shares are also checked against
what a real `evalspec run -m echo` writes.
"""

from __future__ import annotations

import glob
import json
import textwrap
from pathlib import Path

import pytest

from evalspec.analysis import analyze
from evalspec.cli import main
from evalspec.ide.inlay_hints import GATE, ID, SHARE, SIZE, InlayHint, inlay_hints, percent
from evalspec.scoring.agentv_aggregate import aggregate_test
from evalspec.scoring.weval_aggregate import aggregate_coverage

from .helpers import load


def _text(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def _at(text: str, hints: list[InlayHint], kind: str | None = None) -> dict[str, list[str]]:
    """Hints as {the text from the hint's position to the line's end: [labels]}."""
    lines = text.split("\n")
    out: dict[str, list[str]] = {}
    for h in hints:
        if kind is None or h.kind == kind:
            out.setdefault(lines[h.line][h.col:].strip() or f"<end of line {h.line}>", []).append(h.label)
    return out


BP = _text("""
    title: Demo
    models: [echo]
    ---
    - prompt: Say hello to the world.
      should:
        - $contains: hello
        - text: is friendly
          weight: 3
    - id: second
      prompt: Tell me a joke
      should:
        - mentions a pun
        - - $contains: knock
          - text: is short
            weight: 3
        - - $icontains: chicken
      should_not:
        - - is rude
    """)


def test_percent_never_rounds_a_share_to_nothing_or_everything() -> None:
    assert percent(0.25) == "25 %"
    assert percent(1 / 3) == "33.3 %"
    assert percent(1.0) == "100 %"
    assert percent(0.0001) == "<0.1 %"
    assert percent(0.99999) == ">99.9 %"
    assert percent(0.0) == "0 %"


def test_a_prompt_without_id_shows_the_generated_id_at_the_end_of_its_first_line() -> None:
    a = load(BP, "weval")
    ids = [h for h in inlay_hints(a) if h.kind == ID]
    assert len(ids) == 1  # the second prompt has its own id
    hint = ids[0]
    assert hint.label == f"id: {a.blueprint.prompts[0].id}"
    assert hint.label.startswith("id: hash-")
    line = BP.split("\n")[hint.line]
    assert line.startswith("- prompt: Say hello") and hint.col == len(line)


def test_point_shares_follow_the_weights() -> None:
    a = load(BP, "weval")
    shares = _at(BP, inlay_hints(a), SHARE)
    assert shares["$contains: hello"] == ["25 %"]
    assert shares["text: is friendly"] == ["75 %"]
    # Points outside the paths are half, the best path the other half; a path's points share the path.
    assert shares["mentions a pun"] == ["50 %"]
    assert shares["- $contains: knock"] == ["path 50 %"]
    # A path's id is its item's place in its block (path_1 here, should_not's path_0): they do not join.
    assert shares["$contains: knock"] == ["25 % of path"]
    assert shares["text: is short"] == ["75 % of path"]
    assert "is rude" not in shares  # alone in its path
    assert shares["- is rude"] == ["path 50 %"]
    assert shares["- $icontains: chicken"] == ["path 50 %"]
    assert "$icontains: chicken" not in shares  # alone in its path: the path's share is its share


@pytest.mark.parametrize("rubric", [
    "should:\n    - a\n    - text: b\n      weight: 2\n    - $contains: c\n",
    "should:\n    - a\n    - - b\n      - text: c\n        weight: 4\n    - - d\n",
    "should:\n    - - a\n    - - b\n      - c\nshould_not:\n    - e\n    - text: f\n      weight: 0.5\n",
    "should:\n    - text: a\n      weight: 0.1\n    - text: b\n      weight: 7\n",
])
def test_each_share_is_the_score_when_only_that_point_is_met(rubric: str) -> None:
    """The hinted share of a point outside the paths is the coverage score with that point met (1) and
    every other missed (0); a path's share is the score with all its points met."""
    text = "title: t\nmodels: [echo]\n---\n- id: p\n  prompt: hi\n  " + rubric.replace("\n", "\n  ")
    a = load(text, "weval")
    assert not a.errors
    points = a.blueprint.prompts[0].points
    hints = inlay_hints(a)
    by_pos = {(h.line, h.col): h for h in hints}
    for p in points:
        if p.path_id is None:
            hint = by_pos[(p.span.start_line, p.span.start_col)]
            score = aggregate_coverage((1.0 if q is p else 0.0, q.weight, q.path_id) for q in points)
            assert hint.label == percent(score)
    for path in {p.path_id for p in points if p.path_id}:
        score = aggregate_coverage((1.0 if q.path_id == path else 0.0, q.weight, q.path_id) for q in points)
        path_hints = {h.label for h in hints if h.label.startswith("path ")}
        assert path_hints == {f"path {percent(score)}"}


def test_hints_are_limited_to_the_lines_asked_for() -> None:
    a = load(BP, "weval")
    every = inlay_hints(a)
    some = inlay_hints(a, 9, 14)
    assert some == [h for h in every if 9 <= h.line < 14] and some


def test_a_collection_shows_its_size(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "CORE.json").write_text('["openai:gpt-4o-mini", "anthropic:claude-x", "openai:gpt-4o-mini"]')
    bp = tmp_path / "blueprints" / "c.yml"
    bp.parent.mkdir()
    text = "title: t\nmodels:\n  - CORE\n  - echo\n---\n- id: p\n  prompt: hi\n  should: [a]\n"
    bp.write_text(text)
    a = analyze(text, bp)
    sizes = _at(text, inlay_hints(a), SIZE)
    assert sizes == {"<end of line 2>": ["· 2 models"]}  # duplicates run once


AV = _text("""
    description: demo
    assert:
      - type: contains
        value: hi
    tests:
      - id: greet
        input: Say hi
        criteria: Says hi
        assert:
          - type: contains
            value: hi
            weight: 3
          - type: regex
            value: "h."
            required: true
      - id: other
        input: Say hi
        criteria: Says hi
        execution:
          skip_defaults: true
        assert:
          - type: equals
            value: Say hi
            required: 0.5
    """)


def test_an_assertion_shows_its_share_of_the_test_and_its_gate() -> None:
    a = load(AV, "agentv")
    assert not a.errors
    hints = _at(AV, inlay_hints(a))
    # greet: its two assertions and the suite's default (weight 1): 3 of 5, 1 of 5.
    assert hints["type: contains\n"[:-1]] == ["60 %"]
    assert hints["type: regex"] == ["20 % · gate ≥ 0.8"]
    assert hints["type: equals"] == ["100 % · gate ≥ 0.5"]
    assert len(inlay_hints(a)) == 3  # the suite's default has a share per test: no hint on it
    gate = [h for h in inlay_hints(a) if h.kind == GATE]
    assert len(gate) == 2
    # The share is the test's score with only that assertion met (no gate failing).
    greet = a.suite.tests[0]
    items = [(1.0 if k == 0 else 0.0, x.weight, False) for k, x in enumerate(greet.assertions)]
    assert percent(aggregate_test(items).score) == "60 %"


def test_files_without_a_model_have_no_hints() -> None:
    a = load("title: [unclosed\n", "weval")
    assert inlay_hints(a) == []


RUN_BP = _text("""
    title: Shares
    ---
    - prompt: alpha beta gamma
      should:
        - $contains: alpha
        - $contains: nowhere
        - text: is kind
          weight: 2
        - - $contains: beta
          - $contains: missing
        - - $contains: nothing
    - id: kept
      prompt: delta
      should:
        - $contains: delta
        - text: bogus
          weight: 3
    """)


def test_hinted_ids_and_shares_are_what_a_real_echo_run_writes(tmp_path: Path) -> None:
    bp = tmp_path / "blueprints" / "shares.yml"
    bp.parent.mkdir()
    bp.write_text(RUN_BP)
    a = analyze(RUN_BP, bp)
    assert not a.errors
    hints = inlay_hints(a)
    assert main(["run", str(bp), "-m", "echo", "--eval-method", "none", "-o", str(tmp_path / "out")]) == 0
    [results] = glob.glob(str(tmp_path / "out" / "**" / "*_comparison.json"), recursive=True)
    data = json.loads(Path(results).read_text())
    hinted = [h.label.removeprefix("id: ") for h in hints if h.kind == ID]
    assert data["promptIds"] == [hinted[0], "kept"]
    # echo answers with the prompt: the met function points' hinted shares add up to the score the run
    # wrote, once the judged points (not scored with --eval-method none) are taken out of the weights.
    scores = data["evaluationResults"]["llmCoverageScores"]
    first = scores[hinted[0]]["echo[temp:0]"]
    met = [x["coverageExtent"] for x in first["pointAssessments"]]
    assert met == [1.0, 0.0, 1.0, 0.0, 0.0, None]  # the reference's order: function points, then judged
    # Without the judged point: required alpha 1 of 2 → 0.5 of half; best path (beta 1 of 2) 0.5 of half.
    assert first["avgCoverageExtent"] == 0.5
    labels = _at(RUN_BP, hints, SHARE)
    # With every point scored: alpha 1 of 4 required weights, half the score → 12.5 %.
    assert labels["$contains: alpha"] == ["12.5 %"] and labels["text: is kind"] == ["25 %"]
    assert labels["- $contains: beta"] == ["path 50 %"] and labels["$contains: beta"] == ["50 % of path"]
    kept = scores["kept"]["echo[temp:0]"]
    assert [x["coverageExtent"] for x in kept["pointAssessments"]] == [1.0, None]
    assert _at(RUN_BP, hints, SHARE)["$contains: delta"] == ["25 %"]
