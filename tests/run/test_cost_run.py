"""Real tokens and cost (console, result files, report) and `--max-cost`, against the fake provider on
127.0.0.1, which reports usage 11 tokens in / 7 out for every OpenAI-style call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main

from .conftest import SmartFake, classify, comparison, cost_file, criterion_of, env_for, write

IN, OUT = 11, 7  # the fake's usage per call

BP = """title: Cap
models: [openai:house]
---
- id: p1
  prompt: Say A
  should: [{$contains: A}]
- id: p2
  prompt: Say B
  should: [{$contains: B}]
- id: p3
  prompt: Say C
  should: [{$contains: C}]
"""

# Output tokens at $1,000 a million: a cell is estimated at 1,500 × 1000 / 10⁶ = $1.50 (its answer at
# max_tokens) and really costs 7 × 1000 / 10⁶ = $0.007.
PRICES = "models:\n  house: {input: 0, output: 1000}\n  house-judge: {input: 1000, output: 0}\n"


@pytest.fixture
def env(smart: SmartFake, monkeypatch: pytest.MonkeyPatch) -> SmartFake:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("EVALSPEC_PRICES", raising=False)
    return smart


def _run(tmp_path: Path, bp: Path, *args: str) -> int:
    return main(["run", str(bp), "-o", str(tmp_path / "out"), "--prices", str(tmp_path / "prices.yml"), *args])


def test_max_cost_stops_starting_cells_and_resume_with_a_higher_cap_runs_the_rest(
        tmp_path: Path, env: SmartFake, capsys) -> None:
    write(tmp_path / "prices.yml", PRICES)
    bp = write(tmp_path / "cap.weval.yml", BP)
    # p1 starts ($1.50 reserved); p2 would make $3.00 in flight > $1.60: it is not run, nor anything after.
    assert _run(tmp_path, bp, "--max-cost", "1.6", "-j", "1") == 4
    captured = capsys.readouterr()
    assert "stopped: --max-cost $1.60 reached: $0.000000 spent, ~$1.50 in flight, this cell ~$1.50; no new cell starts" in captured.err
    assert ("evalspec run: 2 cell(s) not run: --max-cost $1.60 reached: $0.000000 spent, ~$1.50 in flight, this cell "
            "~$1.50; run the same command with --resume and a higher --max-cost to run them") in captured.err
    assert len(env.chat_requests()) == 1 and "Say A" in json.dumps(env.chat_requests()[0])
    # Never as passes: the table counts them not scored, the results file says not run.
    row = next(line for line in captured.out.splitlines() if line.startswith("openai:house[temp:0]"))
    assert row.split()[1:] == ["3", "1.000", "1", "0", "0", "2", "0"]
    data = comparison(tmp_path / "out")
    coverage = data["evaluationResults"]["llmCoverageScores"]
    assert coverage["p1"]["openai:house[temp:0]"]["avgCoverageExtent"] == 1
    for pid in ("p2", "p3"):
        assert coverage[pid]["openai:house[temp:0]"] == {
            "error": "Not run: --max-cost $1.60 reached: $0.000000 spent, ~$1.50 in flight, this cell ~$1.50"}
        assert data["errors"][pid]["openai:house[temp:0]"].startswith("not run: --max-cost")
    assert "evalspecCost" not in data  # what the run paid is in the cost file beside the results
    cost = cost_file(tmp_path / "out")
    assert cost["usd"] == pytest.approx(OUT * 1000 / 1e6) and cost["not_run"] == 2
    assert cost["caps"] == {"--max-cost": 1.6} and cost["stopped"].startswith("not run: --max-cost $1.60")

    # The same command with --resume and a higher cap runs exactly the two cells not run.
    assert _run(tmp_path, bp, "--max-cost", "10", "-j", "1", "--resume") == 0
    out = capsys.readouterr().out
    assert len(env.chat_requests()) == 3
    assert "answers  openai:house      3            33             21  $0.021000" in out  # the first run's call too
    data = comparison(tmp_path / "out")
    assert all(data["evaluationResults"]["llmCoverageScores"][p]["openai:house[temp:0]"]["avgCoverageExtent"] == 1
               for p in ("p1", "p2", "p3"))
    cost = cost_file(tmp_path / "out")
    assert "stopped" not in cost and cost["usd"] == pytest.approx(3 * 0.007)

    # A resumed run counts what was spent before against the cap: $0.021 spent leaves no room for $1.50.
    assert _run(tmp_path, bp, "--max-cost", "1.5", "-j", "1", "--retry-errors", "--prompt", "p1") == 0


def test_max_cost_counts_judges_and_stops_before_the_judge_would_pass_it(tmp_path: Path, env: SmartFake,
                                                                        capsys) -> None:
    env.decide = lambda req: classify("CLASS_EXACT") if criterion_of(req) else None
    write(tmp_path / "prices.yml", PRICES)
    bp = write(tmp_path / "j.weval.yml", BP.replace("models: [openai:house]", """models: [openai:house]
