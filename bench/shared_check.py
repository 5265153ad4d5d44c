#!/usr/bin/env python3
"""A big file's analysis in one process and in several (engine/item_processes.py), as `run` and `check` make it.

For each size, bench/run_throughput.py's blueprint and AgentV suite are analysed in a fresh process, as
`evalspec run` analyses them before its first call (`analyze_file(note_prompts=…)`) and as `evalspec check`
does (`findings_only`), with `processes=1` and with the default (one per core, up to 4). Printed per
analysis: its wall, the CPU of the analysing process and of its forked readers, and its peak RSS (the
largest of the process and its readers). A benchmark: it asserts nothing. Walls compare only on an idle
machine; the load average is printed.

usage: shared_check.py [--items N[,N…]] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_throughput import write_agentv_suite, write_blueprint  # noqa: E402

ONE = r'''
import json, resource, sys, time
from evalspec.analysis import analyze_file
from evalspec.run.cli import _prompt_pass
path, mode, processes = sys.argv[1], sys.argv[2], None if sys.argv[3] == "auto" else int(sys.argv[3])
kw = {"note_prompts": _prompt_pass} if mode == "run" else {"findings_only": True}
t = time.perf_counter()
a = analyze_file(path, processes=processes, **kw)
wall = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": round(wall, 2), "cpu_s": round(me.ru_utime + me.ru_stime, 2),
                  "readers_cpu_s": round(kids.ru_utime + kids.ru_stime, 2),
                  "peak_rss_mb": round(max(me.ru_maxrss, kids.ru_maxrss) / 1024, 1), "findings": len(a.findings)}))
'''


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", default="20000")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(json.dumps({"load_average": load()}), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in (int(x.replace("_", "")) for x in args.items.split(",")):
            blueprint, suite = work / f"b{n}.weval.yml", work / f"s{n}" / "s.eval.yaml"
            suite.parent.mkdir()
            write_blueprint(blueprint, n)
            write_agentv_suite(suite, n)
            for fmt, path in (("weval", blueprint), ("agentv", suite)):
                for mode in ("run", "check"):
                    for _ in range(args.repeat):
                        for processes in ("1", "auto"):
                            out = subprocess.run([sys.executable, "-c", ONE, str(path), mode, processes],
                                                 capture_output=True, text=True, check=True).stdout
                            print(json.dumps({"items": n, "format": fmt, "as": mode, "processes": processes,
                                              **json.loads(out)}), flush=True)
    print(json.dumps({"load_average": load()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
