#!/usr/bin/env python3
"""Language-server latency on generated blueprints: evalspec-lsp, and yaml-language-server 2 beside it.

    python bench/lsp_latency.py [--sizes 100,1000,5000] [--repeat 1] [--no-yaml-ls] [--json OUT]

For each size (prompts; ≈10 lines each) it writes a blueprint with /work/shared/bench/gen_blueprint.py,
drives each server with /work/shared/bench/lsp_latency.py (didOpen → diagnostics, an edit →
diagnostics, completion at ~40 positions) and prints one table. Peak RSS is the server process's
(measured by running it under a small wrapper that reads its rusage when it exits).

yaml-language-server 2 runs from `.ci/tools` (what CI installs for the editor tests) or else through
`npx --yes yaml-language-server@2 --stdio`, on the same blueprint, given schemas/weval-blueprint.schema.json
in its settings (`YAML_SCHEMAS`, as ../shared/bench/README.md says: a `$schema` modeline would check only the
file's first document, the header). The evalspec-lsp measured is this Python's: run the script with another
checkout's venv Python to measure that one in the same sitting.
This is a benchmark, not a test: numbers vary with the machine; compare the two servers in one sitting.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED_BENCH = Path(os.environ.get("EVALSPEC_SHARED_BENCH", REPO.parent / "shared" / "bench"))
SCHEMA = REPO / "schemas" / "weval-blueprint.schema.json"
OURS = [sys.executable, "-m", "evalspec_lsp"]
_CI_YAML_LS = REPO / ".ci" / "tools" / "node_modules" / ".bin" / "yaml-language-server"
YAML_LS = ([str(_CI_YAML_LS), "--stdio"] if _CI_YAML_LS.exists()
           else ["npx", "--yes", "yaml-language-server@2", "--stdio"])

MINIMAL_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Weval blueprint (minimal, for the benchmark)",
    "anyOf": [
        {"type": "array", "items": {"$ref": "#/definitions/prompt"}},
        {"type": "object"},
    ],
    "definitions": {
        "prompt": {
            "type": "object",
            "properties": {
                "id": {"type": "string"}, "prompt": {"type": "string"}, "ideal": {"type": "string"},
                "should": {"type": "array"}, "should_not": {"type": "array"}, "messages": {"type": "array"},
            },
            "additionalProperties": False,
        },
    },
}


def wrap(rss_file: str, cmd: list[str]) -> int:
    """Run `cmd` on our stdin/stdout and record its peak RSS (KiB) when it ends."""
    code = subprocess.call(cmd)
    Path(rss_file).write_text(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
    return code


def measure(blueprint: Path, cmd: list[str], work: Path, schema: Path | None = None) -> dict:
    rss_file = work / "rss.txt"
    rss_file.unlink(missing_ok=True)
    wrapped = [sys.executable, __file__, "--wrap", str(rss_file), "--", *cmd]
    env = {**os.environ, "YAML_SCHEMAS": json.dumps({str(schema): "*.yml"})} if schema else None
    proc = subprocess.run([sys.executable, str(SHARED_BENCH / "lsp_latency.py"), str(blueprint), "--", *wrapped],
                          capture_output=True, text=True, timeout=900, env=env)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(f"lsp_latency.py failed for {cmd[0]}: {proc.stderr.strip()[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    for _ in range(50):  # the wrapper writes it as the server exits, just after the last response
        if rss_file.exists() and rss_file.read_text():
            result["peak_rss_mb"] = round(int(rss_file.read_text()) / 1024, 1)
            break
        time.sleep(0.1)
    return result


def median_of(runs: list[dict]) -> dict:
    out = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, float):
            out[key] = round(statistics.median(r[key] for r in runs), 2)
    return out


def yaml_ls_available() -> bool:
    if YAML_LS[0] != "npx":
        return True
    if shutil.which("npx") is None:
        return False
    try:  # fetches the package once; later runs use npx's cache
        proc = subprocess.run([*YAML_LS[:-1], "--help"], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 or "stdio" in (proc.stdout + proc.stderr)


def target_for(metric: str, lines: int) -> float | None:
    """Our targets, stated for the 1,000- and 50,000-line blueprints (none for the sizes between)."""
    small, large = lines <= 2_000, lines >= 40_000
    if metric == "completion_p95_ms":
        return 20.0
    if metric == "edit_to_diagnostics_ms":
        return 200.0 if small else 300.0 if large else None
    if metric == "open_to_diagnostics_ms":
        return 100.0 if small else None
    return None


def verdict(metric: str, result: dict) -> str:
    target = target_for(metric, result["lines"])
    value = result[metric]
    if target is None:
        return f"{value:>9.1f}  "
    return f"{value:>9.1f} {'✓' if value <= target else '✗'}"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--wrap":
        sep = sys.argv.index("--")
        return wrap(sys.argv[2], sys.argv[sep + 1:])

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,5000", help="prompts per blueprint, comma-separated")
    parser.add_argument("--errors", type=int, default=5, help="prompts with a deliberate mistake")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size and server (median reported)")
    parser.add_argument("--no-yaml-ls", action="store_true", help="skip yaml-language-server")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="evalspec-lsp-bench-"))
    schema = SCHEMA
    if not schema.exists():
        schema = work / "weval-blueprint.schema.json"
        schema.write_text(json.dumps(MINIMAL_SCHEMA))
    yaml_ls = not args.no_yaml_ls and yaml_ls_available()
    if not args.no_yaml_ls and not yaml_ls:
        print("yaml-language-server: npx cannot run it here; measuring evalspec-lsp only", file=sys.stderr)

    rows: list[tuple[str, dict]] = []
    for prompts in [int(s) for s in args.sizes.split(",")]:
        blueprint = work / f"bench-{prompts}.weval.yml"
        subprocess.run([sys.executable, str(SHARED_BENCH / "gen_blueprint.py"), str(prompts), str(blueprint),
                        "--errors", str(args.errors)], check=True, capture_output=True)
        ours = median_of([measure(blueprint, OURS, work) for _ in range(args.repeat)])
        rows.append(("evalspec-lsp", ours))
        print(f"measured evalspec-lsp on {ours['lines']} lines", file=sys.stderr)
        if yaml_ls:
            try:
                theirs = median_of([measure(blueprint, YAML_LS, work, schema) for _ in range(args.repeat)])
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                print(f"yaml-language-server failed on {prompts} prompts: {exc}", file=sys.stderr)
            else:
                rows.append(("yaml-language-server 2", theirs))
                print(f"measured yaml-language-server on {theirs['lines']} lines", file=sys.stderr)

    header = (f"{'server':<24}{'lines':>7}  {'open→diag ms':>12}  {'edit→diag ms':>12}  "
              f"{'compl. p50':>10}  {'compl. p95 ms':>13}  {'diags':>5}  {'peak RSS MB':>11}")
    print(header)
    print("-" * len(header))
    for name, r in rows:
        mark = name == "evalspec-lsp"
        open_ms = verdict("open_to_diagnostics_ms", r) if mark else f"{r['open_to_diagnostics_ms']:>9.1f}  "
        edit_ms = verdict("edit_to_diagnostics_ms", r) if mark else f"{r['edit_to_diagnostics_ms']:>9.1f}  "
        p95 = verdict("completion_p95_ms", r) if mark else f"{r['completion_p95_ms']:>9.1f}  "
        rss = r.get("peak_rss_mb", float("nan"))
        print(f"{name:<24}{r['lines']:>7}  {open_ms:>12}  {edit_ms:>12}  {r['completion_median_ms']:>10.2f}  "
              f"{p95:>13}  {r['diagnostics']:>5}  {rss:>11.1f}")
    print("targets (evalspec-lsp): completion p95 ≤ 20 ms; edit→diag ≤ 200 ms (≤ 300 ms at 50,000 lines); "
          "open→diag ≤ 100 ms at 1,000 lines")
    if args.json:
        args.json.write_text(json.dumps([{"server": n, **r} for n, r in rows], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
