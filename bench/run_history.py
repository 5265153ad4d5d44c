#!/usr/bin/env python3
"""Results read back when a file is opened, and the failed points shown at their lines.

Runs a generated blueprint (/work/shared/bench/gen_blueprint.py; every prompt has a `$contains` point
the offline `echo` model fails) with the real runner into a temporary output folder, then times what
the language server does on open and after each analysis, and prints one JSON line: CPU ms of this
process (median of R; wall time on a shared machine measures the other processes more than this):

- load_history: find the file's journals and read them back (a worker thread in the server);
- restore: put them on the document's RunBoard;
- run_notes: the failed points as notes (one per prompt here), as each diagnostics publication computes.

usage: python bench/run_history.py [N_PROMPTS] [--repeat R]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalspec.analysis import analyze
from evalspec.ide.run_history import load_history
from evalspec.ide.run_notes import run_notes
from evalspec.ide.runs import RunBoard
from evalspec.run.options import RunOptions
from evalspec.run.runner import plan_for, run

GENERATOR = Path(__file__).resolve().parents[2] / "shared" / "bench" / "gen_blueprint.py"


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.process_time()
        result = fn()
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times), result


async def run_once(path: Path, output: Path) -> None:
    analysis = analyze(path.read_text(encoding="utf-8"), str(path))
    options = RunOptions(models=["echo"], output=output, eval_methods=("llm-coverage",))
    async for _ in run(plan_for(analysis, options), options):
        pass


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 2000
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 5
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.weval.yml"
        subprocess.run([sys.executable, str(GENERATOR), str(n), str(path)], check=True, capture_output=True)
        output = Path(tmp) / "results"
        asyncio.run(run_once(path, output))
        analysis = analyze(path.read_text(encoding="utf-8"), str(path))
        load_ms, history = timed(lambda: load_history(output, path), repeat)

        def restore() -> RunBoard:
            board = RunBoard()
            board.restore(history)  # type: ignore[arg-type]
            return board

        restore_ms, board = timed(restore, repeat)
        notes_ms, notes = timed(lambda: run_notes(analysis, board), repeat)  # type: ignore[arg-type]
    print(json.dumps({"prompts": n, "items_restored": len(history.results),  # type: ignore[attr-defined]
                      "notes": len(notes), "load_history_cpu_ms": round(load_ms, 1),  # type: ignore[arg-type]
                      "restore_cpu_ms": round(restore_ms, 2), "run_notes_cpu_ms": round(notes_ms, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
