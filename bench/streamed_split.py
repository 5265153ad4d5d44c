#!/usr/bin/env python3
"""The cost of reading a big file item by item (`check`/`run`'s streamed parse, the editor's item cache),
on clean files and on files whose items hold lines that look like items (a quoted or flow scalar continued
on a `- ` line at the items' column, which the item splitter must not cut at).

    python bench/streamed_split.py [--only NAME,...] [--scale 1.0]

Each case is analysed in a process of its own, as `evalspec check` reads a file (`analyze_file`,
streamed) and, for the editor-sized ones, as the language server does (`DocumentAnalyzer`, twice: the
second analysis after a one-character edit, what a keystroke costs). Prints CPU seconds, peak RSS and
the syntax findings (a false one would show here). A benchmark: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

W = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n"
A = "description: d\nexecution:\n  target: default\ntests:\n"


def prompt(i: int) -> str:
    return f"- id: p{i}\n  prompt: \"Question {i}: what is the answer number {i}?\"\n  should:\n" \
           f"    - $contains: \"answer number {i}\"\n    - $word_count_between: [3, 60]\n"


def prompt_continued(i: int) -> str:  # the quoted prompt continues on a line that looks like an item
    return f"- id: p{i}\n  prompt: \"Question {i}:\n- what is the answer number {i}?\"\n  should: [x]\n"


def test(i: int) -> str:
    return f"  - id: t{i}\n    input: \"Question {i}: what is the answer number {i}?\"\n    criteria: c\n" \
           f"    assert:\n      - {{type: contains, value: \"{i}\"}}\n"


def test_continued(i: int) -> str:
    return f"  - id: t{i}\n    input: \"Question {i}:\n  - what is the answer number {i}?\"\n    criteria: c\n"


def cases(scale: float) -> dict[str, tuple[str, str, bool]]:
    """name -> (file name, text, also as the editor)."""
    n = max(1, int(100_000 * scale))
    m = max(1, int(20_000 * scale))
    e = max(1, int(20_000 * scale))  # ~1.6 MB: an editor's buffer
    return {
        "blueprint-100k": ("b.yml", W + "".join(prompt(i) for i in range(n)), False),
        "blueprint-100k-continued": ("b.yml", W + "".join(prompt_continued(i) for i in range(n)), False),
        "blueprint-100k-last-broken": ("b.yml", W + "".join(prompt(i) for i in range(n)) + "- id: {\n", False),
        "suite-20k": ("s.eval.yaml", A + "".join(test(i) for i in range(m)), False),
        "suite-20k-continued": ("s.eval.yaml", A + "".join(test_continued(i) for i in range(m)), False),
        "editor-20k": ("b.yml", W + "".join(prompt(i) for i in range(e)), True),
        "editor-20k-continued": ("b.yml", W + "".join(prompt_continued(i) for i in range(e)), True),
        "editor-20k-open-quote": ("b.yml", W + "- prompt: \"open\n" + "".join(prompt(i) for i in range(e)), True),
    }


CODE = """
import json, sys, time
from pathlib import Path
# a child's peak RSS starts at its parent's (bench/peak_rss.py): reset it (Linux), then read VmHWM
Path("/proc/self/clear_refs").write_text("5")
from evalspec.analysis import analyze_file
from evalspec.incremental import DocumentAnalyzer
path, editor = Path(sys.argv[1]), sys.argv[2] == "1"
out = {}
c = time.process_time()
a = analyze_file(path, env={})
out["check_cpu_s"] = time.process_time() - c
out["check_syntax"] = sum(f.code.startswith("yaml") for f in a.findings)
out["check_findings"] = len(a.findings)
del a
if editor:
    text = path.read_text(encoding="utf-8")
    doc = DocumentAnalyzer(path)
    c = time.process_time()
    a = doc.analyze(text)
    out["editor_open_cpu_s"] = time.process_time() - c
    out["editor_syntax"] = sum(f.code.startswith("yaml") for f in a.findings)
    at = text.index("should")
    c = time.process_time()
    doc.analyze(text[:at] + " " + text[at:])
    out["editor_keystroke_cpu_s"] = time.process_time() - c
out["peak_mb"] = next(int(x.split()[1]) for x in Path("/proc/self/status").read_text().splitlines()
                     if x.startswith("VmHWM")) / 1024
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    chosen = [x for x in args.only.split(",") if x]
    with tempfile.TemporaryDirectory(prefix="streamed-split-") as tmp:
        for name, (filename, text, editor) in cases(args.scale).items():
            if chosen and name not in chosen:
                continue
            path = Path(tmp) / filename
            path.write_text(text, encoding="utf-8")
            load = os.getloadavg()[0]
            run = subprocess.run([sys.executable, "-c", CODE, str(path), "1" if editor else "0"],
                                 capture_output=True, text=True, check=False)
            if run.returncode:
                print(f"{name:28} failed: {run.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            row = json.loads(run.stdout.strip().splitlines()[-1])
            shown = "  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items())
            print(f"{name:28} {len(text) / 1e6:5.1f} MB  load {load:4.1f}  {shown}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
