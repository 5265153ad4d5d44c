#!/usr/bin/env python3
"""The worst inputs of up to 4 MB for `analyze()` found so far, each timed in a process of its own.

    python bench/analyze_worst.py [--only NAME,...] [--scale 1.0] [--timeout 300] [--json OUT]

Each case fills the editor's 4 MB cap (times `--scale`) with one shape repeated: a million model ids,
a million points, a million empty prompts in a flow list, 100,000 tests, 400,000 misspelt keys, one
4 MB line, 200,000 documents, 100,000 anchors… For each it prints the wall and CPU seconds of
`analyze()` (the disk as its FileSource, as `evalspec check` on an editor buffer), the findings shown,
those past the 1,000-of-a-kind cap (`Analysis.omitted`) and the 1-minute load average when it ran.
A case past `--timeout` is killed and reported as such. This is a benchmark: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

CAP = 4 * 1024 * 1024
W = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n"
A = "description: d\nexecution:\n  target: default\ntests:\n"


def fill(head: str, unit: Callable[[int], str], size: int, tail: str = "") -> str:
    """`head` + unit(0) + unit(1) + … + `tail`, as many units as stay under `size` bytes."""
    parts, n, i = [head], len(head.encode()) + len(tail.encode()), 0
    while True:
        piece = unit(i)
        if n + len(piece.encode()) > size:
            return "".join(parts) + tail
        parts.append(piece)
        n += len(piece.encode())
        i += 1


def cases(size: int) -> dict[str, tuple[str, str]]:
    """name -> (file name, text), each at most `size` bytes."""
    return {
        "models-flow-1m": ("w.yml", fill("title: t\nmodels: [", lambda i: "a:b,", size - 64, "]\n---\n- prompt: hi\n")),
        "models-block": ("w.yml", fill("title: t\nmodels:\n", lambda i: "  - a:b\n", size - 64, "---\n- prompt: hi\n")),
        "points-flow-1m": ("w.yml", fill(W + "- prompt: hi\n  should: [", lambda i: "x,", size, "]\n")),
        "points-block": ("w.yml", fill(W + "- prompt: hi\n  should:\n", lambda i: "    - x\n", size)),
        "bad-functions": ("w.yml", fill(W + "- prompt: hi\n  should:\n", lambda i: "    - $nope: 1\n", size)),
        "empty-prompts-flow": ("w.yml", fill(W + "[", lambda i: "{},", size, "]\n")),
        "empty-prompts-block": ("w.yml", fill(W, lambda i: "- {}\n", size)),
        "prompts-same-id": ("w.yml", fill(W, lambda i: "- id: a\n  prompt: x\n", size)),
        "prompts-typo-key": ("w.yml", fill(W, lambda i: f"- prompt: x\n  shuld{i}: y\n", size)),
        "prompts-aliased": ("w.yml", fill(W + "- &a {id: p, prompt: hi, should: [x]}\n", lambda i: "- *a\n", size)),
        "documents": ("w.yml", fill(W, lambda i: "---\n", size)),
        "anchors": ("w.yml", fill("", lambda i: f"a{i}: &a{i} x\n", size)),
        "tests-flow": ("s.eval.yaml", fill(A.replace("tests:\n", "tests: ["),
                                          lambda i: "{id: a, input: b, criteria: c},", size, "]\n")),
        "tests-empty": ("s.eval.yaml", fill("tests:\n", lambda i: "- {}\n", size)),
        "tests-typo-keys": ("s.eval.yaml", fill("tests:\n- id: t\n  input: hi\n", lambda i: f"  criteriaa{i}: x\n", size)),
        "asserts-unknown": ("s.eval.yaml", fill("tests:\n- id: t\n  input: hi\n  assert:\n",
                                               lambda i: "  - type: nope\n", size)),
        "long-line": ("w.yml", W + "- prompt: \"" + "word " * ((size - 256) // 5) + "\"\n"),
        # shapes added with issue 15's second look at the cost of an analysis
        "documents-comment": ("w.yml", fill(W, lambda i: f"---\n#{i}\n", size)),
        "documents-scalar": ("w.yml", fill(W, lambda i: f"--- {i}\n", size)),
        "prompts-distinct-flow": ("w.yml", fill(W + "[", lambda i: f"{{id: {i}}},", size, "]\n")),
        "prompts-typo-flow": ("w.yml", fill(W + "[", lambda i: f"{{a{i}: 1}},", size, "]\n")),
        "keys-one-mapping": ("w.yml", fill("title: t\nmodels: [openai:gpt-4o-mini]\n", lambda i: f"k{i}: v\n", size,
                                           "---\n- prompt: hi\n")),
        "keys-one-prompt": ("w.yml", fill(W + "- prompt: hi\n", lambda i: f"  k{i}: v\n", size)),
        "nesting-deep": ("w.yml", W + "- prompt: hi\n  should: [" + ("[" * 190 + "x" + "]" * 190 + ",")
                         * ((size - 64) // 385) + "]\n"),
        "anchor-long": ("w.yml", fill(W + "- &a {id: p, prompt: hi, should: [x]}\n", lambda i: "- *a\n", size)),
        "aliases-many": ("w.yml", "x: &x [" + "a," * 1000 + "]\n" + fill("y: [", lambda i: "*x,", size - 4096, "]\n")),
        "block-scalar": ("w.yml", W + "- prompt: |\n" + fill("", lambda i: "    line of text\n", size - 256)),
        "paths-flow": ("w.yml", fill(W + "- prompt: hi\n  should: [", lambda i: "[x, y],", size, "]\n")),
        "messages-flow": ("w.yml", fill(W + "- messages: [", lambda i: "{user: a},{ai: b},", size, "{user: c}]\n")),
        "tests-tiny": ("s.eval.yaml", fill(A, lambda i: f"- {{id: t{i}, input: x, criteria: y}}\n", size)),
        "tests-jsonl": ("cases.jsonl", fill("", lambda i: f'{{"id": "t{i}", "input": "x", "criteria": "y"}}\n', size)),
        "tests-jsonl-empty": ("cases.jsonl", fill("", lambda i: "{}\n", size)),
        "tests-same-id": ("s.eval.yaml", fill(A, lambda i: "- {id: a, input: x, criteria: y}\n", size)),
        "asserts-flow": ("s.eval.yaml", fill("tests:\n- id: t\n  input: hi\n  assert: [", lambda i: "{type: contains, value: x},",
                                             size, "]\n")),
    }


def run_one(path: Path, timeout: float) -> dict[str, object]:
    code = (
        "import json, sys, time, resource\n"
        "from evalspec.analysis import analyze\n"
        "text = open(sys.argv[1], encoding='utf-8').read()\n"
        "t = time.perf_counter(); c = time.process_time()\n"
        "a = analyze(text, sys.argv[1])\n"
        "print(json.dumps({'wall_s': time.perf_counter() - t, 'cpu_s': time.process_time() - c,\n"
        "                  'shown': len(a.findings), 'omitted': len(a.omitted),\n"
        "                  'peak_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n")
    try:
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                             timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 4 MB cap to fill")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a case may take")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    chosen = [n for n in args.only.split(",") if n]
    rows = []
    with tempfile.TemporaryDirectory(prefix="analyze-worst-") as tmp:
        for name, (filename, text) in cases(int(CAP * args.scale) - 1024).items():
            if chosen and name not in chosen:
                continue
            path = Path(tmp) / filename
            path.write_text(text, encoding="utf-8")
            load = os.getloadavg()[0]
            started = time.perf_counter()
            result = run_one(path, args.timeout)
            row = {"case": name, "bytes": len(text.encode()), "load": round(load, 1), **result}
            rows.append(row)
            if "timeout" in result:
                what = f"no answer within {args.timeout:.0f} s"
            elif "error" in result:
                what = f"failed: {result['error']}"
            else:
                what = (f"{result['wall_s']:7.1f} s wall {result['cpu_s']:7.1f} s CPU  {result['shown']:>6,} shown "
                        f"{result['omitted']:>9,} omitted  {result['peak_mb']:6.0f} MB")
            print(f"{name:22} {len(text.encode()):>10,} B  load {load:4.1f}  {what}"
                  f"  ({time.perf_counter() - started:.0f} s with start-up)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
