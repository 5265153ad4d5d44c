#!/usr/bin/env python3
"""`evalspec check` wall time: the whole shared corpus, and a generated 50,000-line blueprint.

Runs the real CLI as a subprocess (start-up included), 5 times each, and prints one JSON line with the
median and best. Targets (issue: "Understand and validate both formats"): corpus < 2 s, 50k lines < 1.5 s.
usage: python bench/check_speed.py [--runs N]
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def timed(cmd: list[str], runs: int) -> dict[str, float]:
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append(time.perf_counter() - start)
    return {"median_s": round(statistics.median(walls), 3), "best_s": round(min(walls), 3)}


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    evalspec = shutil.which("evalspec") or str(Path(sys.executable).parent / "evalspec")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "bp50k.yml"
        subprocess.run([sys.executable, str(SHARED / "bench" / "gen_blueprint.py"), "5000", str(big)], check=True)
        lines = big.read_text().count("\n")
        result = {
            "corpus": {"files": sum(1 for p in (SHARED / "corpus").rglob("*") if p.suffix in (".yml", ".yaml")),
                       **timed([evalspec, "check", "-q", str(SHARED / "corpus")], runs), "target_s": 2.0},
            "blueprint_50k": {"lines": lines, **timed([evalspec, "check", "-q", str(big)], runs), "target_s": 1.5},
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
