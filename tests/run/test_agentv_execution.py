"""AgentV execution: trials (pass_at_k, mean, confidence_interval, cost_limit_usd), workspaces (template
copies, isolation, setup/teardown and hooks, their failures), fail_on_error, total_budget_usd."""

from __future__ import annotations

import itertools
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from .conftest import AGENTV_TARGETS, SmartFake, env_for, of_type, options, run_events, write

PY = sys.executable
ECHO_SCORE = """import json, re, sys
p = json.load(sys.stdin)
m = re.search(r"s=([0-9.]+)", p["answer"])
print(json.dumps({"score": float(m.group(1)) if m else 0}))
"""


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


class Sequence:
    """Candidate answers in order (thread-safe: the fake serves on its own thread)."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = itertools.cycle(answers)
        self.lock = threading.Lock()
        self.calls = 0

    def __call__(self, req: dict[str, Any]) -> str | None:
        if req.get("model") != "candidate":
            return None
        with self.lock:
            self.calls += 1
            return next(self.answers)


def _trials_suite(tmp_path: Path, trials: str) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    write(tmp_path / "evals" / "score.py", ECHO_SCORE)
    return write(tmp_path / "evals" / "t.eval.yaml", f"""name: trials
description: d
execution:
  target: default
  trials: {trials}
tests:
  - id: t
    input: go
    criteria: c
    assert:
      - {{type: code-judge, command: [{PY}, score.py]}}
""")


def test_pass_at_k_stops_at_the_first_pass(tmp_path: Path, smart: SmartFake) -> None:
    seq = smart.decide = Sequence(["s=0.3", "s=0.9", "s=1.0"])
    bp = _trials_suite(tmp_path, "{count: 3, strategy: pass_at_k}")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    assert seq.calls == 2  # the second attempt passed: no third
    assert (row["score"], row["verdict"]) == (0.9, "pass")
    assert [t["score"] for t in row["trials"]] == [0.3, 0.9]
    assert [t["answer"] for t in row["trials"]] == ["s=0.3", "s=0.9"]
    assert row["answer"] == "s=0.9" and row["trials_summary"]["stopped"] == "passed"


def test_mean_of_the_compat_vector(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = Sequence(["s=0.7", "s=0.9", "s=1.0"])
    bp = _trials_suite(tmp_path, "{count: 3, strategy: mean}")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    assert row["score"] == pytest.approx(0.8667, abs=1e-4) and row["verdict"] == "pass"
    assert len(row["trials"]) == 3


def test_confidence_interval_is_the_lower_bound(tmp_path: Path, smart: SmartFake) -> None:
    smart.decide = Sequence(["s=0.7", "s=0.9", "s=1.0"])
    bp = _trials_suite(tmp_path, "{count: 3, strategy: confidence_interval}")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    # mean 0.86667, sample sd 0.152753, t(0.975, 2) = 4.302653 → 0.86667 − 4.302653·0.152753/√3 = 0.48721
    assert row["score"] == pytest.approx(0.48721, abs=1e-4) and row["verdict"] == "fail"
    assert row["trials_summary"]["ci95_upper"] == pytest.approx(1.0)


def test_cost_limit_counts_what_the_target_reports(tmp_path: Path, smart: SmartFake) -> None:
    """AgentV adds each attempt's reported cost (`costUsd ?? 0`): a chat target reports none, so its
    attempts never reach the limit, whatever they cost by evalspec's price table (the row still says what
    the run spent); a cli target's reported cost stops them."""
    seq = smart.decide = Sequence(["s=0.5"])
    bp = _trials_suite(tmp_path, "{count: 5, strategy: mean, cost_limit_usd: 0.01}")
    prices = write(tmp_path / "p.yml", "candidate: {input: 100, output: 1000}\n")  # 0.0081 a call
    run_events(bp, options(tmp_path, env_for(smart), prices=prices))
    row = _rows(tmp_path / "out")["t"]
    assert seq.calls == 5 and row["trials_summary"]["stopped"] == "count"
    assert "reports no cost" in row["trials_summary"]["cost_limit_note"]
    assert row["cost_usd"] == pytest.approx(5 * 0.0081)

    agent = write(tmp_path / "agent.py", "import json\nprint(json.dumps({'text': 's=0.5', 'cost_usd': 0.006}))\n")
    write(tmp_path / ".agentv" / "targets.yaml",
          f"targets:\n  - name: default\n    provider: cli\n    command: {PY} {agent}\n")
    run_events(bp, options(tmp_path / "cli", {"PATH": "/usr/bin:/bin"}))
    row = _rows(tmp_path / "cli" / "out")["t"]
    assert len(row["trials"]) == 2 and row["trials_summary"]["stopped"] == "cost_limit"  # 0.012 ≥ 0.01
    assert row["cost_usd"] == pytest.approx(0.012) and row["score"] == 0.5


