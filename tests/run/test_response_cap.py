"""A provider answer over the size cap is an error cell with a clear reason, and memory stays bounded.

The attack run's case: six 50 MB answers took `evalspec run` to a 2.7 GB peak. Here they go to the real
CLI (a subprocess, so its peak RSS is its own) from the fake provider on 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakeprovider import Reply

from .conftest import SmartFake, comparison, env_for, write

ANSWER_BYTES = 50_000_000


@pytest.mark.timeout(120)
def test_six_50_mb_answers_are_error_cells_and_memory_stays_bounded(tmp_path: Path, smart: SmartFake) -> None:
    huge = b'{"choices":[{"message":{"content":"' + b"x" * ANSWER_BYTES + b'"}}]}'
    smart.then(*[Reply.raw(200, huge, **{"content-type": "application/json"}) for _ in range(6)])
    lines = ["models: [openai:candidate]", "---"]
    for i in range(7):  # the seventh gets the fake's ordinary small answer
        lines += [f"- id: p{i}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}"]
    bp = write(tmp_path / "big.weval.yml", "\n".join(lines) + "\n")
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path)}
    # A fresh parent whose only child is the run reports that child's peak RSS (KiB) on its last line.
    measure = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
    proc = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "evalspec.cli", "run", str(bp),
                           "--output", str(out), "--concurrency", "6", "--retries", "0"], env=env,
                          capture_output=True, text=True, timeout=100)
    peak_mb = int(proc.stdout.split()[-1]) / 1024
    assert proc.returncode in (0, 1), proc.stderr
    errors = comparison(out).get("errors", {})
    assert len(errors) == 6, errors
    for message in map(str, errors.values()):
        assert "larger than the 8 MB limit" in message and "--max-response-mb" in message
    assert peak_mb < 400, f"peak RSS {peak_mb:.0f} MB"
    assert smart.count == 7  # a refused answer is not retried


def test_the_cap_is_a_flag(tmp_path: Path, smart: SmartFake) -> None:
    smart.then(Reply.raw(200, {"choices": [{"message": {"content": "y" * 3000}}]}))
    bp = write(tmp_path / "one.weval.yml", "models: [openai:candidate]\n---\n- id: p\n  prompt: q\n")
    out = tmp_path / "out"
    env = {**env_for(smart), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "--output", str(out),
                           "--retries", "0", "--max-response-mb", "0.001"], env=env, capture_output=True, text=True,
                          timeout=60)
    errors = comparison(out).get("errors", {})
    assert len(errors) == 1 and "larger than the 1,048 bytes limit" in str(errors), (errors, proc.stderr)
    bad = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "--max-response-mb", "0"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--max-response-mb must be a positive number" in bad.stderr
