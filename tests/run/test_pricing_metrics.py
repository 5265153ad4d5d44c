"""The price table (shipped + user file), cost_usd in every row, and the metric assertions (latency,
cost, token-usage, execution-metrics) scored from what the target reported, as AgentV scores them — never
from a price (a chat target reports no cost: `cost` scores 0, "no cost data")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main
from evalspec.pricing import PriceFileError, PriceTable, model_key

from .conftest import AGENTV_TARGETS, SmartFake, env_for, options, run_events, write


@pytest.mark.parametrize(("name", "key"), [
    ("openai:gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("anthropic:claude-3-5-haiku-20241022", "claude-3-5-haiku"), ("claude-haiku-4.5", "claude-haiku-4-5"),
    ("openrouter:openai/gpt-4.1-mini", "gpt-4.1-mini"), ("models/gemini-2.0-flash-001", "gemini-2.0-flash"),
    ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
])
def test_model_names_find_their_price(name: str, key: str) -> None:
    assert model_key(name) == key
    assert PriceTable.load(env={}).price(name) is not None


def test_hand_computed_costs() -> None:
    table = PriceTable.load(env={})
    # gpt-4o: $2.50 in, $10 out, $1.25 cached in, per million.
    assert table.cost("gpt-4o", 1000, 500) == pytest.approx((1000 * 2.5 + 500 * 10) / 1e6)  # 0.0075
    assert table.cost("gpt-4o", 1000, 500, cached_input_tokens=400) == pytest.approx(
        (600 * 2.5 + 400 * 1.25 + 500 * 10) / 1e6)
    assert table.cost("gpt-4o", 1000, 500, batch=True) == pytest.approx(0.0075 / 2)
    assert table.cost("claude-3-5-haiku-20241022", 2_000_000, 1_000_000) == pytest.approx(2 * 0.8 + 4.0)


def test_an_unknown_model_has_no_price_never_a_guess() -> None:
    table = PriceTable.load(env={})
    assert table.price("gpt-4o-mega") is None  # not "gpt-4o" by prefix
    assert table.cost("some-local-llama", 10, 10) is None


def test_a_user_file_adds_and_overrides(tmp_path: Path) -> None:
    user = write(tmp_path / "prices.yml", "models:\n  my-model: {input: 1, output: 2}\n  gpt-4o: {input: 5, output: 5}\n")
    table = PriceTable.load(user, env={})
    assert table.cost("my-model", 1_000_000, 1_000_000) == 3.0
    assert table.cost("gpt-4o", 1_000_000, 0) == 5.0
    by_env = PriceTable.load(None, env={"EVALSPEC_PRICES": str(user)})
    assert by_env.price("my-model") is not None


@pytest.mark.parametrize("body", ["models: [1, 2]", "models:\n  m: {input: -1, output: 1}\n",
                                  "models:\n  m: {input: 1}\n", "models:\n  m: {input: 1, output: 1, batch_discount: 2}\n",
                                  "{{{"])
def test_a_bad_price_file_is_a_clear_error(tmp_path: Path, body: str) -> None:
    with pytest.raises(PriceFileError):
        PriceTable.load(write(tmp_path / "p.yml", body), env={})


SUITE = """name: metrics
description: Metric assertions.
execution:
  target: default
tests:
  - id: cost-ok
    input: "hi"
    criteria: c
    assert:
      - {type: cost, max_usd: 0.01}
  - id: cost-gate
    input: "hi"
    criteria: c
    assert:
      - {type: contains, value: hi}
      - {type: cost, max_usd: 0.000001, required: true}
  - id: tokens-latency
    input: "hi"
    criteria: c
    assert:
      - {type: token-usage, max_total: 18, max_output: 6}
      - {type: latency, max_ms: 60000}
  - id: exec
    input: "hi"
    criteria: c
    assert:
      - {type: execution-metrics, max_tool_calls: 0, max_llm_calls: 1, max_tokens: 10, max_cost_usd: 1}
"""


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def test_metrics_with_a_price(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    bp = write(tmp_path / "evals" / "m.eval.yaml", SUITE)
    # The fake reports 11 input and 7 output tokens for model "candidate".
    prices = write(tmp_path / "prices.json", json.dumps({"models": {"candidate": {"input": 100, "output": 1000}}}))
    run_events(bp, options(tmp_path, env_for(smart), prices=prices))
    rows = _rows(tmp_path / "out")
    expected = (11 * 100 + 7 * 1000) / 1e6  # 0.0081: what the run spent, in every row
    for row in rows.values():
        assert row["cost_usd"] == pytest.approx(expected)
    # A chat target reports no cost (AgentV's AI SDK providers give none): `cost` scores 0, "no cost data",
    # as AgentV scores it; the price-table cost is what the run spent, never what the check reads.
    assert rows["cost-ok"]["scores"][0]["misses"] == ["No cost data available in trace"]
    assert (rows["cost-ok"]["score"], rows["cost-ok"]["verdict"]) == (0.0, "fail")
    assert (rows["cost-gate"]["score"], rows["cost-gate"]["verdict"]) == (0.0, "fail")
    tl = rows["tokens-latency"]
    # total 18 ≤ 18 passes, output 7 > 6 fails → token-usage 0; a chat API reports no duration (AgentV's
    # AI SDK targets neither) → latency 0, "no duration data", never a pass on evalspec's own clock
    assert [s["score"] for s in tl["scores"]] == [0.0, 0.0] and tl["score"] == 0.0
    assert tl["scores"][1]["misses"] == ["No duration data available in trace"]
    ex = rows["exec"]["scores"][0]
    # tool calls 0 ≤ 0, llm calls 1 ≤ 1, tokens 18 > 10, no cost data → 2 of 4
    assert ex["score"] == 0.5 and any("Total tokens 18 > 10" in m for m in ex["misses"])
    assert "Cost data not available" in ex["misses"]


def test_without_a_price_the_checks_score_as_with_one(tmp_path: Path, smart: SmartFake) -> None:
    """The checks never read the price table: without a price the rows have no cost, the scores are the same."""
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    bp = write(tmp_path / "evals" / "m.eval.yaml", SUITE)
    run_events(bp, options(tmp_path, env_for(smart)))
    rows = _rows(tmp_path / "out")
    assert all(r["cost_usd"] is None for r in rows.values())
    assert [(s["score"], s["misses"]) for s in rows["cost-ok"]["scores"]] == [(0, ["No cost data available in trace"])]
    assert (rows["cost-gate"]["score"], rows["cost-gate"]["verdict"]) == (0.0, "fail")
    assert rows["exec"]["scores"][0]["score"] == 0.5
    assert [s["score"] for s in rows["tokens-latency"]["scores"]] == [0.0, 0.0]  # reported metrics still score


def test_the_cli_takes_a_price_file(tmp_path: Path, smart: SmartFake, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    bp = write(tmp_path / "evals" / "m.eval.yaml", SUITE)
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    bad = write(tmp_path / "bad.yml", "models: [1]\n")
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--prices", str(bad)]) == 2
    assert "bad.yml" in capsys.readouterr().err
    good = write(tmp_path / "p.yml", "candidate: {input: 100, output: 1000}\n")
    monkeypatch.setenv("EVALSPEC_PRICES", str(good))
    assert main(["run", str(bp), "-o", str(tmp_path / "out2")]) == 0
    assert _rows(tmp_path / "out2")["cost-ok"]["cost_usd"] == pytest.approx(0.0081)