evaluationConfig:
  llm-coverage:
    judges: [{model: "openai:house-judge", approach: holistic}]""").replace("should: [{$contains: A}]",
                                                                           "should: [is polite]"))
    assert _run(tmp_path, bp, "-j", "1") == 0
    out = capsys.readouterr().out
    # Real tokens and cost per role and model, the judge on its own line.
    assert "answers  openai:house                      3            33             21  $0.021000" in out
    assert "judge    holistic(openai:house-judge)      1            11              7  $0.011000" in out
    assert "total cost: $0.032000" in out
    lines = {(x["role"], x["model"]): x for x in cost_file(tmp_path / "out")["lines"]}
    assert lines[("judge", "holistic(openai:house-judge)")]["usd"] == pytest.approx(IN * 1000 / 1e6)

    # p1's estimate: its answer $1.50 + its judge (the judge's prompt with a 1,500-token answer twice, 3,453
    # tokens at $1,000 a million) = $4.953: a $5 cap admits p1; p2 ($1.50 more) would pass it.
    env.reset()
    assert _run(tmp_path, bp, "--max-cost", "5", "-j", "1", "-o", str(tmp_path / "capped")) == 4
    err = capsys.readouterr().err
    assert "2 cell(s) not run: --max-cost $5.00 reached: $0.000000 spent, ~$4.95 in flight, this cell ~$1.50" in err
    assert len(env.chat_requests()) == 2 and len(env.judge_requests()) == 1  # p1's answer and its judge
    # A cap below the first cell's estimate runs nothing, and says so (not "every call failed").
    env.reset()
    assert _run(tmp_path, bp, "--max-cost", "4", "-o", str(tmp_path / "none")) == 4
    assert "3 cell(s) not run: --max-cost $4.00 reached" in capsys.readouterr().err
    assert env.count == 0


def test_max_cost_refuses_to_start_when_a_model_has_no_price(tmp_path: Path, env: SmartFake, capsys) -> None:
    write(tmp_path / "prices.yml", PRICES)
    bp = write(tmp_path / "cap.weval.yml", BP)
    assert _run(tmp_path, bp, "--max-cost", "5", "-m", "openai:no-such-price") == 2
    assert ("--max-cost cannot be held: no price for openai:no-such-price; add them to a price file"
            in capsys.readouterr().err)
    assert env.count == 0
    assert _run(tmp_path, bp, "--max-cost", "-1") == 2
    assert "--max-cost is a number of US dollars" in capsys.readouterr().err


def test_unknown_prices_are_unknown_in_the_summary_and_the_results(tmp_path: Path, env: SmartFake, capsys) -> None:
    write(tmp_path / "prices.yml", PRICES)
    bp = write(tmp_path / "cap.weval.yml", BP)
    assert _run(tmp_path, bp, "-m", "openai:no-such-price", "--prompt", "p1") == 0
    out = capsys.readouterr().out
    assert "answers  openai:no-such-price      1            11              7  unknown" in out
    assert "total cost: unknown (no price for no-such-price)" in out  # not "at least $0.000000"
    cost = cost_file(tmp_path / "out")
    assert cost["lines"][0]["usd"] is None and cost["unpriced"] == ["no-such-price"]


AGENTV_TARGETS = """targets:
  - name: default
    provider: openai
    model: house
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: grader
  - name: grader
    provider: openai
    model: house-judge
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
"""

SUITE = """name: costs
execution:
  target: default
tests:
  - {id: a, input: x, criteria: c, assert: [{type: llm-judge}]}
  - {id: b, input: x, criteria: c, assert: [{type: llm-judge}]}
  - {id: c, input: x, criteria: c, assert: [{type: llm-judge}]}
