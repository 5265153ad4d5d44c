#!/usr/bin/env python3
"""Start-up cost of the command line: CPU time (user + system) of `evalspec --version`, of `evalspec
check --help`, of `evalspec run --help` and of `evalspec run --dry-run` (a blueprint calling an OpenAI
model), side by side with the bare interpreter (`python -c pass`) in the same sitting, and which heavy
modules `run` loads (httpx: without a proxy a run's calls go straight to aiohttp).

Each command runs `--repeat` times as a child process; the median CPU per run is printed (from
getrusage of the children, so page-cache and scheduler noise of one run does not dominate).

usage: cli_start.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# The `evalspec` entry point beside this interpreter (as a person runs it), else `python -m evalspec.cli`.
_SCRIPT = Path(sys.executable).with_name("evalspec")
_EVALSPEC = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "evalspec.cli"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "evalspec --version": [*_EVALSPEC, "--version"],
    "evalspec check --help": [*_EVALSPEC, "check", "--help"],
    "evalspec run --help": [*_EVALSPEC, "run", "--help"],
    "evalspec run --dry-run": [*_EVALSPEC, "run", "--dry-run", "BLUEPRINT"],
}
_BLUEPRINT = "title: b\nmodels: [openai:gpt-4o-mini]\n---\n- id: a\n  prompt: hi\n  should:\n    - $contains: hi\n"


def cpu_ms(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(times)


def modules_of_a_run() -> list[str]:
    """The heavy modules an offline run (`-m echo`) imports, as sys.modules holds them at exit."""
    with tempfile.TemporaryDirectory() as tmp:
        bp = Path(tmp) / "b.weval.yml"
        bp.write_text("title: b\nmodels: [echo]\n---\n- id: a\n  prompt: hi\n  should:\n    - $contains: hi\n")
        code = ("import sys, atexit\nfrom evalspec.cli import main\n"
                "atexit.register(lambda: print('MODULES', ' '.join(sorted(m for m in sys.modules if '.' not in m)),"
                " file=sys.__stderr__))\n"
                f"sys.exit(main(['run', {str(bp)!r}, '-o', {tmp + '/out'!r}, '--no-report']))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp, check=False)
        line = next((x for x in done.stderr.splitlines() if x.startswith("MODULES ")), "MODULES ")
        return [m for m in line.split()[1:] if m in ("httpx", "aiohttp", "rich", "yaml", "orjson", "playwright",
                                                      "pydantic", "httpcore", "anyio", "h11")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    os.environ.pop("PYTHONPROFILEIMPORTTIME", None)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the dry run's plan wants a key; nothing is called
    base = None
    tmp = tempfile.TemporaryDirectory()
    blueprint = Path(tmp.name) / "b.weval.yml"
    blueprint.write_text(_BLUEPRINT)
    for name, argv in COMMANDS.items():
        ms = cpu_ms([str(blueprint) if a == "BLUEPRINT" else a for a in argv], args.repeat)
        base = ms if base is None else base
        print(f"{name:<24} {ms:7.1f} ms CPU (median of {args.repeat})  +{ms - base:5.1f} ms over bare python")
    print("an offline run (-m echo) loads:", ", ".join(modules_of_a_run()) or "none of the heavy ones")


if __name__ == "__main__":
    main()
