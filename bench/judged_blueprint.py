#!/usr/bin/env python3
"""A fresh judged blueprint for the batch and rate-limit benchmarks, made by the shared generator.

Runs `../shared/bench/gen_blueprint.py N OUT` (each prompt: an `ideal`, a prose `should` point, a function
point, a weighted prose point and a `should_not` function point), then
- gives the blueprint two judges with batch APIs (`evaluationConfig.llm-coverage.judges`: an OpenAI and
  an Anthropic one; the first is also the key-point model), and
- drops the points of every `--ideal-only`-th prompt, so its key points are extracted from its `ideal`
  and judged.

usage: judged_blueprint.py N OUT [--ideal-only K]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT.parent / "shared" / "bench" / "gen_blueprint.py"
JUDGES = ["evaluationConfig:", "  llm-coverage:", "    judges:",
          "      - {id: oa, model: 'openai:gpt-4.1-mini', approach: standard}",
          "      - {id: an, model: 'anthropic:claude-3-5-haiku-latest', approach: prompt-aware}"]


def judged_blueprint(n: int, out: Path, *, ideal_only: int = 4) -> dict[str, int]:
    """Write the blueprint; returns how many prompts keep their points and how many have an ideal alone."""
    subprocess.run([sys.executable, str(GENERATOR), str(n), str(out)], check=True)
    lines = out.read_text(encoding="utf-8").splitlines()
    header_end = lines.index("---")
    kept: list[str] = [*lines[:header_end], *JUDGES, "---"]
    index = -1
    dropping = False
    counts = {"with_points": 0, "ideal_only": 0}
    for line in lines[header_end + 1:]:
        if line.startswith("- id: "):
            index += 1
            dropping = False
            counts["ideal_only" if index % ideal_only == ideal_only - 1 else "with_points"] += 1
        elif line in ("  should:", "  should_not:") and index % ideal_only == ideal_only - 1:
            dropping = True  # this prompt keeps its ideal alone: key points are extracted from it
            continue
        elif dropping and line.startswith("    "):
            continue
        else:
            dropping = False
        kept.append(line)
    out.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("out", type=Path)
    ap.add_argument("--ideal-only", type=int, default=4, help="every K-th prompt keeps its ideal alone")
    args = ap.parse_args()
    print(judged_blueprint(args.n, args.out, ideal_only=args.ideal_only))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
