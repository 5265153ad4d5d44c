"""Batch mode for AgentV's judges and trials: `rubrics`, `llm-judge`, a composite's llm-judge aggregator,
the default judge and `execution.trials` after the first attempt, all through the fake batch server's
batch APIs in rounds (run/generate/batch_rounds.py), with results an interactive run's byte for byte.

The fake answers a request as a function of its body, so a trial asks exactly what the attempt before
asked: a request sent twice shows as a count above the interactive run's (`sent`), not as any count
above one.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from evalspec.cli import main
from tests.batch.test_batch_run import _agentv_bytes, journal
from tests.fakebatch import FakeBatchServer

TARGETS = """targets:
  - name: oa
    provider: openai
    model: gpt-4o-mini
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
    judge_target: judge
  - name: judge
    provider: anthropic
    model: claude-3-5-haiku-latest
    api_key: ${{ ANTHROPIC_API_KEY }}
"""


def suite(tmp_path: Path, n: int, trials: str = "{count: 3, strategy: pass_at_k}") -> Path:
    """Odd tests miss a rubric item (banana), which fails their required rubric assertion (AgentV: a missed
    required criterion fails the assertion; `required: true` on it fails the test): pass_at_k asks them
    three times; even ones pass
    at the first attempt, so a second attempt of theirs would be a request an interactive run never sends."""
    (tmp_path / ".agentv").mkdir(exist_ok=True)
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    tests = []
    for i in range(n):
        criteria = [f"says {i}"] + (["mentions banana"] if i % 2 else [])
        tests.append(f"""  - id: t{i}
    input: question {i}
    criteria: answers question {i}
    assert:
      - {{type: rubrics, criteria: {json.dumps(criteria)}, required: true}}
      - {{type: llm-judge, prompt: "Grade {{{{ answer }}}} for {{{{ criteria }}}}"}}
      - type: composite
        name: combined
        assert:
          - {{name: asks, type: contains, value: question}}
          - {{name: judged, type: llm-judge}}
        aggregator: {{type: llm_judge}}
