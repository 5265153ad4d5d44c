"""A check that was not made is never a pass: unscorable AgentV assertions make a test "not scored" (or
"fail" where AgentV would fail it) in the row, the console table, the editor's lens, --fail-under and
--dry-run — each naming the assertion and the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main
from evalspec.ide.runs import RunBoard, run_items

from .conftest import AGENTV_TARGETS, SmartFake, env_for, of_type, options, run_events, write

# `checks-citations` is not an AgentV type and no .agentv/assertions file defines it: a custom
# assertion evalspec cannot run, whatever else gets implemented.
SUITE = """name: honest
description: Honest gates.
execution:
  target: default
tests:
  - id: required-unscorable
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello}
      - {type: checks-citations, name: citations, required: true}
  - id: optional-unscorable
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello}
      - {type: checks-citations, name: citations}
  - id: gate-fails-anyway
    input: hello
    criteria: c
    assert:
      - {type: contains, value: goodbye, required: true}
      - {type: checks-citations, name: citations, required: true}
  - id: all-scored
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello, required: true}
"""


def _suite(tmp_path: Path, body: str = SUITE, targets: str = AGENTV_TARGETS) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", targets)
    return write(tmp_path / "evals" / "s.eval.yaml", body)


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    assert files
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def test_rows_never_pass_on_a_check_that_was_not_made(tmp_path: Path, smart: SmartFake) -> None:
    events = run_events(_suite(tmp_path), options(tmp_path, env_for(smart)))
    rows = _rows(tmp_path / "out")

    row = rows["required-unscorable"]
    assert (row["score"], row["verdict"]) == (None, "not scored")
    [unscored] = row["not_scored"]
    assert unscored["name"] == "citations" and unscored["required"] is True
    assert "custom assertion type 'checks-citations'" in unscored["reason"]
    entry = next(s for s in row["scores"] if s["name"] == "citations")
    assert entry["score"] is None and entry["verdict"] == "not scored"
    assert entry["reasoning"].startswith("not scored: custom assertion type")

    # Optional or not, the missing score could have changed the test's: never a pass on the rest.
    assert (rows["optional-unscorable"]["score"], rows["optional-unscorable"]["verdict"]) == (None, "not scored")
    # A scored gate that fails fails the test whatever the unscored one would have said (as AgentV would).
    assert (rows["gate-fails-anyway"]["score"], rows["gate-fails-anyway"]["verdict"]) == (0.0, "fail")
    assert (rows["all-scored"]["score"], rows["all-scored"]["verdict"]) == (1.0, "pass")
    assert "not_scored" not in rows["all-scored"]

    finished = of_type(events, "run_finished")[0].summary
    [model] = finished.models
    assert (model.passed, model.failed, model.not_scored, model.scored) == (1, 1, 2, 2)
    assert model.mean == 0.5  # the scored tests only; the unscored ones are counted apart
    notes = "\n".join(finished.notes)
    assert "required-unscorable × default" in notes and "citations (checks-citations, required)" in notes
    assert "optional-unscorable × default" in notes


def test_fail_under_and_the_table_say_what_was_not_scored(tmp_path: Path, smart: SmartFake, monkeypatch,
                                                          capsys) -> None:
    """The issue's reproducer: a required gate that cannot run and a passing `contains`."""
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    bp = _suite(tmp_path, """name: repro
description: d
execution:
  target: default
tests:
  - id: t
    input: hello
    criteria: c
    assert:
      - {type: checks-citations, name: citations, required: true}
      - {type: contains, value: hello}
""")
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--fail-under", "0.9"]) == 1
    out, err = capsys.readouterr()
    assert "1 cell(s) not scored" in err and "--fail-under 0.9 fails" in err
    assert "citations (checks-citations, required): custom assertion type" in err
    header, _, row = out.splitlines()[:3]
    assert "not scored" in header
    cols = dict(zip(["model", "cells", "mean", "pass", "borderline", "fail", "not scored", "errors"], row.split(),
                    strict=True))
    assert (cols["pass"], cols["not scored"], cols["mean"]) == ("0", "1", "—")
    assert "note: not scored: t × default: not scored: citations" in out
    # Without --fail-under the run itself succeeds: it ran and said what it could not score.
    assert main(["run", str(bp), "-o", str(tmp_path / "out2")]) == 0


