#!/usr/bin/env python3
"""`--dry-run`'s cost of bench/judged_blueprint.py's blueprint, computed by hand, then compared with the CLI's.

The hand computation uses nothing of the engine's estimator: the rule of docs/guide/costs.md (input tokens of a request =
Σ over its messages, the system prompt one of them, of ⌈UTF-8 bytes ÷ 4⌉ + 4; output tokens = max_tokens:
1,500 for answers and extractions, 500 for Weval judges; an answer not known yet = 4 × 1,500 bytes; an
extraction's 5 key points of 100 bytes each), the price table read as JSON (engine/data/prices.json), the
shared generator's text (a prompt `Question {i}: explain the concept number {i} in two sentences.`, the
prose points `mentions concept {i} by name` and `is concise`, the ideal `Concept {i} is explained here in
two plain sentences.`) and the fixed text of the prompts evalspec sends, measured once by rendering them
with every field empty (the constants below). Prompts are grouped by how many digits their number has
and whether they keep their points (a row per group: count × tokens), as one would on paper.

usage: dry_run_by_hand.py N [--ideal-only K] [--blueprint FILE]   (FILE: compare with `evalspec run FILE --dry-run --json`)
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The fixed text evalspec sends, in UTF-8 bytes, with every field empty (weval_judge.py).
JUDGE_SYSTEM = 528  # SYSTEM_PROMPT without a suite description (standard and prompt-aware judges)
JUDGE_USER = {"standard": 1180, "prompt-aware": 1190}  # "the criterion" / "THIS SPECIFIC criterion"
EXTRACT_SYSTEM = 160
EXTRACT_USER = 331
TRANSCRIPT_USER = len("user: ")  # a transcript line's label
TRANSCRIPT_GENERATED = len("\n--------------------\nassistant (generated): ")
ANSWER_BYTES = 4 * 1500  # an answer not known yet fills its max_tokens
KEY_POINTS, KEY_POINT_BYTES = 5, 100
ANSWER_OUT, JUDGE_OUT = 1500, 500

MODELS = {"openai:gpt-4o-mini": "gpt-4o-mini", "anthropic:claude-3-5-haiku-20241022": "claude-3-5-haiku"}
JUDGES = [("oa(openai:gpt-4.1-mini)", "gpt-4.1-mini", "standard"),
          ("an(anthropic:claude-3-5-haiku-latest)", "claude-3-5-haiku", "prompt-aware")]
KEY_POINT_MODEL = ("openai:gpt-4.1-mini", "gpt-4.1-mini")


def tokens(n_bytes: int) -> int:
    return math.ceil(n_bytes / 4) + 4


def by_hand(n: int, ideal_only: int) -> dict[tuple[str, str], list[int]]:
    """(role, model) → [calls, input tokens, output tokens]."""
    groups: Counter[tuple[int, bool]] = Counter()  # (digits, keeps its points) → prompts
    for i in range(n):
        groups[(len(str(i)), i % ideal_only != ideal_only - 1)] += 1
    lines: dict[tuple[str, str], list[int]] = {}

    def add(role: str, model: str, count: int, inp: int, out: int) -> None:
        line = lines.setdefault((role, model), [0, 0, 0])
        line[0] += count
        line[1] += count * inp
        line[2] += count * out

    print(f"{'digits':>6} {'points':>6} {'prompts':>8}  per call: answer  judge(criterion, approach)…  extraction")
    for (d, points), count in sorted(groups.items()):
        prompt = 56 + 2 * d  # "Question {i}: explain the concept number {i} in two sentences."
        answer = tokens(prompt)
        conversation = TRANSCRIPT_USER + prompt + TRANSCRIPT_GENERATED + ANSWER_BYTES
        criteria = [25 + d, 10] if points else [KEY_POINT_BYTES] * KEY_POINTS  # "mentions concept {i} by name", "is concise"
        shown = []
        for model in MODELS:
            add("answers", model, count, answer, ANSWER_OUT)
        for label, _, approach in JUDGES:
            for c in criteria:
                per = tokens(JUDGE_SYSTEM) + tokens(JUDGE_USER[approach] + conversation + ANSWER_BYTES + c)
                add("judge", label, count * len(MODELS), per, JUDGE_OUT)
                shown.append(per)
        extraction = ""
        if not points:
            ideal = 50 + d  # "Concept {i} is explained here in two plain sentences."
            per = tokens(EXTRACT_SYSTEM) + tokens(EXTRACT_USER + ideal + TRANSCRIPT_USER + prompt)
            add("key points", KEY_POINT_MODEL[0], count, per, ANSWER_OUT)
            extraction = str(per)
        print(f"{d:>6} {'yes' if points else 'no':>6} {count:>8,}  {answer:>6}  "
              f"{', '.join(map(str, sorted(set(shown))))}  {extraction}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--ideal-only", type=int, default=4)
    ap.add_argument("--blueprint", type=Path)
    args = ap.parse_args()
    prices = json.loads((ROOT / "engine" / "data" / "prices.json").read_text())["models"]
    price_of = {**MODELS, **{label: name for label, name, _ in JUDGES}, KEY_POINT_MODEL[0]: KEY_POINT_MODEL[1]}
    lines = by_hand(args.n, args.ideal_only)
    total = batch = 0.0
    print(f"\n{'role':<11}{'model':<40}{'calls':>8}{'input':>14}{'output':>13}{'interactive':>14}{'batch':>14}")
    for (role, model), (calls, inp, out) in lines.items():
        p = prices[price_of[model]]
        usd = (inp * p["input"] + out * p["output"]) / 1e6
        discounted = usd * (1 - p["batch_discount"])
        total += usd
        batch += discounted
        print(f"{role:<11}{model:<40}{calls:>8,}{inp:>14,}{out:>13,}{usd:>14.6f}{discounted:>14.6f}")
    print(f"total by hand: interactive ${total:.6f}; batch ${batch:.6f}")
    if args.blueprint is None:
        return 0
    got = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(args.blueprint), "--dry-run", "--json"],
                         capture_output=True, text=True)
    cost = json.loads(got.stdout)["plan"]["cost"]
    same = True
    for line in cost["lines"]:
        mine = lines.get((line["role"], line["model"]))
        ok = mine == [line["calls"], line["input_tokens"], line["output_tokens"]]
        same = same and ok
        print(f"--dry-run {line['role']:<11}{line['model']:<40}{line['calls']:>8,}{line['input_tokens']:>14,}"
              f"{line['output_tokens']:>13,}{line['usd']:>14.6f}{line['batch_usd']:>14.6f}  {'=' if ok else 'DIFFERS'}")
    same = same and len(cost["lines"]) == len(lines)
    same = same and math.isclose(cost["usd"], total, rel_tol=1e-12) and math.isclose(cost["batch_usd"], batch,
                                                                                        rel_tol=1e-12)
    print(f"--dry-run total: interactive ${cost['usd']:.6f}; batch ${cost['batch_usd']:.6f}; equal to the hand "
          f"computation: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
