"""Each number a person reads, checked against the results file (issue 30, item 3): the per-model cost
beside the cost table, a verdict failed by a required check, a test whose every trial failed, an
interrupted run's cells still to run, the call-time column, the two sides of a diff. The report in
Chromium; the terminal as `evalspec run` prints it."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from evalspec.report import write_report
from evalspec.report.diff import REGRESSED, SAME, change_of
from evalspec.report.model import OK, CellResult

from ..fakeprovider import Reply
from ..run.conftest import AGENTV_TARGETS, KEY, SmartFake, classify, criterion_of, env_for, write
from .conftest import run_cli

PRICED = """title: Priced
models: [openai:gpt-4o-mini, openai:gpt-4.1-mini]
evaluationConfig:
  llm-coverage:
    judges:
      - {model: "openai:gpt-4o-mini", approach: holistic}
---
- id: capital
  prompt: What is the capital of France?
  should:
    - $contains: Paris
    - is friendly
"""


def _summary_rows(page: Any) -> dict[str, dict[str, str]]:
    heads = page.locator("#summary thead th").all_inner_texts()
    out = {}
    for row in page.locator("#summary tbody tr").all():
        cells = row.locator("td").all_inner_texts()
        out[cells[0]] = dict(zip(heads, cells, strict=True))
    return out


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory, runs: dict[str, Path]) -> dict[str, Any]:
    """The runs, made before the browser opens (Playwright keeps an event loop in this thread)."""
    base = tmp_path_factory.mktemp("numbers")
    priced = base / "priced"
    bp = write(priced / "p.weval.yml", PRICED)

    def decide(req: dict[str, Any]) -> str:
        return classify("CLASS_EXACT", "ok") if criterion_of(req) is not None else "Paris, friend"

    with SmartFake(decide) as fake:
        assert run_cli(["run", str(bp), "-o", str(priced / "out")], env_for(fake)) == 0
    suite_dir = base / "suite"
    write(suite_dir / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(suite_dir / "evals" / "n.eval.yaml", SUITE)
    terminal = io.StringIO()
    with _Breaks(_grader) as fake, contextlib.redirect_stdout(terminal):
        assert run_cli(["run", str(suite), "-o", str(suite_dir / "out"), "--retries", "0"], env_for(fake)) == 0
    judged = base / "judged"  # Weval's three default judges (OpenRouter), each with its reason
    bp = write(judged / "j.weval.yml", DEFAULT_JUDGES)
    with SmartFake(_three_judges) as fake:
        assert run_cli(["run", str(bp), "-o", str(judged / "out")], env_for(fake, OPENROUTER_API_KEY=KEY)) == 0
    return {"priced": priced, "suite": suite_dir, "terminal": terminal.getvalue(), "judged": judged}


DEFAULT_JUDGES = """title: Judged by default
models: [openai:gpt-4o-mini]
---
- id: capital
  prompt: What is the capital of France?
  should:
    - is friendly and names Paris
"""


def _three_judges(req: dict[str, Any]) -> str:
    if criterion_of(req) is not None:
        return classify("CLASS_EXACT", f"{req.get('model')} finds it friendly and correct")
    return "Paris, friend"


def test_the_per_model_cost_is_the_cost_tables(made: dict[str, Any], open_page: Any) -> None:
    tmp_path = made["priced"]
    cost_file = next((tmp_path / "out").glob("live/blueprints/*/*_cost.json"))
    lines = json.loads(cost_file.read_text())["lines"]
    view = open_page(next((tmp_path / "out").glob("live/blueprints/*/report.html")))
    rows = _summary_rows(view.page)
    for model in ("openai:gpt-4o-mini", "openai:gpt-4.1-mini"):
        answers = next(x for x in lines if x["role"] == "answers" and x["model"] == model)
        assert answers["usd"] > 0
        row = rows[f"{model}[temp:0]"]
        assert row["cost"] == f"${answers['usd']:.6f}", row  # not "unknown", not "$0.0000"
        assert row["call time"].endswith("ms")  # the calls' durations added up, named as such
    assert "duration" not in view.page.locator("#summary thead").inner_text()


SUITE = """name: numbers
description: d
execution:
  trials: {count: 2}
tests:
  - id: gate
    criteria: warm
    input: Hello
    assert:
      - type: contains
        value: Hello
      - type: rubrics
        criteria:
          - {id: r1, outcome: Is warm, required: true}
          - {id: r2, outcome: Is short}
  - id: broken
    criteria: anything
    input: this one breaks
    assert:
      - type: contains
        value: x
