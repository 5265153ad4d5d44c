"""`--dry-run` cost: the figures match a hand computation from the price table and the file.

Each expected number below is worked out by hand from the rule in docs/guide/costs.md: input tokens =
sum over the request's messages of ceil(UTF-8 bytes / 4) + 4; output tokens = the request's max_tokens;
an answer the judge reads is assumed to fill its max_tokens (4 bytes a token); prices are read straight
from engine/data/prices.json. The only thing taken from the code is the judges' wording, whose sizes
are pinned here as numbers (change the wording and the worked example in docs/guide/costs.md with them).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main

from .conftest import SmartFake, env_for, write

PRICES = json.loads((Path(__file__).resolve().parents[2] / "engine" / "data" / "prices.json").read_text())["models"]

BP = """title: Cost
description: A tiny suite
models: [openai:gpt-4o-mini]
evaluationConfig:
  llm-coverage:
    judges:
      - {model: "openai:gpt-4.1-mini", approach: holistic}
---
- id: p1
  prompt: Hello there
  should:
    - $contains: Hello
    - is friendly
- id: p2
  prompt: Name a colour.
  ideal: Blue is a colour.
"""


def tok(n_bytes: int) -> int:
    return math.ceil(n_bytes / 4)


def usd(model: str, inp: int, out: int, *, batch: bool = False) -> float:
    p = PRICES[model]
    cost = (inp * p["input"] + out * p["output"]) / 1_000_000
    return cost * (1 - p.get("batch_discount", 0)) if batch else cost


@pytest.fixture
def env(smart: SmartFake, monkeypatch: pytest.MonkeyPatch) -> SmartFake:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("EVALSPEC_PRICES", raising=False)
    return smart


def _dry(args: list[str], capsys: Any) -> dict[str, Any]:
    assert main(["run", *args, "--dry-run", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["plan"]["cost"]


def _line(cost: dict[str, Any], role: str, model: str) -> dict[str, Any]:
    return next(x for x in cost["lines"] if x["role"] == role and x["model"] == model)


def test_weval_dry_run_cost_matches_the_hand_computation(tmp_path: Path, env: SmartFake, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP)
    cost = _dry([str(bp)], capsys)

    # Answers: "Hello there" is 11 bytes -> 3 tokens + 4; "Name a colour." 14 bytes -> 4 + 4. Outputs 1,500 each.
    answers = _line(cost, "answers", "openai:gpt-4o-mini")
    assert (answers["calls"], answers["input_tokens"], answers["output_tokens"]) == (2, 7 + 8, 3000)
    assert answers["usd"] == pytest.approx(usd("gpt-4o-mini", 15, 3000))
    assert answers["usd"] == pytest.approx((15 * 0.15 + 3000 * 0.6) / 1e6)  # $0.00180225
    assert answers["batch_usd"] == pytest.approx(usd("gpt-4o-mini", 15, 3000) * 0.5)

    # Judge: system prompt 674 bytes; user prompt 1,263 bytes for "is friendly" with the answer empty,
    # and the answer (1,500 tokens = 6,000 bytes) appears twice (transcript and text).
    system = tok(674) + 4
    friendly = system + tok(1263 + 2 * 6000) + 4
    # p2 has no points but an ideal: 5 key points of 100 bytes, user prompt 1,255 bytes + 100 + 12,000.
    key_point = system + tok(1255 + 100 + 2 * 6000) + 4
    assert (friendly, key_point) == (3493, 3516)
    judge = _line(cost, "judge", "holistic(openai:gpt-4.1-mini)")
    assert (judge["calls"], judge["input_tokens"], judge["output_tokens"]) == (6, friendly + 5 * key_point, 6 * 500)
    assert judge["usd"] == pytest.approx(usd("gpt-4.1-mini", 21073, 3000))

    # Key-point extraction: once for p2, by the judge's model: system 160 bytes, user 368 bytes, 1,500 out.
    extract = _line(cost, "key points", "openai:gpt-4.1-mini")
    assert (extract["calls"], extract["input_tokens"], extract["output_tokens"]) == (1, tok(160) + 4 + tok(368) + 4, 1500)
    assert extract["usd"] == pytest.approx(usd("gpt-4.1-mini", 140, 1500))

    total = usd("gpt-4o-mini", 15, 3000) + usd("gpt-4.1-mini", 21073 + 140, 3000 + 1500)
    assert cost["usd"] == pytest.approx(total) == pytest.approx(0.01748745)
    # Batch mode batches every call here: the answers, the judges of written points, the key-point
    # extraction (with the first answers) and the judges of the extracted points (with the others).
    assert (judge["batch_interactive_calls"], extract["batch_interactive_calls"], answers["batch_interactive_calls"]) \
        == (0, 0, 0)
    batch = (usd("gpt-4o-mini", 15, 3000, batch=True) + usd("gpt-4.1-mini", friendly + 5 * key_point, 6 * 500, batch=True)
             + usd("gpt-4.1-mini", 140, 1500, batch=True))
    assert cost["batch_usd"] == pytest.approx(batch) == pytest.approx(0.008743725)
    assert judge["batch_usd"] == pytest.approx(0.0066146) and extract["batch_usd"] == pytest.approx(0.001228)
    assert cost["unpriced"] == [] and cost["at_least"] is False
    assert env.count == 0  # nothing was called

    assert main(["run", str(bp), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "interactive $0.017487; batch $0.008744" in out
    assert "judge       holistic(openai:gpt-4.1-mini)      6        21,073          3,000    $0.013229  $0.006615" in out
    assert "made one by one" not in out


def test_an_unknown_price_is_unknown_and_the_total_says_at_least(tmp_path: Path, env: SmartFake, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP.replace(
        '      - {model: "openai:gpt-4.1-mini", approach: holistic}',
        '      - {model: "openai:gpt-4.1-mini", approach: holistic}\n'
        '      - {model: "openai:house-judge", approach: prompt-aware}'))
    cost = _dry([str(bp), "-m", "openai:house-model"], capsys)
    unknown = _line(cost, "judge", "prompt-aware(openai:house-judge)")
    assert unknown["usd"] is None and unknown["batch_usd"] is None and unknown["priced"] is False
    assert _line(cost, "answers", "openai:house-model")["usd"] is None
    assert cost["unpriced"] == ["openai:house-model", "openai:house-judge"]
    priced = _line(cost, "judge", "holistic(openai:gpt-4.1-mini)")["usd"] + _line(cost, "key points", "openai:gpt-4.1-mini")["usd"]
    assert cost["usd"] == pytest.approx(priced)

    assert main(["run", str(bp), "-m", "openai:house-model", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"interactive at least ${priced:.6f} + unknown for openai:house-model, openai:house-judge" in out
    assert "$0.000000" not in out  # an unknown price is never shown as zero
    row = next(line for line in out.splitlines() if "prompt-aware(openai:house-judge)" in line and "judge " in line)
    assert row.split()[-2:] == ["unknown", "unknown"]

    # A price file makes it known.
    prices = write(tmp_path / "prices.yaml", "models:\n  house-model: {input: 1, output: 2, batch_discount: 0.5}\n"
                                             "  house-judge: {input: 3, output: 4}\n")
    cost = _dry([str(bp), "-m", "openai:house-model", "--prices", str(prices)], capsys)
    assert cost["unpriced"] == []
    assert _line(cost, "answers", "openai:house-model")["usd"] == pytest.approx((15 * 1 + 3000 * 2) / 1e6)
    assert _line(cost, "answers", "openai:house-model")["batch_usd"] == pytest.approx((15 + 6000) / 2e6)
    judge = _line(cost, "judge", "prompt-aware(openai:house-judge)")
    assert judge["batch_usd"] == judge["usd"]  # no batch discount in its price


AGENTV_TARGETS = """targets:
  - name: default
    provider: openai
    model: gpt-4o-mini
    max_output_tokens: 200
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: grader
  - name: grader
    provider: openai
    model: gpt-4.1-mini
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
"""

SUITE = """name: costs
execution:
  target: default