""")
    tests.append("  - id: plain\n    input: hello\n    criteria: greets back\n")  # the default judge
    path = tmp_path / "evals" / "j.eval.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("name: j\ndescription: d\nexecution:\n  targets: [oa]\n"
                    f"  trials: {trials}\ntests:\n" + "".join(tests), encoding="utf-8")
    return path


def interactive(tmp_path: Path, path: Path, fake: FakeBatchServer) -> tuple[bytes, Counter[str]]:
    out = tmp_path / "interactive"
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0"]) == 0
    sent = Counter(fake.sent)
    fake.forget_calls()
    return _agentv_bytes(out), sent


def parse(results: bytes) -> list[dict]:
    return [json.loads(line.replace(b"<ms>", b"0")) for line in results.splitlines()]


def cost_lines(out: Path) -> dict[tuple[str, str, str], int]:
    cost = json.loads(next(out.rglob("*_cost.json")).read_bytes())
    return {(x["role"], x["model"], x["via"]): x["calls"] for x in cost["lines"]}


def test_judges_rubrics_aggregators_and_trials_batch(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    path = suite(tmp_path, 6)
    expected, sent = interactive(tmp_path, path, fake)
    rows = parse(expected)
    assert {r["test_id"]: len(r["trials"]) for r in rows} == {"t0": 1, "t1": 3, "t2": 1, "t3": 3, "t4": 1,
                                                             "t5": 3, "plain": 3}
    assert all(s["score"] is not None for r in rows for s in r["scores"])  # every judge answered, scored
    capsys.readouterr()
    out = tmp_path / "batch"
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", "--batch",
                 "--batch-poll", "0.01"]) == 0
    assert _agentv_bytes(out) == expected  # byte for byte, times aside: scores, trials, judge_cost_usd
    assert fake.chat_calls == 0  # nothing one by one
    assert fake.sent == sent  # each request as often as the interactive run sent it: none twice, none extra
    # The answers' batch, then eight rounds: an odd test's chain (its judges side by side, the aggregator,
    # the second attempt, its judges, the aggregator, the third, its judges, the aggregator); the default-
    # judged test's steps join them. A round sends a batch per model that has calls in it.
    order = [(b.api, len(b.items)) for b in sorted(fake.batches.values(), key=lambda b: b.number)]
    assert order[:2] == [("openai", 7), ("anthropic", 3 * 6 + 1)]
    assert len(order) == 12 and sum(n for api, n in order if api == "openai") == 7 + 4 + 4
    judge_calls = sum(n for (role, _, _), n in cost_lines(out).items() if role == "judge")
    assert cost_lines(out) == {("answers", "oa", "batch"): 15, ("judge", "judge", "batch"): judge_calls}
    inter = cost_lines(tmp_path / "interactive")
    assert inter == {("answers", "oa", "interactive"): 15, ("judge", "judge", "interactive"): judge_calls}
    assert judge_calls == 4 * 6 + 4 * 3 * 2 + 3  # per attempt of a t test: rubric, llm-judge, child, aggregator
    err = capsys.readouterr().err
    assert "batch mode:" in err and "one by one" not in err


def test_mean_trials_batch_every_attempt(tmp_path: Path, fake: FakeBatchServer) -> None:
    path = suite(tmp_path, 2, "{count: 2, strategy: mean}")
    expected, sent = interactive(tmp_path, path, fake)
    out = tmp_path / "batch"
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", "--batch",
                 "--batch-poll", "0.01"]) == 0
    assert _agentv_bytes(out) == expected and fake.sent == sent and fake.chat_calls == 0


def test_failed_judge_items_go_through_the_interactive_path(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    path = suite(tmp_path, 4, "{count: 1}")
    expected, sent = interactive(tmp_path, path, fake)
    fake.fail_when("says 2")  # t2's rubric call fails inside its batch; the chat endpoint answers it
    out = tmp_path / "batch"
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", "--batch",
                 "--batch-poll", "0.01"]) == 0
    assert _agentv_bytes(out) == expected
    assert fake.chat_calls == 1
    assert sum((fake.sent - sent).values()) == 1  # that one request: in its batch, then one by one
    err = capsys.readouterr().err
    assert "1 of 13 request(s) not answered" in err and "1 request(s) not answered by a batch are sent one" in err


def test_an_expired_judge_batch_goes_through_the_interactive_path(tmp_path: Path, fake: FakeBatchServer,
                                                                   capsys) -> None:
    path = suite(tmp_path, 4, "{count: 1}")
    expected, sent = interactive(tmp_path, path, fake)
    fake.end_as[2] = "expired"  # the first round of judges (13 calls, one Anthropic batch) expires half done
    out = tmp_path / "batch"
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", "--batch",
                 "--batch-poll", "0.01"]) == 0
    assert _agentv_bytes(out) == expected
    assert fake.chat_calls == 13 - 13 // 2  # the unfinished half, one by one
    assert sum((fake.sent - sent).values()) == fake.chat_calls
    assert "7 of 13 request(s) not answered (expired)" in capsys.readouterr().err


def test_ctrl_c_cancels_the_judges_batch(tmp_path: Path, fake: FakeBatchServer) -> None:
    """SIGTERM with --cancel-batches-on-interrupt while a round of judges polls: the judge target's batch
    is cancelled through the judge's own provider; --resume collects what it finished."""
    path = suite(tmp_path, 4, "{count: 1}")
    expected, _ = interactive(tmp_path, path, fake)
    fake.hold_from = 2
    out = tmp_path / "batch"
    proc = _start(path, out, fake, "--cancel-batches-on-interrupt")
    try:
        _wait_for(proc, fake, 2)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()[-2000:]
    assert fake.cancels == 1 and fake.batches[max(fake.batches, key=lambda k: fake.batches[k].number)].api == "anthropic"
    assert "evalspec run: cancel batch" in err.decode()
    fake.hold_from = None
    assert main(["run", str(path), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--resume"]) == 0
    assert _agentv_bytes(out) == expected


def test_what_cannot_batch_is_called_one_by_one_and_said(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    """A test in a workspace keeps its answer and judges interactive (its folder is held meanwhile), and
    the run says so before the tests run; the other tests batch; the rows are an interactive run's."""
    path = suite(tmp_path, 2, "{count: 1}")
    (path.parent / "ws").mkdir()
    (path.parent / "ws" / "README").write_text("a workspace\n", encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  - id: t1\n", "  - id: t1\n    workspace: {template: ws}\n"), encoding="utf-8")
    expected, sent = interactive(tmp_path, path, fake)
    capsys.readouterr()
    out = tmp_path / "batch"
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", "--batch",
                 "--batch-poll", "0.01"]) == 0
    assert _agentv_bytes(out) == expected and fake.sent == sent
    assert fake.chat_calls == 1 + 4  # t1: its answer, then rubric, llm-judge, child and aggregator
    captured = capsys.readouterr()
    assert "batch mode: 1 test(s) with a workspace call their judges and later trials one by one" in captured.err
    # The summary's cost table: what went one by one on lines of its own.
    assert re.search(r"judge\s+judge\s+interactive\s+4\s", captured.out), captured.out
    assert re.search(r"judge\s+judge\s+batch\s+5\s", captured.out)
    lines = cost_lines(out)
    assert lines[("judge", "judge", "interactive")] == 4 and lines[("judge", "judge", "batch")] == 4 + 1
    assert lines[("answers", "oa", "interactive")] == 1 and lines[("answers", "oa", "batch")] == 2


def test_a_judge_item_that_cannot_be_answered_is_not_scored(tmp_path: Path, fake: FakeBatchServer) -> None:
    """A judge item that failed in its batch and fails again interactively: the assertion is not scored,
    with the reason, and the test is not a pass."""
    path = suite(tmp_path, 1, "{count: 1}")
    fake.fail_when("says 0")
    fake.fail_chat_when("says 0")
    out = tmp_path / "batch"
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", "--batch",
                 "--batch-poll", "0.01"]) in (0, 1)
    rows = {r["test_id"]: r for r in parse(_agentv_bytes(out))}
    rubric = rows["t0"]["scores"][0]
    assert rubric["score"] is None and "the judge judge failed" in rubric["reasoning"]
    assert rows["t0"]["verdict"] != "pass" and rows["t0"]["not_scored"][0]["type"] == "llm-judge"  # AgentV types a rubrics row llm-judge