"""


class _Breaks(SmartFake):
    def _respond(self, rec: Any, reply: Any) -> tuple[int, bytes, dict[str, str]]:
        body = rec.body or b""
        if b"this one breaks" in body and b"grader-model" not in body:
            return super()._respond(rec, Reply.error(400, "bad request"))
        return super()._respond(rec, reply)


def _grader(req: dict[str, Any]) -> str:
    if req.get("model") == "grader-model":
        return json.dumps({"checks": [{"id": "r1", "satisfied": False, "reasoning": "cold"},
                                      {"id": "r2", "satisfied": True, "reasoning": "short"}],
                           "overall_reasoning": "no"})
    return "Hello there"


def test_a_required_miss_and_an_all_failed_test_read_the_same_everywhere(made: dict[str, Any],
                                                                          open_page: Any) -> None:
    tmp_path, out = made["suite"], made["terminal"]
    results = next(p for p in (tmp_path / "out").glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    rows = {r["test_id"]: r for r in map(json.loads, results.read_text().splitlines())}
    # AgentV v2.19: the missed required criterion fails the rubric assertion; the test's verdict is then its
    # weighted mean's (0.75: borderline), as the reference gives it (docs/reference-differences.md).
    assert rows["gate"]["verdict"] == "borderline" and 0.6 <= rows["gate"]["score"] < 0.8
    rubric = next(x for x in rows["gate"]["scores"] if x["type"] == "llm-judge")
    assert rubric["verdict"] == "fail"
    assert rows["broken"]["error"] and "HTTP 400" in rows["broken"]["error"]  # every trial failed: an error
    # The terminal's table: one borderline, one error, nothing "not scored".
    table = next(line for line in out.splitlines() if line.startswith("default "))
    assert table.split()[1:] == ["2", f"{rows['gate']['score']:.3f}", "0", "1", "0", "0", "1"]
    view = open_page(next((tmp_path / "out").glob("agentv/*/report.html")))
    page = view.page
    summary = _summary_rows(page)["default"]
    assert summary["borderline"] == "1" and summary["fail"] == "0" and summary["errors"] == "1"
    gate = view.cell("gate", "default")
    gate.click()
    assert page.locator("#detail .badge").first.inner_text() == "borderline"
    assert view.cell("broken", "default").inner_text() == "error"
    view.cell("broken", "default").click()
    assert "HTTP 400" in page.locator("#detail").inner_text()
    assert "price" not in page.locator("#detail").inner_text()


def test_an_interrupted_runs_cells_are_still_to_run_not_absent(made: dict[str, Any], runs: dict[str, Path],
                                                                tmp_path: Path, open_page: Any) -> None:
    # The run's database cut back to what it held after its first cell: only capital × candidate, unfinished.
    database = next(runs["weval"].parent.glob("*.run.db"))
    cut = tmp_path / database.name
    with contextlib.closing(sqlite3.connect(database)) as source, contextlib.closing(sqlite3.connect(cut)) as copy:
        source.backup(copy)
        for table in ("answers", "failures", "judgements", "scores", "usage"):
            copy.execute(f"DELETE FROM {table} WHERE NOT (item = 'capital' AND model LIKE 'openai:candidate%')")
        copy.execute("DELETE FROM key_points WHERE item != 'capital'")
        copy.execute("DELETE FROM embeddings")
        copy.execute("UPDATE run SET finished = 0")
        copy.commit()
        assert copy.execute("SELECT count(*) FROM answers").fetchone()[0] >= 1
    view = open_page(write_report([cut], tmp_path / "r.html"))
    page = view.page
    cell = view.cell("hostile", "openai:candidate[temp:0]")
    assert cell.inner_text() == "pending"
    cell.click()
    text = page.locator("#detail").inner_text()
    assert "Not run yet" in text and "--resume" in text and "not in this run" not in text


def test_the_two_sides_of_a_diff_are_named_apart(made: dict[str, Any], runs: dict[str, Path], tmp_path: Path,
                                                 open_page: Any) -> None:
    view = open_page(write_report([runs["weval"], runs["weval2"]], tmp_path / "d.html"))
    metas = view.page.locator("header .meta").all_inner_texts()
    old, new = (m.split(" · ")[0] for m in metas)
    assert old.startswith("old: ") and new.startswith("new: ") and old[5:] != new[5:]
    assert "score changes under 0.05 not counted" in view.page.locator("#diff-banner").inner_text()


def test_a_score_change_below_the_threshold_is_not_a_regression() -> None:
    old, new = CellResult(status=OK, score=0.93, verdict="pass"), CellResult(status=OK, score=0.90, verdict="pass")
    assert change_of(old, new) == SAME  # 0.03 < 0.05
    assert change_of(old, new, 0.01) == REGRESSED
    dropped = CellResult(status=OK, score=0.79, verdict="borderline")
    assert change_of(CellResult(status=OK, score=0.80, verdict="pass"), dropped) == REGRESSED  # the verdict fell


def test_a_failed_attempt_is_not_blamed_on_a_missing_price() -> None:
    from evalspec.scoring.trials import Attempt, TrialSettings, combine

    settings = TrialSettings(count=2, strategy="pass_at_k", cost_limit_usd=1.0)
    result = combine(settings, [Attempt(None, None, None, "HTTP 400: bad request"), Attempt(0.9, "pass", 0.002)],
                     "count")
    assert "cost_limit_note" not in result.details and result.details["cost_usd"] == 0.002
    unpriced = combine(settings, [Attempt(0.9, "pass", None)], "count")
    assert "no price" in unpriced.details["cost_limit_note"]  # an answer without a price still says so


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_a_diffs_cell_reads_whole_at_both_sizes(made: dict[str, Any], runs: dict[str, Path], tmp_path: Path,
                                                browser: Any, size: tuple[int, int]) -> None:
    """The selected cell of a diff: new above old when the detail is narrow (1024 px), side by side when
    wide; neither side's points table runs out of its column; the new score is the new run's."""
    from evalspec.report import load_results

    path = write_report([runs["weval"], runs["weval2"]], tmp_path / "d.html")
    new = load_results(runs["weval2"]).cells[("capital", "openai:candidate[temp:0]")]
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = ctx.new_page()
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("html[data-ready]", timeout=20000)
        i = page.evaluate("() => JSON.parse(document.getElementById('evalspec-data').textContent).items.indexOf('capital')")
        m = page.evaluate("() => JSON.parse(document.getElementById('evalspec-data').textContent).models"
                          ".indexOf('openai:candidate[temp:0]')")
        page.locator(f'.cell[data-i="{i}"][data-m="{m}"]').click()
        sides = page.locator("#detail .cols > .cellres")
        old_box, new_box = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
        assert old_box is not None and new_box is not None
        if size[0] == 1024:
            assert new_box["y"] < old_box["y"]  # stacked, the new (the selected cell's) first
            answer = sides.nth(1).locator(".answer").bounding_box()
            assert answer is not None and answer["y"] + 24 < size[1]
        else:
            assert new_box["x"] > old_box["x"] and abs(new_box["y"] - old_box["y"]) < 1  # side by side
        for side in range(2):
            assert sides.nth(side).evaluate("e => [...e.querySelectorAll('table.points')]"
                                            ".every(t => t.scrollWidth <= e.clientWidth + 1)")
        assert sides.nth(1).locator("h3").first.inner_text().lower().startswith("new: ")
        assert f"score {new.score:.3f}" in sides.nth(1).inner_text()
    finally:
        ctx.close()


def test_a_point_three_judges_scored_is_compact(made: dict[str, Any], open_page: Any) -> None:
    """Each judge on one line by its model's short name, with its score and reason, under the point across
    the row (the three long judge ids repeated made a judged point ~300 px tall)."""
    results = next((made["judged"] / "out").glob("live/blueprints/*/*_comparison.json"))
    data = json.loads(results.read_text())
    point = data["evaluationResults"]["llmCoverageScores"]["capital"]["openai:gpt-4o-mini[temp:0]"]["pointAssessments"][0]
    judges = [j["judgeModelId"] for j in point["individualJudgements"]]
    assert len(judges) == 3 and all("(openrouter:" in j for j in judges)
    view = open_page(next((made["judged"] / "out").glob("live/blueprints/*/report.html")))
    view.cell("capital", "openai:gpt-4o-mini[temp:0]").click()
    row = view.page.locator("#detail table.points tbody tr").first
    lines = row.locator(".sub div").all_inner_texts()
    text = row.inner_text()
    assert "holistic-" not in text and "openrouter:" not in text  # no long judge id
    for judge, said in zip(point["individualJudgements"], lines[0].split("\n"), strict=True):
        short = judge["judgeModelId"].split("/")[-1].rstrip(")")
        assert said == f"{short}: {judge['coverageExtent']:.2f} — {judge['reflection']}"
    box = row.bounding_box()
    assert box is not None and box["height"] <= 130, (box, lines)  # four lines: the point, a judge each
