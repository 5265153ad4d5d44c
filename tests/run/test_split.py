"""A run's cells in more than one process (run/split.py, `--processes`).

The runs are real `evalspec run` subprocesses against bench/kill_trials.py's counting fake (a judged
three-model blueprint with function points and a conversation; a judged two-target AgentV suite with a
required gate): with `--processes 2` they export the bytes one process exports and ask every call once;
a kill of the run's process takes its cell process with it and `--resume` finishes without asking a
committed call again; a cell process that dies fails the run, which `--resume` finishes; what keeps a
run in one process is said when --processes asked for more.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evalspec.run.split import chunks

from .test_kill_trials import _bench


@pytest.fixture
def harness(tmp_path: Path) -> Any:
    bench = _bench()
    h = bench.Harness(tmp_path, sys.executable)
    h.disk = "fsize"
    h.baseline_runs = 1
    h.bench = bench
    try:
        yield h
    finally:
        h.close()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _slow_run(harness: Any, config: Any, *, scores: int) -> tuple[Any, Path, list[int]]:
    """A fresh run of `config` against a fake slowed down, once its cell process is there and the database
    holds `scores` scores: (the run's process, the file, its cell processes)."""
    path = harness.fresh_work(config)
    harness.fake.reset()
    harness.fake.asked.clear()
    harness.fake.slow = 0.05
    proc = harness.start(path, config)
    end = time.monotonic() + 60
    children: list[int] = []
    while time.monotonic() < end and proc.poll() is None:
        children = _children(proc.pid)  # (now: a big file's analysis forks readers that end before the cells)
        if children and harness.counts().get("scores", 0) >= scores:
            break
        time.sleep(0.005)
    assert children, "no cell process was made"
    return proc, path, children


@pytest.mark.parametrize("kind", ["weval", "agentv"])
def test_two_processes_export_what_one_does_and_ask_each_call_once(harness: Any, kind: str) -> None:
    bench = harness.bench
    one = harness.baseline(bench.Config(kind))
    two = harness.baseline(bench.Config(kind, ("--processes=2",)))  # (asserts no call asked twice)
    assert two.exports == one.exports
    assert two.marks == one.marks and two.code == one.code
    assert (two.answers, two.judgements, two.cells) == (one.answers, one.judgements, one.cells)


def test_a_kill_takes_the_cell_process_along_and_resume_repeats_no_committed_call(harness: Any) -> None:
    bench = harness.bench
    config = bench.Config("weval", ("--processes=2",))
    base = harness.baseline(config)
    proc, path, children = _slow_run(harness, config, scores=5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    end = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < end:
        time.sleep(0.01)
    assert not any(_alive(c) for c in children), "the cell process outlived the run's"
    assert 0 < harness.counts()["scores"] < base.cells
    committed = harness.committed()  # the marks of the answers and judgements the database holds
    assert committed
    assert harness.fake.idle()  # (the killed run's requests in flight answered, counted before the resume's)
    harness.fake.slow = 0.0
    harness.fake.segment = 1
    done = harness.start(path, config, "--resume")
    assert done.wait(120) == base.code, harness.output(done)
    again = [m for seg, m, _ in harness.fake.asked if seg == 1]
    assert len(again) == len(set(again)), "the resumed run asked a call twice"
    assert not committed & set(again), "a call committed before the kill was asked again"
    assert {m for _, m, _ in harness.fake.asked} == base.marks
    assert harness.exports() == base.exports
    assert "the cells run in 2 processes" in harness.output(done)


def test_a_cell_process_that_dies_fails_the_run_and_resume_finishes_it(harness: Any) -> None:
    bench = harness.bench
    config = bench.Config("agentv", ("--processes=2",))
    base = harness.baseline(config)
    proc, path, children = _slow_run(harness, config, scores=1)
    os.kill(children[0], signal.SIGKILL)
    code = proc.wait(60)
    text = harness.output(proc)
    assert code == 2, text
    assert "a cell process of the run" in text and "--resume" in text and "Traceback" not in text
    harness.fake.slow = 0.0
    done = harness.start(path, config, "--resume")
    assert done.wait(120) == base.code, harness.output(done)
    assert harness.exports() == base.exports


@pytest.mark.parametrize(("flags", "why"), [
    (("--cache",), "the response cache"),
    (("-j", "1"), "the concurrency is 1"),
])
def test_what_keeps_a_run_in_one_process_is_said(harness: Any, flags: tuple[str, ...], why: str) -> None:
    bench = harness.bench
    config = bench.Config("weval", ("--processes=2", *flags))
    path = harness.fresh_work(config)
    proc = harness.start(path, config)
    proc.wait(120)
    text = harness.output(proc)
    assert "--processes 2: this run's cells run in one process" in text and why in text, text
    assert "the cells run in 2 processes" not in text


def test_chunks_end_where_an_item_does() -> None:
    items = [0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4]
    assert chunks(items, 2) == [0, 3, 5, 10]
    assert chunks(items, 4) == [0, 5, 10]
    assert chunks(items, 100) == [0]
    assert chunks([], 4) == [0]
    assert chunks([0, 1, 0], 1) is None  # an item's cells apart: the run stays in one process
    rng = random.Random(3)
    for _ in range(50):
        items = sorted(rng.randrange(30) for _ in range(rng.randrange(1, 80)))
        starts = chunks(items, rng.randrange(1, 10))
        assert starts is not None and starts[0] == 0
        assert all(items[s] != items[s - 1] for s in starts[1:])


def test_by_default_a_run_of_a_thousand_cells_shares_them_out_and_a_smaller_one_does_not(tmp_path: Path) -> None:
    import subprocess

    cores = len(os.sched_getaffinity(0))
    for n, expected in ((999, 1), (1000, min(4, cores))):
        bp = tmp_path / f"b{n}.weval.yml"
        bp.write_text("models: [openai:m]\n---\n" + "".join(
            f"- id: p{i}\n  prompt: question {i}\n  should:\n    - $contains: question\n" for i in range(n)),
            encoding="utf-8")
        out = subprocess.run([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-m", "echo", "-o",
                              str(tmp_path / f"o{n}"), "--no-report"], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PATH": "/usr/bin:/bin"})
        assert out.returncode == 0, out.stderr
        said = f"the cells run in {expected} processes" in out.stdout + out.stderr
        assert said == (expected > 1), out.stderr
        assert "1.000" in out.stdout  # every cell scored, whichever process ran it


def test_the_processes_share_the_calls_in_flight_and_each_providers_limit() -> None:
    from evalspec.run.generate.calls import Calls
    from evalspec.run.options import RunOptions

    shares = []
    for part in range(3):
        calls = Calls(RunOptions(provider_concurrency={"openai": 4, "anthropic": 7}), lambda e: None,
                      concurrency=10)
        calls.share(part, 3)
        shares.append((calls.concurrency, calls.options.provider_concurrency))
    assert [c for c, _ in shares] == [4, 3, 3]  # 10 in all
    assert [p["openai"] for _, p in shares] == [2, 1, 1]
    assert [p["anthropic"] for _, p in shares] == [3, 2, 2]