def test_a_missed_required_rubric_criterion_fails_the_assertion_not_the_test(tmp_path: Path, smart: SmartFake) -> None:
    def grader(req: dict[str, Any]) -> str | None:
        if req.get("model") != "grader-model":
            return None
        return json.dumps({"checks": [{"id": "polite", "satisfied": True, "reasoning": "yes"},
                                      {"id": "cites", "satisfied": False, "reasoning": "no source"}],
                           "overall_reasoning": "mostly"})

    smart.decide = grader
    bp = _suite(tmp_path, """name: rubric-gate
description: d
execution:
  target: default
tests:
  - id: required-missed
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello, weight: 9}
      - type: rubrics
        criteria:
          - {id: polite, outcome: Is polite, weight: 9}
          - {id: cites, outcome: Cites a source}
  - id: optional-missed
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello, weight: 9}
      - type: rubrics
        criteria:
          - {id: polite, outcome: Is polite, weight: 9}
          - {id: cites, outcome: Cites a source, required: false}
""")
    run_events(bp, options(tmp_path, env_for(smart)))
    rows = _rows(tmp_path / "out")
    # contains 1.0 × 9 and the rubric 0.9 × 1: `cites` was required, so the rubric assertion fails (AgentV);
    # the test's verdict then comes from the weighted mean, 0.99: a pass.
    rubric = rows["required-missed"]["scores"][1]
    assert (rubric["type"], rubric["score"], rubric["verdict"]) == ("llm-judge", pytest.approx(0.9), "fail")
    assert rows["required-missed"]["verdict"] == "pass"
    assert rows["required-missed"]["score"] == pytest.approx((9 + 0.9) / 10)
    assert (rows["optional-missed"]["verdict"], rows["optional-missed"]["score"]) == ("pass", pytest.approx(0.99))


def test_no_judge_and_a_failing_judge_are_not_scored(tmp_path: Path, smart: SmartFake) -> None:
    bp = write(tmp_path / "s.eval.yaml", """name: nojudge
description: d
tests:
  - id: t
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello}
      - type: rubrics
        criteria: [says hello]
""")
    [scored] = of_type(run_events(bp, options(tmp_path, env_for(smart), models=["echo"])), "scored")
    assert (scored.score, scored.verdict) == (None, "not scored")
    assert scored.details["not_scored"][0]["reason"].startswith("no judge")

    smart.decide = lambda req: "not json at all" if req.get("model") == "grader-model" else None
    bp = _suite(tmp_path, """name: badjudge
description: d
execution:
  target: default
tests:
  - id: t
    input: hello
    criteria: c
    assert:
      - {type: contains, value: hello}
      - {type: llm-judge, name: judged, required: true}
""")
    [scored] = of_type(run_events(bp, options(tmp_path, env_for(smart))), "scored")
    assert (scored.score, scored.verdict) == (None, "not scored")
    assert scored.details["not_scored"][0]["name"] == "judged"


def test_a_crash_while_scoring_is_not_a_pass(tmp_path: Path, smart: SmartFake, monkeypatch) -> None:
    import evalspec.scoring.agentv_assertions as scorers

    def broken(*args: Any, **kw: Any) -> Any:
        raise RuntimeError("scorer exploded")

    # The function-points stage (run/score_functions.deterministic) calls the scorer through its module.
    monkeypatch.setattr(scorers, "evaluate_assertion", broken)
    bp = _suite(tmp_path, """name: crash
description: d
execution:
  target: default
tests:
  - {id: t, input: hello, criteria: c, assert: [{type: contains, value: hello, required: true}]}
""")
    [scored] = of_type(run_events(bp, options(tmp_path, env_for(smart))), "scored")
    assert (scored.score, scored.verdict) == (None, "not scored")
    assert "RuntimeError: scorer exploded" in scored.details["not_scored"][0]["reason"]