def test_without_a_price_the_cost_limit_is_said_to_be_unenforced(tmp_path: Path, smart: SmartFake) -> None:
    seq = smart.decide = Sequence(["s=0.5"])
    bp = _trials_suite(tmp_path, "{count: 3, strategy: mean, cost_limit_usd: 0.01}")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["t"]
    assert seq.calls == 3 and "nothing to the limit" in row["trials_summary"]["cost_limit_note"]


# --- workspaces ---------------------------------------------------------------------------------------

AGENT = """import os, sys
# The agent under test: notes what it found in its workspace, then leaves a file there.
found = sorted(os.listdir("."))
open(f"made-by-{sys.argv[1]}.txt", "w").write("x")
open(sys.argv[2], "w").write("cwd=" + os.path.basename(os.path.dirname(os.getcwd())) + " saw=" + ",".join(found))
"""
LOG = """import json, os, sys
p = json.load(sys.stdin)
with open(sys.argv[2], "a") as f:
    f.write(f"{sys.argv[1]} {p['test_id']} {os.path.isdir(p['workspace_path'])} {os.environ['AGENTV_TEST_ID']}\\n")
with open(sys.argv[2] + ".paths", "a") as f:
    f.write(p["workspace_path"] + "\\n")
"""


def _workspace_suite(tmp_path: Path, workspace: str, *, tests: str | None = None) -> Path:
    # tmp_path is the repository, so that repositories and scripts beside evals/ are in the project.
    (tmp_path / ".git").mkdir(exist_ok=True)
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS + f"""  - name: agent
    provider: cli
    command: "{PY} {tmp_path / 'agent.py'} {{EVAL_ID}} {{OUTPUT_FILE}}"
""")
    write(tmp_path / "agent.py", AGENT)
    write(tmp_path / "evals" / "log.py", LOG)
    write(tmp_path / "evals" / "template" / "seed.txt", "seed")
    tests = tests or """  - {id: one, input: a, criteria: c, assert: [{type: contains, value: seed.txt}]}
  - {id: two, input: b, criteria: c, assert: [{type: contains, value: seed.txt}]}
"""
    return write(tmp_path / "evals" / "w.eval.yaml", f"""name: ws
description: d
execution:
  target: agent
workspace:
{workspace}
tests:
{tests}""")


def test_per_test_workspaces_are_fresh_copies_with_scripts_in_order(tmp_path: Path, smart: SmartFake) -> None:
    log = tmp_path / "log.txt"
    bp = _workspace_suite(tmp_path, f"""  template: ./template
  isolation: per_test
  setup: {{command: [{PY}, log.py, setup, {log}], timeout_ms: 20000}}
  teardown: {{command: [{PY}, log.py, teardown, {log}]}}
  hooks:
    before_all: {{command: [{PY}, log.py, before_all, {log}], cwd: .}}
    before_each: {{command: [{PY}, log.py, before_each, {log}]}}
    after_each: {{command: [{PY}, log.py, after_each, {log}]}}
    after_all: {{command: [{PY}, log.py, after_all, {log}], cwd: .}}
""")
    run_events(bp, options(tmp_path, env_for(smart), concurrency=1))
    rows = _rows(tmp_path / "out")
    for tid in ("one", "two"):
        # Each test's agent saw the template alone: not the file the other test's agent left behind.
        assert rows[tid]["answer"].endswith("saw=seed.txt"), rows[tid]["answer"]
        assert rows[tid]["score"] == 1.0
    lines = log.read_text().splitlines()
    # Tests may overlap (two workers), but each test's own scripts run in order, inside before/after_all.
    assert lines[0] == "before_all None True " and lines[-1] == "after_all None True "
    for tid in ("one", "two"):
        assert [line for line in lines if f" {tid} " in line] == [
            f"setup {tid} True {tid}", f"before_each {tid} True {tid}", f"after_each {tid} True {tid}",
            f"teardown {tid} True {tid}"]
    assert rows["one"]["answer"].split()[0] != rows["two"]["answer"].split()[0]  # two workspaces
    used = {line for line in Path(f"{log}.paths").read_text().splitlines()}
    assert len(used) == 3  # the eval folder (before_all) and one workspace per test
    assert not [p for p in used if "evalspec-ws-" in p and Path(p).exists()]  # removed after the run


