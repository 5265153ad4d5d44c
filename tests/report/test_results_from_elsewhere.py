"""Reports of results in a folder that may be someone else's (a cloned repository's `results/`; the
editor's "show results" reads it too): the ninth attack round (`python bench/attack.py show9`).

- The cost file found beside the results by its name was read through links and from FIFOs and devices:
  `x_cost.json` as a FIFO held `evalspec report` (and a thread of the language server, which then never
  exited) for good, a link to /dev/zero read until memory ran out.
- What a results file holds was told from its first line read whole: 3 GB of zeros without a newline
  (a few MB in a git clone) were read into memory first.
- The eval file a journal names was read for the report, wherever it is: given `OnlyThese`, nothing
  but the analyses given is read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from evalspec.report import costs
from evalspec.report.sources import OnlyThese, load_results
from evalspec.results_kind import sniff

HANG_GUARD_S = 30.0  # against a hang, not a timing
COST = {"evalspec_cost": 1, "lines": [{"role": "candidate", "model": "m", "calls": 1, "usd": 0.5}]}


def _within_bound(fn: Any, *args: Any) -> Any:
    """`fn(*args)` on a thread that must end within the hang guard (a FIFO open waits for a writer)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn(*args)
        except Exception as exc:
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(HANG_GUARD_S)
    assert not t.is_alive(), f"{fn.__name__} still blocked after {HANG_GUARD_S} s"
    return out


def test_a_cost_file_beside_results_is_read_as_an_own_file(tmp_path: Path) -> None:
    results = tmp_path / "lab_2026_comparison.json"
    cost = tmp_path / "lab_2026_cost.json"
    cost.write_text(json.dumps(COST))
    assert costs.beside(results) is not None  # the plain file is read
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(COST))
    for plant in ("fifo", "dev-zero", "link-out"):
        cost.unlink()
        if plant == "fifo":
            os.mkfifo(cost)
        else:
            cost.symlink_to("/dev/zero" if plant == "dev-zero" else outside)
        got = _within_bound(costs.beside, results)
        assert got == {"value": None}, (plant, got)


def test_sniff_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    got = _within_bound(sniff, fifo)
    assert isinstance(got.get("error"), OSError), got


def test_sniff_does_not_hold_a_first_line_past_its_bound(tmp_path: Path) -> None:
    """1 GB of zeros without a newline (sparse: no disk used), sniffed in a process that may not map
    more than 768 MB: the line was read whole (a MemoryError), now it is given up past 64 MB."""
    big = tmp_path / "x.jsonl"
    with big.open("wb") as f:
        f.truncate(1 << 30)
    code = ("import resource, sys\n"
            "from evalspec.results_kind import sniff\n"
            "resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))\n"
            "print(repr(sniff(__import__('pathlib').Path(sys.argv[1]))))\n")
    ran = subprocess.run([sys.executable, "-c", code, str(big)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip() == "''"


def test_only_these_reads_no_eval_file_a_journal_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere" / "far.eval.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text("name: far\ndescription: d\ntests:\n  - id: t\n    input: FAR-MARKER\n    criteria: c\n")
    folder = tmp_path / "results"
    folder.mkdir()
    journal = folder / "lab.journal.jsonl"
    journal.write_text(json.dumps({"t": "run", "v": 1, "kind": "agentv", "file": str(elsewhere),
                                   "run_label": "lab"}) + "\n")
    read = []
    import evalspec.analysis as analysis_module

    real = analysis_module.analyze_file
    monkeypatch.setattr(analysis_module, "analyze_file", lambda path, *a, **k: (read.append(path), real(path, *a, **k))[1])
    load_results(journal)
    assert read and set(read) == {elsewhere}  # as before for `evalspec report`: the file the journal names
    read.clear()
    run = load_results(journal, analyses=OnlyThese())
    assert read == [] and "FAR-MARKER" not in json.dumps([i.__dict__ for i in run.items], default=str)
