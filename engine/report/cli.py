"""`evalspec report RESULT... [-o FILE] [--format html|markdown] [--open]`.

Exit codes: 0 written; 2 a path is not results evalspec can read (the message says what it expected).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_report_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "report", help="write a results report (one HTML file, or Markdown) of a run, or compare two runs",
        description="Write a self-contained HTML report of a run's results (no network, no server: one file "
                    "to open, mail or attach to CI), or Markdown for $GITHUB_STEP_SUMMARY and pull requests. "
                    "Two results compare OLD with NEW: regressions and improvements per cell come first.")
    p.add_argument("results", nargs="+", metavar="RESULT",
                   help="a Weval comparison file (…_comparison.json) or artefact folder, an AgentV results "
                        "file (…jsonl), a run database (….run.db, for an unfinished run), or a results "
                        "folder (its newest results); two of them: OLD NEW")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="where to write (default: report.html beside the results; Markdown goes to stdout)")
    p.add_argument("--format", choices=("html", "markdown"), default="html",
                   help="html (default): the interactive page; markdown: summary and failing items")
    p.add_argument("--open", action="store_true", help="open the HTML report in the default browser")
    p.add_argument("--regression-threshold", type=float, default=None, metavar="DELTA",
                   help="comparing two runs: a cell's score must move by at least DELTA to count as regressed or "
                        "improved (default 0.05; a changed verdict always counts)")
    p.set_defaults(func=cmd_report)
    return p


def cmd_report(args: argparse.Namespace) -> int:
    from .build import build_report, load_runs, write_report
    from .diff import REGRESSION_THRESHOLD
    from .sources import ResultsError

    threshold = REGRESSION_THRESHOLD if args.regression_threshold is None else args.regression_threshold
    if not 0 <= threshold <= 1:
        print("evalspec report: --regression-threshold is a score difference between 0 and 1", file=sys.stderr)
        return 2
    try:
        if args.format == "markdown" and args.output is None:
            sys.stdout.write(build_report(args.results, fmt="markdown", threshold=threshold))
            return 0
        runs = load_runs(args.results)
        out = write_report(args.results, args.output, fmt=args.format, runs=runs, threshold=threshold)
    except ResultsError as exc:
        print(f"evalspec report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"evalspec report: cannot write the report: {exc}", file=sys.stderr)
        return 2
    if len(runs) == 2:  # what changed, named: the page shows the rest
        from .diff import IMPROVED, REGRESSED, describe, diff_runs, run_names

        d = diff_runs(runs[0], runs[1], threshold)
        old_name, new_name = run_names(runs[0], runs[1])
        print(f"old: {old_name}\nnew: {new_name}")
        print(f"{d.count(REGRESSED):,} regressed, {d.count(IMPROVED):,} improved, {d.count('changed'):,} changed "
              f"otherwise, {d.count('added'):,} new, {d.count('removed'):,} gone (score changes under {threshold:g} not counted)")
        for kind, mark in ((REGRESSED, "▼"), (IMPROVED, "▲")):
            cells = d.cells(kind)
            for item, model in cells[:10]:
                print(f"  {mark} {item} × {model}: {describe(runs[0].cells.get((item, model)), runs[1].cells.get((item, model)))}")
            if len(cells) > 10:
                print(f"  … and {len(cells) - 10:,} more {kind}")
    print(f"report: {out}")
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0