def test_a_shared_workspace_is_kept_across_tests(tmp_path: Path, smart: SmartFake) -> None:
    log = tmp_path / "log.txt"
    bp = _workspace_suite(tmp_path, f"""  template: ./template
  setup: {{command: [{PY}, log.py, setup, {log}]}}
  hooks:
    after_all: {{command: [{PY}, log.py, after_all, {log}]}}
""")
    run_events(bp, options(tmp_path, env_for(smart), concurrency=1))
    rows = _rows(tmp_path / "out")
    assert rows["one"]["answer"].split()[0] == rows["two"]["answer"].split()[0]  # one workspace for both
    assert rows["one"]["answer"].startswith("cwd=evalspec-ws-")
    assert log.read_text().splitlines() == ["setup None True ", "after_all None True "]


def test_a_failing_setup_is_a_row_error_and_the_target_is_not_called(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / "evals" / "bad.py", "import sys\nprint('cannot prepare', file=sys.stderr)\nsys.exit(4)\n")
    bp = _workspace_suite(tmp_path, f"""  template: ./template
  isolation: per_test
  setup: {{command: [{PY}, bad.py]}}
""")
    events = run_events(bp, options(tmp_path, env_for(smart)))
    rows = _rows(tmp_path / "out")
    for row in rows.values():
        assert row["execution_status"] == "execution_error"
        assert "workspace setup exited with code 4" in row["error"] and "cannot prepare" in row["error"]
        assert row["answer"] == ""
    assert len(of_type(events, "cell_failed")) == 2


def test_a_hanging_hook_times_out(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / "evals" / "sleep.py", "import time\ntime.sleep(60)\n")
    bp = _workspace_suite(tmp_path, f"""  template: ./template
  hooks:
    before_each: {{command: [{PY}, sleep.py], timeout_ms: 300}}
""", tests="  - {id: one, input: a, criteria: c, assert: [{type: contains, value: x}]}\n")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["one"]
    assert "hooks.before_each timed out after 0.3 s" in row["error"]


def test_a_missing_template_is_a_row_error(tmp_path: Path, smart: SmartFake) -> None:
    bp = _workspace_suite(tmp_path, "  template: ./nowhere\n",
                          tests="  - {id: one, input: a, criteria: c, assert: [{type: contains, value: x}]}\n")
    run_events(bp, options(tmp_path, env_for(smart)))
    row = _rows(tmp_path / "out")["one"]
    assert row["execution_status"] == "execution_error" and "nowhere is not a folder" in row["error"]


# --- execution options --------------------------------------------------------------------------------

def test_fail_on_error_stops_the_run(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS + f"""  - name: broken
    provider: cli
    command: "{PY} -c 'import sys; sys.exit(2)'"
""")
    bp = write(tmp_path / "evals" / "f.eval.yaml", """name: foe
description: d
execution:
  target: broken
  fail_on_error: true
tests:
  - {id: a, input: x, criteria: c, assert: [{type: contains, value: x}]}
  - {id: b, input: x, criteria: c, assert: [{type: contains, value: x}]}
  - {id: c, input: x, criteria: c, assert: [{type: contains, value: x}]}
""")
    run_events(bp, options(tmp_path, env_for(smart), concurrency=1))
    rows = _rows(tmp_path / "out")
    assert "exited with code 2" in rows["a"]["error"]  # a and b start together (two workers at -j 1)
    assert rows["c"]["error"].startswith("not run: execution.fail_on_error stopped the run after ")