def _start(path: Path, out: Path, fake: FakeBatchServer, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, **fake.env(), "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(path), "-o", str(out), "--no-report",
                             "--batch", "--batch-poll", "0.05", "--retries", "0", *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def _wait_for(proc: subprocess.Popen[bytes], fake: FakeBatchServer, n: int) -> None:
    """Until the n-th batch exists and has been polled a few times."""
    deadline = time.monotonic() + 60
    polls: int | None = None
    while True:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the batch was never created"
        if fake.creations >= n:
            polls = fake.polls if polls is None else polls
            if fake.polls >= polls + 3:
                return
        time.sleep(0.02)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_while_polling_the_judges_then_resumed_sends_nothing_twice(tmp_path: Path, fake: FakeBatchServer,
                                                                           sig: signal.Signals) -> None:
    path = suite(tmp_path, 6)
    expected, sent = interactive(tmp_path, path, fake)
    fake.hold_from = 2  # the answers' batch ends; the first round of judges stays in progress
    out = tmp_path / "batch"
    proc = _start(path, out, fake)
    try:
        _wait_for(proc, fake, 2)
    finally:
        proc.send_signal(sig)
        proc.communicate(timeout=30)
    assert sum(1 for r in journal(out) if r.get("t") == "batch") == 2 and fake.chat_calls == 0
    fake.hold_from = None
    assert main(["run", str(path), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--resume"]) == 0
    assert fake.sent == sent  # the judges' batch was polled, not sent again
    assert fake.chat_calls == 0
    assert _agentv_bytes(out) == expected


def test_resumed_without_batch_still_collects_the_judges_batch(tmp_path: Path, fake: FakeBatchServer) -> None:
    """`--resume` without --batch after a kill while the judges' round polled: that batch is collected;
    only the calls no batch holds (the later trials and their judges) are made one by one."""
    path = suite(tmp_path, 4)
    expected, sent = interactive(tmp_path, path, fake)
    fake.hold_from = 2
    out = tmp_path / "batch"
    proc = _start(path, out, fake)
    try:
        _wait_for(proc, fake, 2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    judged = len(max(fake.batches.values(), key=lambda b: b.number).items)
    fake.hold_from = None
    assert main(["run", str(path), "-o", str(out), "--no-report", "--retries", "0", "--batch-poll", "0.01",
                 "--resume"]) == 0
    assert fake.sent == sent and fake.creations == 2
    assert judged == 3 * 4 + 1 and fake.chat_calls == sum(sent.values()) - 5 - judged
    assert _agentv_bytes(out) == expected


def test_dry_run_splits_judge_calls_that_cannot_batch(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    """--dry-run's batch column: every judge call batched at the discount but an agent judge's tool loop,
    which batch mode makes one by one, at the interactive price."""
    path = suite(tmp_path, 2, "{count: 1}")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('      - {type: rubrics, criteria: ["says 0"], required: true}\n',
                                 '      - {type: rubrics, criteria: ["says 0"], required: true}\n'
                                 '      - {type: agent-judge}\n'),
                    encoding="utf-8")
    assert main(["run", str(path), "--dry-run", "--json"]) == 0
    est = json.loads(capsys.readouterr().out)["plan"]["cost"]
    judge = next(line for line in est["lines"] if line["role"] == "judge")
    answers = next(line for line in est["lines"] if line["role"] == "answers")
    assert judge["calls"] == 2 * 4 + 1 + 1 and judge["batch_interactive_calls"] == 1
    assert answers["batch_interactive_calls"] == 0 and answers["batch_usd"] == pytest.approx(answers["usd"] / 2)
    assert judge["usd"] / 2 < judge["batch_usd"] < judge["usd"]
    assert main(["run", str(path), "--dry-run"]) == 0
    assert "in batch mode 1 of the 10 judge call(s) of judge are made one by one" in capsys.readouterr().out