def test_dry_run_lists_what_will_not_be_scored_before_calling_anything(tmp_path: Path, smart: SmartFake,
                                                                      monkeypatch, capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    bp = _suite(tmp_path)
    assert main(["run", str(bp), "--dry-run", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("not scored:"))
    assert "citations (checks-citations, required: those tests will be not scored) in 3 cell(s)" in line
    assert "required-unscorable × default" in line and "custom assertion type 'checks-citations'" in line
    assert smart.requests == []

    assert main(["run", str(bp), "--dry-run", "--json", "-o", str(tmp_path / "out")]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    [group] = plan["not_scored"]
    assert (group["name"], group["type"], group["cells"], group["required"]) == ("citations", "checks-citations", 3,
                                                                                 True)
    # Without a judge, judged assertions are listed too.
    nojudge = write(tmp_path / "nojudge.eval.yaml", """name: nojudge
description: d
tests:
  - {id: t, input: hello, criteria: c, assert: [{type: rubrics, criteria: [says hello]}]}
  - {id: u, input: hello, criteria: only a criteria, so the default judge grades it}
""")
    assert main(["run", str(nojudge), "-m", "echo", "--dry-run"]) == 1  # the plan lists a problem
    out = capsys.readouterr().out
    assert "not scored: rubrics (rubrics) in 1 cell(s) (t × echo): no judge" in out
    assert "not scored: llm-judge (llm-judge) in 1 cell(s) (u × echo): no judge" in out
    assert smart.requests == []


def test_the_editor_lens_names_the_assertion_and_the_reason(tmp_path: Path, smart: SmartFake) -> None:
    from evalspec.analysis import analyze_file

    bp = _suite(tmp_path)
    events = run_events(bp, options(tmp_path, env_for(smart)))
    board = RunBoard()
    items = run_items(analyze_file(bp))
    board.start(items, None)
    for e in events:
        board.apply(e)
    by_id = {i.item_id: i for i in items}
    title = board.item_title(by_id["required-unscorable"])
    assert title is not None and title.startswith("⊘ not scored (citations: custom assertion type")
    assert board.item_title(by_id["gate-fails-anyway"]).startswith("✗ 0.00")
    suite = board.suite_title()
    assert suite is not None and "2 not scored" in suite and "1 pass" in suite
    hover = board.item_markdown("optional-unscorable")
    assert hover is not None and "(not scored)" in hover and "not scored citations (not scored): not scored: custom" in hover


def test_a_regex_that_times_out_on_the_answer_is_not_scored(tmp_path: Path) -> None:
    # The answer makes AgentV's backtracking regex run past its deadline: the check was not made, so
    # the test is neither failed by a 0 (as an error would) nor, negated, passed.
    from .conftest import SmartFake

    with SmartFake(lambda req: "a" * 5_000 + "!") as fake:
        bp = _suite(tmp_path, """name: slow-regex
description: d
execution:
  target: default
tests:
  - {id: gate, input: hello, criteria: c, assert: [{type: regex, value: "(a+)+$", required: true}]}
  - {id: negated, input: hello, criteria: c, assert: [{type: regex, value: "(a+)+$", negate: true}]}
  - {id: other-fails, input: hello, criteria: c,
     assert: [{type: contains, value: zzz, required: true}, {type: regex, value: "(a+)+$"}]}
""")
        run_events(bp, options(tmp_path, env_for(fake)))
    rows = _rows(tmp_path / "out")
    for name in ("gate", "negated"):
        row = rows[name]
        assert (row["score"], row["verdict"]) == (None, "not scored"), name
        [entry] = row["scores"]
        assert entry["score"] is None and entry["verdict"] == "not scored"
        assert entry["reasoning"].startswith("not scored: regex /(a+)+$/") and "longer than" in entry["reasoning"]
    # A scored gate that fails still fails the test.
    assert (rows["other-fails"]["score"], rows["other-fails"]["verdict"]) == (0.0, "fail")
