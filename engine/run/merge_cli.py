"""`evalspec merge SHARD... [-o DIR]`: combine the results of `evalspec run --shard I/N` runs.

Exit codes: 0 merged; 2 the shards cannot be merged (overlapping, missing, of different files, models or
formats) or cannot be read — the message names the shards and why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .options import DEFAULT_OUTPUT


def add_merge_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "merge", help="combine the results of sharded runs (run --shard I/N) into one run's results",
        description="Combine the results of `evalspec run --shard I/N` runs (Weval comparison files or AgentV "
                    "JSONL) into exactly what one run of the whole file writes (the run's time aside), in the "
                    "same layout under the results folder, with report.html beside it.")
    p.add_argument("shards", nargs="+", metavar="SHARD",
                   help="a shard's results file (…_comparison.json, ….jsonl) or its .shard.json manifest, or a "
                        "folder holding shard results (searched recursively)")
    p.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, metavar="DIR",
                   help=f"results folder to write into (default: ./{DEFAULT_OUTPUT})")
    p.add_argument("--report", action=argparse.BooleanOptionalAction, default=True,
                   help="write report.html beside the merged results (default; --no-report skips it)")
    p.set_defaults(func=cmd_merge)
    return p


def cmd_merge(args: argparse.Namespace) -> int:
    from .merge import MergeError, merge

    try:
        merged = merge(args.shards, args.output)
    except MergeError as exc:
        print(f"evalspec merge: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"evalspec merge: cannot write the merged results: {exc}", file=sys.stderr)
        return 2
    what = "prompts" if merged.kind == "weval" else "tests"
    print(f"merged {merged.shards} shard(s), {merged.items:,} {what}: {merged.files[0]}")
    if args.report:
        from .cli import write_report_beside

        write_report_beside(str(merged.files[0]), as_json=False, command="merge")
    return 0
