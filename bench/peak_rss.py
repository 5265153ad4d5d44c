#!/usr/bin/env python3
"""Run a command and write its own peak RSS: `python bench/peak_rss.py OUT_FILE CMD...`.

Why a launcher: on Linux a child's ru_maxrss (wait4) starts at its parent's high-water mark. At exec the
kernel keeps the larger of the process's maxrss and the old address space's peak, and CPython spawns with
vfork, whose old address space is the parent's own. A benchmark that holds a fake server (bench/batch_run.py:
every batch's requests and results) and spawns a run from it reports the server's size as the run's. This
launcher is a fresh, small process: the command it spawns starts from its ~10 MB, so the figure it
writes is the command's.

OUT_FILE gets `<exit status> <peak RSS in KiB>` when the command ends. SIGTERM to the launcher kills the
command (SIGKILL), so a benchmark can kill a run mid-way and still read its peak.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path


def main() -> int:
    out, cmd = Path(sys.argv[1]), sys.argv[2:]
    proc = subprocess.Popen(cmd)
    signal.signal(signal.SIGTERM, lambda *_: proc.kill())
    _, status, usage = os.wait4(proc.pid, 0)  # retried after the handler (PEP 475)
    code = os.waitstatus_to_exitcode(status)
    out.write_text(f"{code} {usage.ru_maxrss}\n", encoding="utf-8")
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
