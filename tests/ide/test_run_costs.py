"""The Run lenses' costs (engine/ide/run_costs.py) are `evalspec run --dry-run`'s estimate, item by item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.analysis import analyze
from evalspec.cli import main
from evalspec.ide.run_costs import RunCost, dollars, run_costs
from evalspec.run.options import RunOptions

BP = """\
title: Costs
models: [openai:gpt-4o-mini]
---
- prompt: Say hello to the world.
  should:
    - $contains: hello
    - is friendly
- id: second
  prompt: Tell me a joke
  should:
    - mentions a pun
    - - $contains: knock
      - is short
- id: third
  prompt: What is 2 + 2?
  ideal: Four.
"""

SUITE = """\
description: costs
tests:
  - id: greet
    input: Say hi
    criteria: Says hi
    assert:
      - type: contains
        value: hi
      - type: llm-judge
        prompt: Is it friendly?
  - id: other
    input: Say bye
    criteria: Says bye
"""


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # `--dry-run` exits 2 when the run would be refused (a missing key): the estimate is the same.
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.setenv(name, "test-key")


def _dry_run(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main(["run", str(path), "--dry-run", "--json", *args]) in (0, 1)  # 1: the plan lists problems
    return json.loads(capsys.readouterr().out)["plan"]["cost"]


def _expected(cost: dict) -> RunCost:
    return RunCost(None if cost["unpriced"] else cost["usd"], sum(line["calls"] for line in cost["lines"]),
                   bool(cost["notes"]), tuple(cost["unpriced"]))


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest", "echo"])
def test_each_items_cost_is_the_dry_runs_for_that_item(tmp_path: Path, capsys, model: str) -> None:
    bp = tmp_path / "blueprints" / "costs.yml"
    bp.parent.mkdir()
    bp.write_text(BP)
    a = analyze(BP, bp)
    costs = run_costs(a, RunOptions(models=[model]))
    assert costs.problem is None
    assert costs.by_item[None] == _expected(_dry_run(bp, capsys, "-m", model))
    ids = [p.id for p in a.blueprint.prompts]
    assert list(costs.by_item) == [None, *ids]
    for item in ids:
        assert costs.by_item[item] == _expected(_dry_run(bp, capsys, "-m", model, "--prompt", item)), item
    # The parts add up to the whole (no embeddings here, which are batched over the file).
    assert sum(costs.by_item[i].calls for i in ids) == costs.by_item[None].calls
    assert costs.by_item[None].calls > 3  # judges are counted, not only answers


def test_an_unpriced_model_makes_the_cost_unknown_never_a_guess(tmp_path: Path, capsys) -> None:
    bp = tmp_path / "blueprints" / "costs.yml"
    bp.parent.mkdir()
    bp.write_text(BP)
    costs = run_costs(analyze(BP, bp), RunOptions(models=["openai:no-such-model-anywhere"]))
    whole = costs.by_item[None]
    assert whole.usd is None and whole.unpriced == ("openai:no-such-model-anywhere",)
    assert whole.text().startswith("cost unknown (no price for openai:no-such-model-anywhere), ")
    assert whole == _expected(_dry_run(bp, capsys, "-m", "openai:no-such-model-anywhere"))


def test_an_agentv_suites_tests_are_sized_as_the_dry_run_sizes_them(tmp_path: Path, capsys) -> None:
    suite = tmp_path / "evals" / "costs.eval.yaml"
    suite.parent.mkdir()
    suite.write_text(SUITE)
    a = analyze(SUITE, suite)
    assert not a.errors
    costs = run_costs(a, RunOptions(models=["openai:gpt-4o-mini"]))
    assert costs.by_item[None] == _expected(_dry_run(suite, capsys, "-m", "openai:gpt-4o-mini"))
    for item in ("greet", "other"):
        assert costs.by_item[item] == _expected(_dry_run(suite, capsys, "-m", "openai:gpt-4o-mini",
                                                         "--test", item)), item


def test_a_file_that_cannot_be_planned_is_not_sized(tmp_path: Path) -> None:
    suite = tmp_path / "evals" / "costs.eval.yaml"
    suite.parent.mkdir()
    text = SUITE.replace("description: costs", "description: costs\nexecution:\n  target: nowhere")
    costs = run_costs(analyze(text, suite), RunOptions())
    assert costs.by_item == {} and costs.problem is not None and "nowhere" in costs.problem


def test_the_lens_text() -> None:
    assert RunCost(0.0435, 14).text() == "≈ $0.04, 14 calls"
    assert RunCost(0.0435, 1, at_least=True).text() == "≥ $0.04, 1 call"
    assert RunCost(None, 36, unpriced=("a", "b", "c")).text() == "cost unknown (no price for a, b, …), 36 calls"
    assert [dollars(x) for x in (0, 0.004, 12.345, 1234.6)] == ["$0", "< $0.01", "$12.35", "$1,235"]