"""


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def test_agentv_rows_carry_judge_cost_and_max_cost_stops_cells(tmp_path: Path, env: SmartFake, capsys) -> None:
    env.decide = lambda req: ('{"score": 1, "hits": ["ok"], "misses": [], "reasoning": "fine"}'
                              if "grade the answer" in json.dumps(req).lower() else None)
    write(tmp_path / "prices.yml", PRICES)
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    assert _run(tmp_path, suite) == 0
    out = capsys.readouterr().out
    rows = _rows(tmp_path / "out")
    for t in "abc":
        assert rows[t]["cost_usd"] == pytest.approx(OUT * 1000 / 1e6)  # the target's call
        assert rows[t]["judge_target"] == "grader"
        assert rows[t]["judge_token_usage"] == {"input": IN, "output": OUT, "calls": 1}
        assert rows[t]["judge_cost_usd"] == pytest.approx(IN * 1000 / 1e6)
    assert "judge    grader       3            33             21  $0.033000" in out

    # Estimate per test: target (⌈1/4⌉+4 = 5 in, 1,500 out) = $1.50; judge (the default template with a
    # 1,500-token answer, at $1,000 a million input tokens) ≈ $1.67: a $4 cap admits one test (a), and
    # b would need a's ~$3.17 in flight + its own: not run, nor c.
    env.reset()
    assert _run(tmp_path, suite, "--max-cost", "4", "-o", str(tmp_path / "capped")) == 4
    err = capsys.readouterr().err
    assert "evalspec run: 2 cell(s) not run: --max-cost $4.00 reached" in err
    rows = _rows(tmp_path / "capped")
    assert rows["a"]["score"] == 1 and rows["a"]["error"] is None
    for t in "bc":
        assert (rows[t]["score"], rows[t]["verdict"]) == (None, "not scored")
        assert rows[t]["error"].startswith("not run: --max-cost $4.00 reached")
    assert len(env.chat_requests()) == 2  # a's target and a's judge

    # --resume with a higher cap runs b and c only; the rows and the spend cover all three.
    assert _run(tmp_path, suite, "--max-cost", "100", "-o", str(tmp_path / "capped"), "--resume") == 0
    assert "judge    grader       3            33             21  $0.033000" in capsys.readouterr().out
    assert len(env.chat_requests()) == 6
    rows = _rows(tmp_path / "capped")
    assert all(rows[t]["score"] == 1 and rows[t]["error"] is None for t in "abc")


def test_report_carries_real_cost_per_role_and_model(tmp_path: Path, env: SmartFake, capsys) -> None:
    write(tmp_path / "prices.yml", PRICES)
    bp = write(tmp_path / "cap.weval.yml", BP)
    assert _run(tmp_path, bp, "-j", "1", "--max-cost", "1.6", "--no-report") == 4
    capsys.readouterr()
    from evalspec.report import load_results
    from evalspec.report.markdown import render_markdown

    files = sorted((tmp_path / "out").glob("live/blueprints/*/*_comparison.json"))
    md = render_markdown([load_results(files[-1])])
    assert "### Tokens and cost" in md
    assert "| answers | openai:house | 1 | 11 | 7 | $0.007000 |" in md
    assert "Total cost: $0.007000" in md
    assert "> Stopped: not run: --max-cost $1.60 reached" in md
    # The journal of the same run says the same.
    journal = next((tmp_path / "out").glob("live/blueprints/*/*.run.db"))
    assert load_results(journal).costs["lines"][0]["usd"] == pytest.approx(0.007)


def test_embeddings_are_estimated_and_counted_in_the_real_spend(tmp_path: Path, env: SmartFake, capsys) -> None:
    write(tmp_path / "prices.yml", PRICES)
    bp = write(tmp_path / "cap.weval.yml", BP.replace("  prompt: Say A\n", "  prompt: Say A\n  ideal: A\n"))
    assert _run(tmp_path, bp, "--dry-run", "--json", "--eval-method", "embedding") == 0
    lines = json.loads(capsys.readouterr().out)["plan"]["cost"]["lines"]
    emb = next(x for x in lines if x["role"] == "embeddings")
    # One ideal (⌈1/4⌉ = 1 token) and three answers at 1,500 tokens, one request, at $0.02 a million.
    assert (emb["model"], emb["calls"], emb["input_tokens"]) == ("openai:text-embedding-3-small", 1, 1 + 3 * 1500)
    assert emb["usd"] == pytest.approx(4501 * 0.02 / 1e6)
    assert _run(tmp_path, bp, "--eval-method", "embedding", "--max-cost", "100", "--prices",
                str(write(tmp_path / "p2.yml", "models:\n  house: {input: 0, output: 1000}\n"))) == 0
    # The embedding calls are in what the run paid: the tokens the provider reported (the fake: a word a
    # token), priced by the shipped table's text-embedding-3-small at $0.02 a million.
    sent = [r.json["input"] for r in env.requests if r.path.endswith("/embeddings")]
    words = sum(len(str(t).split()) for inputs in sent for t in inputs)
    assert sent and words > 0
    line = next(x for x in cost_file(tmp_path / "out")["lines"] if x["role"] == "embeddings")
    assert (line["model"], line["calls"], line["input_tokens"], line["output_tokens"]) == \
        ("openai:text-embedding-3-small", len(sent), words, 0)
    assert line["usd"] == pytest.approx(words * 0.02 / 1e6)
    assert "embeddings  openai:text-embedding-3-small" in capsys.readouterr().out


def test_a_call_that_reports_no_usage_costs_unknown_not_zero() -> None:
    from evalspec.pricing import Price, PriceTable
    from evalspec.run.cost.spend import Spend
    from evalspec.run.events import Cell

    spend = Spend(PriceTable({"text-embedding-3-small": Price(input=0.02, output=0)}))
    assert spend.record("embed", "openai:text-embedding-3-small", Cell("", "e"), model="text-embedding-3-small",
                        reported=None, input_tokens=None, output_tokens=0) is None
    priced = spend.record("embed", "openai:text-embedding-3-small", Cell("", "e"), model="text-embedding-3-small",
                          reported=None, input_tokens=1000, output_tokens=0)
    assert priced == pytest.approx(1000 * 0.02 / 1e6)  # the model has a price: only the usage was missing
    out = spend.to_json()
    assert out["lines"][0]["calls"] == 2 and out["lines"][0]["input_tokens"] == 1000
    assert out["lines"][0]["usd"] is None and out["unpriced"] == ["text-embedding-3-small"]
