#!/usr/bin/env python3
"""IDE-layer latency on a large generated blueprint, in-process (no LSP transport).

Times `complete()` at ~40 positions and `hover()` at as many, on the 50,000-line blueprint from
/work/shared/bench/gen_blueprint.py (5,000 prompts), and prints one JSON line with p50/p95 in ms:

- completion / hover: the same `Analysis` reused (several requests on one version of the file);
- completion_cold: the per-analysis layout dropped before each request, as after every keystroke;
- completion_broken: the same positions in a version with a half-typed key in the middle (the
  document no longer parses there), which is what an editor sends while typing;
- run_items: what a codeLens request computes (every prompt's lens position and text fingerprint).

usage: python bench/ide_latency.py [N_PROMPTS] [--repeat R]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evalspec.analysis import analyze
from evalspec.ide.completion import complete
from evalspec.ide.hover import hover
from evalspec.ide.runs import run_items

GENERATOR = Path("/work/shared/bench/gen_blueprint.py")


def generate(n: int) -> Path:
    out = Path(tempfile.gettempdir()) / f"evalspec-ide-bench-{n}.yml"
    if not out.exists():
        subprocess.run([sys.executable, str(GENERATOR), str(n), str(out)], check=True)
    return out


def positions(lines: list[str], count: int = 40) -> list[tuple[int, int]]:
    """Spread over the file, cycling through the places people type: a rubric function, a prompt
    key, a point option, a header model, an enum-like value."""
    firsts = [i for i, line in enumerate(lines) if line.startswith("- id: p")]
    out: list[tuple[int, int]] = [(3, 6), (0, 3)]  # a model id, a header key
    step = max(1, len(firsts) // count)
    for k, start in enumerate(firsts[::step][: count - 2]):
        kind = k % 4
        if kind == 0:  # `    - $contains: …` → inside the function name
            line = start + 5
            out.append((line, 8))
        elif kind == 1:  # `  ideal: …` → a prompt key
            out.append((start + 2, 4))
        elif kind == 2:  # `      weight: 2` → a point option
            out.append((start + 7, 9))
        else:  # `    - $contains: "As an AI"` in should_not → the value
            out.append((start + 9, len(lines[start + 9]) - 2))
    return out


def pct(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"p50": round(statistics.median(s) * 1000, 3), "p95": round(s[int(0.95 * (len(s) - 1))] * 1000, 3),
            "max": round(s[-1] * 1000, 3)}


def timed(fn: Callable[..., object], *args: object, **kw: object) -> float:
    t0 = time.perf_counter()
    fn(*args, **kw)
    return time.perf_counter() - t0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else 5000
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 5
    path = generate(n)
    text = path.read_text()
    t0 = time.perf_counter()
    analysis = analyze(text, path)
    analyze_s = time.perf_counter() - t0
    lines = analysis.parsed.lines
    spots = positions(lines)

    warm_c, warm_h, cold_c, broken_c = [], [], [], []
    for _ in range(repeat):
        for line, col in spots:
            warm_c.append(timed(complete, analysis, line, col, snippets=True))
            warm_h.append(timed(hover, analysis, line, col))
            analysis.memo.clear()  # as if this were a new version of the file
            cold_c.append(timed(complete, analysis, line, col, snippets=True))

    # A half-typed key in the middle of the prompts: that prompt's list item no longer parses.
    middle = next(i for i, line in enumerate(lines) if line == f"- id: p{n // 2}")
    broken_text = "\n".join([*lines[: middle + 2], "  shou", *lines[middle + 2:]])
    broken = analyze(broken_text, path)
    for _ in range(repeat):
        for line, col in [(middle + 2, 6), *spots]:
            line = line + 1 if line > middle + 2 else line
            broken_c.append(timed(complete, broken, line, col, snippets=True))

    lens = [timed(run_items, analysis) for _ in range(repeat)]

    result = {
        "bench": "ide_latency", "lines": len(lines), "prompts": n, "positions": len(spots), "repeat": repeat,
        "analyze_ms": round(analyze_s * 1000, 1),
        "completion_ms": pct(warm_c), "hover_ms": pct(warm_h), "completion_cold_ms": pct(cold_c),
        "completion_broken_ms": pct(broken_c), "run_items_ms": pct(lens),
        "items_at_function": len(complete(analysis, spots[2][0], spots[2][1], snippets=True).items),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