tests:
  - id: sum
    input: What is 2+2?
    criteria: Says 4
    assert:
      - {type: contains, value: "4"}
      - {type: llm-judge}
  - id: plain
    input: Say hi.
    criteria: Greets
"""


def test_agentv_dry_run_cost_matches_the_hand_computation(tmp_path: Path, env: SmartFake, capsys) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(tmp_path / "evals" / "s.eval.yaml", SUITE)
    cost = _dry([str(suite)], capsys)

    # Target: "What is 2+2?" 12 bytes -> 3 + 4; "Say hi." 7 bytes -> 2 + 4; each with AgentV's default system
    # prompt, 91 bytes -> 23 + 4. Output: max_output_tokens 200.
    answers = _line(cost, "answers", "default")
    assert (answers["calls"], answers["input_tokens"], answers["output_tokens"]) == (2, 7 + 6 + 2 * 27, 400)
    assert answers["usd"] == pytest.approx(usd("gpt-4o-mini", 67, 400))

    # Judges: the llm-judge of `sum` and the default judge of `plain` (no assertions) use the default
    # template, AgentV's: system 364 bytes; user 775 bytes for `sum` and 770 for `plain` with the answer
    # empty, plus the answer (200 tokens = 800 bytes) once. Output: 1,500 assumed (a judge call sets none).
    system = tok(364) + 4
    judge_in = (system + tok(775 + 800) + 4) + (system + tok(770 + 800) + 4)
    judge = _line(cost, "judge", "grader")
    assert (judge["calls"], judge["input_tokens"], judge["output_tokens"]) == (2, judge_in, 3000)
    assert judge_in == 985
    assert judge["usd"] == pytest.approx(usd("gpt-4.1-mini", 985, 3000))
    assert cost["usd"] == pytest.approx(usd("gpt-4o-mini", 67, 400) + usd("gpt-4.1-mini", 985, 3000))
    assert cost["usd"] == pytest.approx(0.00544405)  # the worked example of docs/guide/costs.md
    assert cost["batch_usd"] == pytest.approx(cost["usd"] / 2)
    assert env.count == 0


def test_agentv_trials_and_unsized_checks_make_the_total_at_least(tmp_path: Path, env: SmartFake, capsys) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    suite = write(tmp_path / "evals" / "s.eval.yaml", SUITE.replace(
        "execution:\n  target: default", "execution:\n  target: default\n  trials: {count: 3}").replace(
        '      - {type: llm-judge}', '      - {type: llm-judge}\n      - {type: agent-judge, prompt: "check it"}'))
    cost = _dry([str(suite)], capsys)
    answers = _line(cost, "answers", "default")
    assert (answers["calls"], answers["input_tokens"], answers["output_tokens"]) == (6, 3 * 67, 3 * 400)
    assert _line(cost, "judge", "grader")["calls"] == 3 * 3
    assert cost["at_least"] is True and any("agent-judge" in n for n in cost["notes"])
    assert main(["run", str(suite), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "interactive at least $" in out and "not in the estimate: agent-judge" in out


def test_dry_run_with_max_cost_says_how_many_cells_fit(tmp_path: Path, env: SmartFake, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", BP)
    # p1: its answer (7 in, 1,500 out at gpt-4o-mini) + one judge call (3,493 in, 500 out at gpt-4.1-mini).
    p1 = usd("gpt-4o-mini", 7, 1500) + usd("gpt-4.1-mini", 3493, 500)
    assert p1 == pytest.approx(0.00309825)
    cost = _dry([str(bp), "--max-cost", "0.004"], capsys)
    assert cost["max_cost"] == {"usd": 0.004, "cells": 2, "cells_within": 1}
    assert main(["run", str(bp), "--dry-run", "--max-cost", f"{p1 - 1e-6:.8f}"]) == 0
    assert "the first 0 of 2 cell(s) fit the estimate" in capsys.readouterr().out
    assert main(["run", str(bp), "--dry-run", "--max-cost", "1"]) == 0
    assert "--max-cost $1.00: every cell fits the estimate" in capsys.readouterr().out
