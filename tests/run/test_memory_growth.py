"""What a whole `evalspec run` holds per prompt: the streaming design, measured without timing.

Every bound that keeps a big run's memory flat (cells held before they spill, prompts kept as objects,
a comparison file read whole, points and folders remembered, values encoded together in the report) is
lowered to a few dozen, so a run of a few hundred prompts is a big run in miniature. Memory is traced
(tracemalloc: Python's own allocations, exactly repeatable) over the whole command (check, plan, cells,
results files, report) at two sizes; the difference per added prompt is what each prompt costs at the
peak. What is left is bookkeeping: the plan's task and cell, the score, the store's offset, the ids. A
stage that held every prompt's model, every cell's results, the file's lines as strings, or the report's
per-cell lists as objects again (each ~0.4-4 KB a prompt) fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ..traced_runs import AGENTV, WEVAL, lower, traced_peak

# Measured 24 Nov (this blueprint shape, the bounds below, 300 and 900 prompts): 1.6-1.8 KB a prompt at
# the peak (the report's reading of the comparison file and the journal, on top of the run's tasks,
# scores, offsets and ids); ~3.8 KB before the file's text went with the analysis, its lines were kept
# as offsets and the report's lists as JSON. Each cell's results held again would add ~3.5 KB, each
# prompt's model as objects ~4.6 KB.
MAX_BYTES_PER_PROMPT = 2600


def _blueprint(path: Path, n: int) -> Path:
    lines = ["title: Memory growth", "models: [echo]", "---"]
    for i in range(n):
        lines += [f"- id: p{i}", f"  prompt: \"Question {i}: what is the answer number {i}?\"",
                  "  should:", f"    - $contains: \"answer number {i}\"", "    - $word_count_between: [3, 60]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _peak(tmp_path: Path, n: int) -> int:
    bp = _blueprint(tmp_path / f"g{n}.weval.yml", n)
    peak = traced_peak(["run", str(bp), "-o", str(tmp_path / f"out{n}"), "-j", "8"])
    assert len(list((tmp_path / f"out{n}").rglob("report.html"))) == 1
    return peak


def test_a_run_holds_little_per_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    lower(monkeypatch, WEVAL)
    _peak(tmp_path, 20)  # imports and first-use caches, outside what is compared
    small, large = _peak(tmp_path, 300), _peak(tmp_path, 900)
    capsys.readouterr()
    per_prompt = (large - small) / 600
    assert per_prompt < MAX_BYTES_PER_PROMPT, f"{per_prompt:.0f} bytes a prompt (traced peaks {small:,} and {large:,})"


# AgentV (measured 24 Nov, the suite below, the same bounds plus the tests', 300 and 900 tests): 2.4 KB a
# test at the traced peak, the report's (its page's per-cell block, the spool's ids), on top of the run's
# tasks, scores and ids. Before: 7.5 KB (three reference cycles per judged test, from the standard JSON
# encoder's indented path, with the collector off) and 3.6 KB (every row queued as an event while no
# cell waited); a test held as objects again (the suite's model, a task holding its test, the report's
# items) costs ~3-4 KB.
MAX_BYTES_PER_TEST = 3000


def _suite(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    half = n // 2
    lines = ["name: growth", "description: Memory growth.", "tests:"]
    for i in range(half):
        lines += [f"  - id: t{i}", f"    input: \"Question {i}: what is the answer number {i}?\"",
                  f"    criteria: says {i}", "    assert:", f"      - {{type: contains, value: \"{i}\", required: true}}",
                  "      - {type: regex, value: \"[a-z]+\"}",
                  # the echo judge answers its prompt: a verdict as AgentV's judges give one, so the cell is scored
                  f"      - {{type: llm-judge, prompt: '{{\"score\": 1, \"hits\": [\"says {i}\"], \"misses\": [], "
                  f"\"reasoning\": \"r\"}}'}}"]
    lines.append("  - file://cases.jsonl")
    (folder / "cases.jsonl").write_text("".join(
        f'{{"id": "j{i}", "input": "Question {i}?", "criteria": "says {i}", '
        f'"assert": [{{"type": "contains", "value": "{i}"}}]}}\n' for i in range(half, n)), encoding="utf-8")
    path = folder / "g.eval.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _agentv_peak(tmp_path: Path, n: int) -> int:
    suite = _suite(tmp_path / f"s{n}", n)
    peak = traced_peak(["run", str(suite), "-m", "echo", "--judge", "echo", "-o", str(tmp_path / f"out{n}"), "-j", "8"])
    (rows,) = [p for p in (tmp_path / f"out{n}").rglob("*.jsonl") if not p.name.endswith(".journal.jsonl")]
    assert sum(1 for _ in rows.open(encoding="utf-8")) == n
    assert len(list((tmp_path / f"out{n}").rglob("report.html"))) == 1
    return peak


def test_an_agentv_run_holds_little_per_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    lower(monkeypatch, AGENTV)
    _agentv_peak(tmp_path, 20)  # imports and first-use caches, outside what is compared
    small, large = _agentv_peak(tmp_path, 300), _agentv_peak(tmp_path, 900)
    capsys.readouterr()
    per_test = (large - small) / 600
    assert per_test < MAX_BYTES_PER_TEST, f"{per_test:.0f} bytes a test (traced peaks {small:,} and {large:,})"


# What an AgentV run holds per cell once every cell has run (its results on disk, waiting to be written
# in the plan's order): measured 24 Nov, the suite and bounds above, 300 and 900 tests: ~200 bytes a test
# (the store's ids and offsets, the plan's positions, the rows' offsets, each cell's outcome). Before the
# tasks, rows and outcomes went to arrays (a task, its Cell and a copy of its id; a dict of scores; the
# cell store's keys): ~700 bytes. Each cell's row held again would add ~3 KB.
MAX_BYTES_PER_CELL_RUN = 400


# Measured in a process of its own: in this one, what earlier tests left behind (a full run of the suite)
# made ~430 bytes a cell of what is ~30 in a fresh process, where only the run's own state counts.
_HELD = r"""
import gc, sys, tracemalloc
from pathlib import Path
from evalspec.run.write import agentv as write_agentv
from tests.run import test_memory_growth as t
from tests.traced_runs import AGENTV, traced_peak

