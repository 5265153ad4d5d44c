#!/usr/bin/env python3
"""Re-analysis after an edit, in-process: what the language server's worker does per keystroke.

On the 50,000-line generated blueprint (/work/shared/bench/gen_blueprint.py, 5,000 prompts) a
DocumentAnalyzer analyses the file once, then each edit below is applied to the previous text and
re-analysed, and the medians are printed as one JSON line (ms):

- type_in_line: one character typed inside a prompt in the middle (no line moves);
- newline_top / newline_middle / newline_end: a comment line inserted at the top, the middle or near
  the end (every prompt below the edit moves down one line).

usage: python bench/reanalysis.py [N_PROMPTS] [--repeat R]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalspec.incremental import DocumentAnalyzer

GENERATOR = Path("/work/shared/bench/gen_blueprint.py")


def generate(n: int) -> str:
    out = Path(tempfile.gettempdir()) / f"evalspec-ide-bench-{n}.yml"
    if not out.exists():
        subprocess.run([sys.executable, str(GENERATOR), str(n), str(out)], check=True)
    return out.read_text(encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("prompts", nargs="?", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    text = generate(args.prompts)
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("- id: p")]
    middle = starts[len(starts) // 2]
    edits = {
        "type_in_line": lambda ls, k: [*ls[:middle + 1], ls[middle + 1] + "x", *ls[middle + 2:]],
        "newline_top": lambda ls, k: [*ls[:starts[0]], f"# note {k}", *ls[starts[0]:]],
        "newline_middle": lambda ls, k: [*ls[:middle], f"# note {k}", *ls[middle:]],
        "newline_end": lambda ls, k: [*ls[:starts[-1]], f"# note {k}", *ls[starts[-1]:]],
    }
    out: dict[str, float] = {"lines": len(lines)}
    for name, edit in edits.items():
        analyzer = DocumentAnalyzer(None)
        analyzer.analyze(text)
        current = lines
        times = []
        for k in range(args.repeat):
            current = edit(current, k)
            new_text = "\n".join(current)
            gc.collect()
            t0 = time.perf_counter()
            analyzer.analyze(new_text)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = round(statistics.median(times), 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