def test_total_budget_stops_new_cells_before_they_pass_it(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    bp = write(tmp_path / "evals" / "b.eval.yaml", """name: budget
description: d
execution:
  target: default
  total_budget_usd: 0.0094
tests:
  - {id: a, input: x, criteria: c, assert: [{type: contains, value: x}]}
  - {id: b, input: x, criteria: c, assert: [{type: contains, value: x}]}
  - {id: c, input: x, criteria: c, assert: [{type: contains, value: x}]}
  - {id: d, input: x, criteria: c, assert: [{type: contains, value: x}]}
  - {id: e, input: x, criteria: c, assert: [{type: contains, value: x}]}
""")
    prices = write(tmp_path / "p.yml", "candidate: {input: 100, output: 1}\n")
    events = run_events(bp, options(tmp_path, env_for(smart), concurrency=1, prices=prices))
    rows = _rows(tmp_path / "out")
    # A cell is estimated at (32 × 100 + 1,500 × 1) / 10⁶ = $0.0047 (input "x": ⌈1/4⌉ + 4 tokens, AgentV's
    # default system prompt 27; output at max_tokens) and really costs (11 × 100 + 7 × 1) / 10⁶ = $0.001107
    # (the fake's usage). a and b start together ($0.0094 reserved); when c would start, spent + in flight +
    # $0.0047 passes $0.0094 whether b has finished or not. Before, every cell in flight when the budget was
    # reached could run past it.
    assert [t for t in "abcde" if rows[t]["error"] is None] == ["a", "b"]
    for t in "cde":
        assert rows[t]["error"].startswith("not run: execution.total_budget_usd $0.009400 reached: $0.00")
        assert (rows[t]["score"], rows[t]["verdict"]) == (None, "not scored")  # never a pass, nor a fail
    assert len(smart.chat_requests()) == 2
    summary = of_type(events, "run_finished")[0].summary
    assert summary.cost["usd"] == pytest.approx(2 * 0.001107) and summary.cost["usd"] <= 0.0094
    assert summary.stopped.startswith("3 cell(s) not run: execution.total_budget_usd")
    assert summary.models[0].not_scored == 3 and summary.models[0].errors == 0


def test_code_judges_see_the_agents_file_changes(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / "evals" / "changes.py", """import json, sys
p = json.load(sys.stdin)
print(json.dumps({"score": 1, "details": {"file_changes": p["file_changes"], "ws": p["workspace_path"]}}))
""")
    bp = _workspace_suite(tmp_path, "  template: ./template\n  isolation: per_test\n", tests=f"""  - id: one
    input: a
    criteria: c
    assert:
      - {{type: code-judge, command: [{PY}, changes.py]}}
""")
    run_events(bp, options(tmp_path, env_for(smart)))
    details = _rows(tmp_path / "out")["one"]["scores"][0]["details"]
    # The agent created made-by-one.txt (content "x", no newline) and left seed.txt alone.
    assert details["file_changes"] == ("--- /dev/null\n+++ b/made-by-one.txt\n@@ -0,0 +1 @@\n+x\n")
    assert details["ws"].endswith("/workspace")


# --- execution.cache ----------------------------------------------------------------------------------

def _cached_suite(tmp_path: Path) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    return write(tmp_path / "evals" / "c.eval.yaml", """name: cached
description: d
execution:
  target: default
  cache: true
tests:
  - {id: a, input: x, criteria: c, assert: [{type: contains, value: x}]}
""")


@pytest.mark.parametrize(("cache", "calls"), [(None, 1), (False, 2), (True, 1)])
def test_execution_cache_is_the_default_that_the_command_line_overrides(
        tmp_path: Path, smart: SmartFake, cache: bool | None, calls: int) -> None:
    bp = _cached_suite(tmp_path)
    for _ in range(2):  # the second run finds the first one's answer in the cache, unless told not to use it
        run_events(bp, options(tmp_path, env_for(smart), cache=cache))
    assert len(smart.chat_requests()) == calls


@pytest.mark.parametrize(("flags", "cache"), [([], None), (["--no-cache"], False), (["--cache"], True)])
def test_the_cache_flags_reach_the_options(flags: list[str], cache: bool | None) -> None:
    from evalspec.cli import build_parser
    from evalspec.run.cli import options_from_args

    args = build_parser().parse_args(["run", "x.eval.yaml", *flags])
    assert options_from_args(args).cache is cache