for owner, name, bound in AGENTV:
    setattr(owner, name, bound)
held = []
real_write = write_agentv.AgentvWriter.write

def write(self, **kw):
    gc.collect()  # what is alive, not garbage the collector has not reached yet
    held.append(tracemalloc.get_traced_memory()[0])  # alive when the cells are done, before the files
    return real_write(self, **kw)

write_agentv.AgentvWriter.write = write
tmp = Path(sys.argv[1])


def run(folder, n):
    suite = t._suite(folder / f"s{n}", n)
    traced_peak(["run", str(suite), "-m", "echo", "--judge", "echo", "-o", str(folder / f"out{n}"), "-j", "8",
                 "--processes", "1"])


# imports and first-use caches, outside what is compared: a run as big as the larger one measured, so that
# every bounded cache keyed by what a test holds (its values, its assertions' texts) is as full as it gets
run(tmp / "warm", SMALL + CELLS)
held.clear()
run(tmp, SMALL)
run(tmp, SMALL + CELLS)
print(held[0], held[1])
"""
SMALL, CELLS = 300, 2_400  # what is alive at one moment moves by ±300 KB: 2,400 cells keep that to ±125 bytes


def test_an_agentv_run_holds_little_per_cell_when_its_cells_are_done(tmp_path: Path) -> None:
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    script = f"SMALL, CELLS = {SMALL}, {CELLS}\n{_HELD}"
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=repo, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    held = [int(v) for v in done.stdout.split()[-2:]]
    per_cell = (held[1] - held[0]) / CELLS
    assert per_cell < MAX_BYTES_PER_CELL_RUN, f"{per_cell:.0f} bytes a cell alive after the cells ({held})"
