#!/usr/bin/env python3
"""Run a command and write its own peak RSS: `python bench/peak_rss.py OUT_FILE CMD...`.

Why a launcher: on Linux a child's ru_maxrss (wait4) starts at its parent's high-water mark. At exec the
kernel keeps the larger of the process's maxrss and the old address space's peak, and CPython spawns with
vfork, whose old address space is the parent's own. A benchmark that holds a fake server (bench/batch_run.py:
every batch's requests and results) and spawns a run from it reports the server's size as the run's. This
launcher is a fresh, small process: the command it spawns starts from its ~10 MB, so the figure it
writes is the command's.

A run has a child (its HTTP process, providers/http_process.py) whose memory wait4's figure leaves out (a
reaped child's maxrss is the largest process's, not their sum): the launcher also adds up the resident
memory of the command and every process under it every 50 ms (the processes found every half second),
and writes the larger of the two peaks.

OUT_FILE gets `<exit status> <peak RSS in KiB>` when the command ends. SIGTERM to the launcher kills the
command (SIGKILL), so a benchmark can kill a run mid-way and still read its peak.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path


def _tree(root: int) -> list[int]:
    """`root` and every process under it (a scan of /proc: ~10 ms, done every half second)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(p for p, parent in parents.items() if parent == pid)
    return found


def _rss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as f:
                total += int(f.read().split()[1]) * _PAGE_KIB
        except (OSError, ValueError):
            continue
    return total


_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def main() -> int:
    out, cmd = Path(sys.argv[1]), sys.argv[2:]
    proc = subprocess.Popen(cmd)
    signal.signal(signal.SIGTERM, lambda *_: proc.kill())
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        pids, n = [proc.pid], 0
        while not done.wait(0.05):
            if n % 10 == 0:
                pids = _tree(proc.pid)
            n += 1
            peak[0] = max(peak[0], _rss_kib(pids))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)  # retried after the handler (PEP 475)
    done.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    out.write_text(f"{code} {max(usage.ru_maxrss, peak[0])}\n", encoding="utf-8")
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
