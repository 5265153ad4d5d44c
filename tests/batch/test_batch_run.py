"""Batch mode end to end: `evalspec run --batch` against the fake batch server on loopback.

The results of a batch run are compared with an interactive run of the same blueprint, file by file and
byte for byte with the timestamps masked; the fake server counts every request body it is sent, so a
request submitted twice shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evalspec.cli import main
from tests.fakebatch import FakeBatchServer
from tests.run_records import databases, records_of

MODELS = ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"]
STAMP = re.compile(rb"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:[.-]\d{1,6})?Z")


def blueprint(tmp_path: Path, n: int, models: list[str] = MODELS) -> Path:
    lines = ["title: batch test", "system: Answer briefly.", f"models: [{', '.join(models)}]", "---"]
    for i in range(n):
        lines += [f"- id: p{i:03d}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}",
                  "    - $icontains: answer"]
    # A conversation with a generated middle turn: batched phase by phase (its second request holds the
    # answer the first phase returned).
    lines += ["- id: convo", "  messages:", "    - user: first", "    - assistant: null", "    - user: second",
              "  should:", "    - $contains: second"]
    path = tmp_path / "b.weval.yml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def result_files(out: Path) -> dict[str, bytes]:
    """Every results file of a run (not the journal, lock, report or cost file), timestamps masked."""
    files = {}
    for f in sorted(out.rglob("*")):
        if (f.is_file() and ".journal" not in f.name and ".run.db" not in f.name
                and not f.name.endswith((".lock", ".html", ".prev.jsonl"))
                and not f.name.endswith("_cost.json")):
            name = STAMP.sub(b"<ts>", str(f.relative_to(out)).encode()).decode()
            files[name] = STAMP.sub(b"<ts>", f.read_bytes())
    return files


def cost_block(out: Path) -> dict:
    """What the run paid: the cost file beside the comparison file (the one thing a batch run changes)."""
    comparison = next(out.rglob("*_comparison.json"))
    return json.loads(comparison.with_name(comparison.name.replace("_comparison.json", "_cost.json")).read_bytes())


def journal(out: Path) -> list[dict]:
    """Every record of the run databases under `out`, as JSON."""
    return [r for path in databases(out) for r in records_of(path)]


def forget_batch_ids(out: Path) -> None:
    """As if killed the moment the provider created the batches: their ids never reached the database."""
    with contextlib.closing(sqlite3.connect(next(iter(databases(out))), isolation_level=None)) as db:
        db.execute("UPDATE batches SET batch_id = NULL")


def interactive(tmp_path: Path, bp: Path) -> dict[str, bytes]:
    out = tmp_path / "interactive"
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--retries", "0"]) == 0
    return result_files(out)


def batched(bp: Path, out: Path) -> None:
    """The run `interactive` makes, through the batch APIs (polled every 10 ms)."""
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0"]) == 0


def in_order(fake: FakeBatchServer) -> list:
    """The batches the fake server holds, in the order they were created."""
    return sorted(fake.batches.values(), key=lambda b: b.created_at)


def test_batch_run_equals_interactive_run(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    bp = blueprint(tmp_path, 30)
    expected = interactive(tmp_path, bp)
    assert fake.chat_calls == 64 and fake.creations == 0
    fake.forget_calls()
    capsys.readouterr()

    out = tmp_path / "batch"
    batched(bp, out)
    assert result_files(out) == expected  # byte for byte, timestamps aside: the dollars too
    assert "evalspecCost" not in json.loads(next(out.rglob("*_comparison.json")).read_bytes())
    inter, batch = cost_block(tmp_path / "interactive"), cost_block(out)
    # The same tokens per role and model, now split by the way they were sent.
    assert inter["input_tokens"] == batch["input_tokens"] and inter["output_tokens"] == batch["output_tokens"]
    assert {x["via"] for x in inter["lines"]} == {"interactive"}
    sent = {(x["model"], x["via"]): x["calls"] for x in batch["lines"]}
    # The conversation's second turn goes in a second phase, its request holding the first one's answer.
    assert sent == {("openai:gpt-4o-mini", "batch"): 32, ("anthropic:claude-3-5-haiku-latest", "batch"): 32}
    assert 0 < batch["usd"] < inter["usd"]  # the batch discount
    assert fake.creations == 4 and fake.uploads == 2  # a batch per provider and phase; Anthropic takes no file
    assert fake.chat_calls == 0
    assert not fake.duplicates()
    captured = capsys.readouterr()
    err = captured.err
    # The summary's cost table: batch and interactive calls of a model on their own lines.
    assert re.search(r"answers\s+openai:gpt-4o-mini\s+batch\s+32\s", captured.out)
    assert not re.search(r"answers\s+openai:gpt-4o-mini\s+interactive", captured.out)
    assert "batch: openai:gpt-4o-mini batch_" in err and "completed 31/31" in err and "ended 31/31" in err
    kinds = [r["t"] for r in journal(out)]
    assert kinds.count("batch_plan") == 4 and kinds.count("batch") == 4 and kinds.count("batch_end") == 4
    assert kinds.index("batch_plan") < kinds.index("batch") < kinds.index("batch_end") < kinds.index("gen")


def test_cells_the_response_cache_answers_are_not_batched(tmp_path: Path, fake: FakeBatchServer) -> None:
    bp = blueprint(tmp_path, 5)
    out = tmp_path / "out"
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--cache", "--retries", "0"]) == 0
    expected = result_files(out)
    assert fake.chat_calls == 14
    fake.forget_calls()
    again = tmp_path / "again"
    (again / ".cache").parent.mkdir()
    (out / ".cache").rename(again / ".cache")  # the cache alone: no journal to resume from
    assert main(["run", str(bp), "-o", str(again), "--no-report", "--cache", "--batch", "--batch-poll", "0.01",
                 "--retries", "0"]) == 0
    assert fake.creations == 0 and fake.uploads == 0 and fake.chat_calls == 0  # all from the cache
    assert result_files(again).keys() == expected.keys()


def test_failed_and_expired_items_go_through_the_interactive_path(tmp_path: Path, fake: FakeBatchServer,
                                                                   capsys) -> None:
    bp = blueprint(tmp_path, 12)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.fail_when("question 3")
    fake.expire_next = 1  # the OpenAI batch (created first) expires with half its requests done
    out = tmp_path / "batch"
    batched(bp, out)
    assert result_files(out) == expected
    # OpenAI: 7 expired (the conversation's first turn among them) + question 3 failed, then the
    # conversation's second turn (its first answer came one by one); Anthropic: question 3 errored.
    assert fake.chat_calls == 8 + 1 + 1
    twice = fake.duplicates()
    assert len(twice) == 9 and set(twice.values()) == {2}  # exactly the unanswered ones, once more each
    err = capsys.readouterr().err
    assert "ended expired: 8 of 13 request(s) not answered" in err
    assert "ended ended: 1 of 13 request(s) not answered (errored: api_error: Internal server error)" in err


def test_polls_that_fail_are_retried_then_given_up(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    bp = blueprint(tmp_path, 4, models=["openai:gpt-4o-mini"])
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.failing_polls = 5  # a passing outage: the batch is polled again, nothing is sent twice
    args = ["run", str(bp), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0"]
    assert main([*args, "-o", str(tmp_path / "b1")]) == 0
    assert result_files(tmp_path / "b1") == expected and fake.chat_calls == 0 and not fake.duplicates()
    fake.failing_polls = 10**6  # down for good: after 10 failed rounds the requests go one by one
    assert main([*args, "-o", str(tmp_path / "b2")]) == 0
    assert result_files(tmp_path / "b2") == expected and fake.chat_calls == 4 + 2  # the prompts, the conversation
    assert "cannot be read (openai: HTTP 503: the batch service is down); its requests are sent one by one" \
        in capsys.readouterr().err


def _cost(out: str) -> dict:
    finished = [json.loads(line) for line in out.splitlines() if '"run_finished"' in line]
    return finished[-1]["summary"]["cost"]


def test_batch_answers_are_priced_at_the_batch_price_and_capped(tmp_path: Path, fake: FakeBatchServer,
                                                                capsys) -> None:
    bp = blueprint(tmp_path, 10, models=["openai:gpt-4o-mini"])
    args = ["run", str(bp), "--no-report", "--retries", "0", "--json"]
    capsys.readouterr()
    assert main([*args, "-o", str(tmp_path / "i")]) == 0
    inter = _cost(capsys.readouterr().out)
    assert main([*args, "-o", str(tmp_path / "b"), "--batch", "--batch-poll", "0.01"]) == 0
    batch = _cost(capsys.readouterr().out)
    assert inter["input_tokens"] == batch["input_tokens"] and inter["output_tokens"] == batch["output_tokens"]
    # gpt-4o-mini's batch_discount is 0.5 in the shipped table; every call is batched, the conversation too.
    assert batch["usd"] == pytest.approx(inter["usd"] / 2)
    # A cost cap that lets only some cells start: the refused ones are not sent in the batch either.
    fake.batches.clear()
    capsys.readouterr()
    code = main([*args, "-o", str(tmp_path / "c"), "--batch", "--batch-poll", "0.01", "--max-cost", "0.0028"])
    out = capsys.readouterr().out
    assert code != 0
    per_cell = float(re.search(r"this cell ~\$([0-9.]+)", out).group(1))  # the estimate (outputs at max_tokens)
    admitted = int(0.0028 // per_cell)
    assert 0 < admitted < 10
    assert sum(len(b.items) for b in fake.batches.values()) == admitted  # the refused cells are not batched
    assert _cost(out)["not_run"] == 11 - admitted  # each refused cell counted once


def test_batches_are_split_under_the_limits(tmp_path: Path, fake: FakeBatchServer) -> None:
    bp = blueprint(tmp_path, 20, models=["openai:gpt-4o-mini"])
    out = tmp_path / "batch"
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01",
                 "--batch-size", "7"]) == 0
    sizes = sorted(len(b.items) for b in fake.batches.values())
    assert sizes == [1, 7, 7, 7]  # 21 first turns in three; the conversation's second turn in a phase of its own
    one = len(next(iter(fake.files.values())).splitlines()[0]) + 1
    fake.batches.clear()
    fake.files.clear()
    fake.sent.clear()
    out2 = tmp_path / "batch2"
    assert main(["run", str(bp), "-o", str(out2), "--no-report", "--batch", "--batch-poll", "0.01",
                 "--batch-max-mb", str(one * 5.5 / 2**20)]) == 0
    assert len(fake.batches) == 5 + 1 and all(len(b.items) <= 5 for b in fake.batches.values())
    assert sum(len(b.items) for b in fake.batches.values()) == 21 + 1
    assert not fake.duplicates()
    assert result_files(out) == result_files(out2)


def _start(bp: Path, out: Path, fake: FakeBatchServer, *extra: str,
           sigint: Any = signal.default_int_handler) -> subprocess.Popen[bytes]:
    """The batch run as a process; `sigint=signal.SIG_IGN` starts it as a script's background job is (CI)."""
    env = {**os.environ, **fake.env(), "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(out), "--no-report",
                             "--batch", "--batch-poll", "0.05", "--retries", "0", *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))


def _wait_for_batches(proc: subprocess.Popen[bytes], out: Path, fake: FakeBatchServer, n: int) -> None:
    deadline = time.monotonic() + 60
    while sum(1 for r in journal(out) if r.get("t") == "batch") < n or fake.polls < n + 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the batches were never created"
        time.sleep(0.02)


@pytest.mark.parametrize(("sig", "sigint"), [(signal.SIGKILL, signal.default_int_handler),
                                             (signal.SIGTERM, signal.default_int_handler),
                                             (signal.SIGTERM, signal.SIG_IGN)],
                         ids=["SIGKILL", "SIGTERM", "SIGTERM-with-SIGINT-ignored"])
def test_killed_while_polling_then_resumed_sends_nothing_twice(tmp_path: Path, fake: FakeBatchServer, capsys,
                                                              sig: signal.Signals, sigint: Any) -> None:
    bp = blueprint(tmp_path, 25)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.hold = True  # every batch stays in progress: the run is polling when it is killed
    out = tmp_path / "batch"
    proc = _start(bp, out, fake, "--batch-size", "10", sigint=sigint)
    try:
        _wait_for_batches(proc, out, fake, 6)
    finally:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    assert fake.creations == 6 and fake.chat_calls == 0 and fake.cancels == 0
    if sig == signal.SIGTERM:
        assert proc.returncode == 130
        text = err.decode()
        assert "6 provider batch(es) left running" in text and "--resume" in text.splitlines()[-1], text[-3000:]
    fake.hold = False
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--batch-size", "10", "--resume"]) == 0
    assert fake.creations == 6 + 2  # polled, not submitted again; then the conversation's second turns
    assert not fake.duplicates()
    assert fake.chat_calls == 0
    assert result_files(out) == expected
    assert "resuming 6 batch(es) from the journal" in capsys.readouterr().err


def test_resumed_without_batch_still_collects_the_batches(tmp_path: Path, fake: FakeBatchServer) -> None:
    """`evalspec run x --resume` (without --batch) after a batch run was killed: the batches the journal
    names are collected, not asked again one by one."""
    bp = blueprint(tmp_path, 8)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.hold = True
    out = tmp_path / "batch"
    proc = _start(bp, out, fake)
    try:
        _wait_for_batches(proc, out, fake, 2)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    fake.hold = False
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--retries", "0", "--resume"]) == 0
    assert fake.creations == 2 and not fake.duplicates()
    assert fake.chat_calls == 2  # the conversation's second turns: not batched without --batch
    assert result_files(out) == expected


def test_a_batch_created_just_before_the_kill_is_found_not_sent_again(tmp_path: Path, fake: FakeBatchServer) -> None:
    """Killed after the provider created the batches but before their ids reached the journal: the
    resumed run finds them (OpenAI by the key in their metadata, Anthropic by the list) and polls them."""
    bp = blueprint(tmp_path, 10)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.hold = True
    out = tmp_path / "batch"
    proc = _start(bp, out, fake)
    try:
        _wait_for_batches(proc, out, fake, 2)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    forget_batch_ids(out)  # as if killed the moment the creations returned
    fake.hold = False
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--resume"]) == 0
    assert fake.creations == 2 + 2 and not fake.duplicates()  # found, not sent again; then the second turns
    assert result_files(out) == expected


@pytest.mark.parametrize("journaled", [True, False])
def test_gemini_batch_killed_while_polling_then_resumed_equals_interactive(tmp_path: Path, fake: FakeBatchServer,
                                                                          capsys, journaled: bool) -> None:
    """Gemini's Batch API end to end: the JSONL file through the resumable upload, the batch polled, the
    run SIGKILLed while polling and resumed (with the batch's name in the journal, or without it, as if
    killed the moment the creation returned: found again by its displayName), nothing sent twice, and
    the results byte for byte an interactive run's."""
    bp = blueprint(tmp_path, 12, models=["google:gemini-2.5-flash"])
    expected = interactive(tmp_path, bp)
    assert fake.chat_calls == 14 and fake.creations == 0
    fake.forget_calls()
    fake.hold = True
    out = tmp_path / "batch"
    proc = _start(bp, out, fake)
    try:
        _wait_for_batches(proc, out, fake, 1)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert fake.creations == 1 and fake.uploads == 1 and fake.chat_calls == 0
    if not journaled:
        forget_batch_ids(out)
    fake.hold = False
    capsys.readouterr()
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--resume"]) == 0
    assert fake.creations == 2 and fake.uploads == 2 and not fake.duplicates()  # then the conversation's 2nd turn
    assert fake.chat_calls == 0
    assert result_files(out) == expected
    err = capsys.readouterr().err
    if not journaled:
        assert "was created before the run stopped; polling it instead of sending its requests again" in err
    assert "ended 13/13" not in err and "succeeded 13/13" in err
    paid = {(x["model"], x["via"]): x["calls"] for x in cost_block(out)["lines"]}
    assert paid == {("google:gemini-2.5-flash", "batch"): 14}


def test_interrupt_can_cancel_the_batches(tmp_path: Path, fake: FakeBatchServer) -> None:
    bp = blueprint(tmp_path, 10)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    fake.hold = True
    out = tmp_path / "batch"
    proc = _start(bp, out, fake, "--cancel-batches-on-interrupt")
    try:
        _wait_for_batches(proc, out, fake, 2)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert fake.cancels == 2 and {b.state for b in fake.batches.values()} == {"cancelling", "canceling"}
    assert err.decode().count("evalspec run: cancel batch") == 2
    assert sum(1 for r in journal(out) if r.get("t") == "batch_cancel") == 2
    fake.hold = False
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01", "--retries", "0",
                 "--resume"]) == 0
    # The cancelled batches finished half their requests; the other half is asked one by one.
    assert fake.creations == 2 and fake.chat_calls == 5 + 5 + 4
    assert result_files(out) == expected


def test_judges_batch_in_a_second_phase(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    lines = ["title: judged", "models: [openai:gpt-4o-mini]",
             "evaluationConfig:", "  llm-coverage:", "    judges:",
             "      - {id: a, model: 'openai:gpt-4o-mini', approach: standard}",
             "      - {id: b, model: 'anthropic:claude-3-5-haiku-latest', approach: standard}", "---"]
    for i in range(8):
        lines += [f"- id: p{i}", f"  prompt: question {i}", "  should:", "    - mentions the word question",
                  f"    - $contains: question {i}", "  should_not:", "    - mentions the word banana"]
    bp = tmp_path / "j.weval.yml"
    bp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = interactive(tmp_path, bp)
    assert fake.chat_calls == 8 + 8 * 2 * 2
    fake.forget_calls()
    out = tmp_path / "batch"
    batched(bp, out)
    assert result_files(out) == expected
    assert fake.chat_calls == 0 and not fake.duplicates()
    # Answers first (one OpenAI batch), then the judges' calls (one batch per judge's provider).
    assert fake.creations == 3
    sizes = sorted((b.api, len(b.items)) for b in fake.batches.values())
    assert sizes == [("anthropic", 16), ("openai", 8), ("openai", 16)]
    coverage = json.loads(next(out.rglob("*_comparison.json")).read_bytes())["evaluationResults"]["llmCoverageScores"]
    assert coverage["p3"]["openai:gpt-4o-mini[temp:0]"]["avgCoverageExtent"] == 1
    assert "batch mode: 32 answer(s) from 2 batch(es)" in capsys.readouterr().err


def test_conversations_batch_phase_by_phase_then_their_judges(tmp_path: Path, fake: FakeBatchServer) -> None:
    """`assistant: null` turns: each phase's requests hold the answers the phase before returned, then the
    judges read the whole exchange; nothing goes one by one, and the results are an interactive run's."""
    lines = ["title: talks", "models: [openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest]",
             "evaluationConfig:", "  llm-coverage:", "    judges:",
             "      - {id: a, model: 'openai:gpt-4o-mini', approach: standard}", "---"]
    for i in range(3):
        lines += [f"- id: talk{i}", "  messages:", f"    - user: open {i}", "    - assistant: null",
                  f"    - user: middle {i}", "    - assistant: null", f"    - user: close {i}",
                  "  should:", f"    - mentions close {i}"]
    lines += ["- id: plain", "  prompt: just one", "  should:", "    - mentions one"]
    bp = tmp_path / "talks.weval.yml"
    bp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = interactive(tmp_path, bp)
    assert fake.chat_calls == 2 * (3 * 3 + 1) + 2 * 4  # every turn of every cell, then a judge call each
    fake.forget_calls()
    out = tmp_path / "batch"
    batched(bp, out)
    assert result_files(out) == expected
    assert fake.chat_calls == 0 and not fake.duplicates()
    # Three answer phases (a batch per provider each: 4, 3, 3 requests), then the judges' (8 calls).
    sizes = [(b.api, len(b.items)) for b in in_order(fake)]
    assert sizes == [("openai", 4), ("anthropic", 4), ("openai", 3), ("anthropic", 3), ("openai", 3),
                     ("anthropic", 3), ("openai", 8)]
    # The third phase's request for talk1 carries the two answers the earlier phases returned.
    third = dict(in_order(fake)[4].items)
    talk1 = next(body for body in third.values() if "close 1" in json.dumps(body))
    assistant = [m["content"] for m in talk1["messages"] if m["role"] == "assistant"]
    assert assistant == ["Answer (gpt-4o-mini) to: open 1", "Answer (gpt-4o-mini) to: middle 1"]


def test_models_without_a_batch_api_run_interactively(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    bp = blueprint(tmp_path, 3, models=["openai:gpt-4o-mini", "echo"])
    out = tmp_path / "batch"
    assert main(["run", str(bp), "-o", str(out), "--no-report", "--batch", "--batch-poll", "0.01"]) == 0
    assert fake.creations == 2  # the answers, then the conversation's second turn
    assert "echo has no batch API evalspec can drive" in capsys.readouterr().err


AGENTV_TARGETS = """targets:
  - name: oa
    provider: openai
    model: gpt-4o-mini
    api_key: ${{ OPENAI_API_KEY }}
    endpoint: ${{ OPENAI_BASE_URL }}
  - name: claude
    provider: anthropic
    model: claude-3-5-haiku-latest
    api_key: ${{ ANTHROPIC_API_KEY }}
    batch: true
"""


def _agentv_rows(out: Path) -> dict[tuple[str, str], dict]:
    """AgentV result rows without what differs between any two runs (times, durations)."""
    rows = {}
    for f in out.glob("agentv/*/*.jsonl"):
        if f.name.endswith(".journal.jsonl"):
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            # Times differ between any two runs (a row's cost_usd is at the interactive price either way).
            for key in ("timestamp", "start_time", "end_time", "duration_ms", "latency_ms"):
                row.pop(key, None)
            rows[(row["test_id"], row["target"])] = row
    return rows


def _targets_suite(tmp_path: Path, n: int) -> Path:
    """.agentv/targets.yaml (AGENTV_TARGETS) and a suite of n tests on its targets oa and claude, each a
    required `contains` of its own question."""
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(AGENTV_TARGETS, encoding="utf-8")
    tests = "".join(f"  - id: t{i}\n    input: question {i}\n    criteria: c\n    assert:\n"
                    f"      - {{type: contains, value: 'question {i}', required: true}}\n" for i in range(n))
    suite = tmp_path / "evals" / "s.eval.yaml"
    suite.parent.mkdir()
    suite.write_text(f"name: s\ndescription: d\nexecution:\n  targets: [oa, claude]\ntests:\n{tests}", encoding="utf-8")
    return suite


def test_agentv_targets_batch(tmp_path: Path, fake: FakeBatchServer, capsys) -> None:
    """`batch: true` on a target (claude) batches its tests; --batch-model adds another (oa)."""
    suite = _targets_suite(tmp_path, 6)
    inter = tmp_path / "interactive"
    targets = tmp_path / ".agentv" / "targets.yaml"
    targets.write_text(AGENTV_TARGETS.replace("    batch: true\n", ""), encoding="utf-8")
    assert main(["run", str(suite), "-o", str(inter), "--no-report", "--retries", "0"]) == 0
    assert fake.chat_calls == 12 and fake.creations == 0
    targets.write_text(AGENTV_TARGETS, encoding="utf-8")
    fake.forget_calls()
    out = tmp_path / "batch"
    assert main(["run", str(suite), "-o", str(out), "--no-report", "--retries", "0", "--batch-poll", "0.01"]) == 0
    assert fake.creations == 1 and [b.api for b in fake.batches.values()] == ["anthropic"]
    assert fake.chat_calls == 6  # oa is not batched without --batch / --batch-model
    out2 = tmp_path / "batch2"
    fake.forget_calls()
    assert main(["run", str(suite), "-o", str(out2), "--no-report", "--retries", "0", "--batch-poll", "0.01",
                 "--batch-model", "oa"]) == 0
    assert fake.chat_calls == 0 and fake.creations == 3 and not fake.duplicates()
    expected = _agentv_rows(inter)
    assert len(expected) == 12 and all(r["score"] == 1 for r in expected.values())
    assert _agentv_rows(out) == expected and _agentv_rows(out2) == expected
    # Byte for byte, with the times (timestamps, durations) masked: the results file of a batch run is an
    # interactive run's; what each paid differs, in the cost file beside it.
    assert _agentv_bytes(out2) == _agentv_bytes(inter)
    paid = {(x["model"], x["via"]): x["calls"] for x in json.loads(next(out2.rglob("*_cost.json")).read_bytes())["lines"]}
    assert paid == {("oa", "batch"): 6, ("claude", "batch"): 6}


def test_agentv_gemini_target_batches(tmp_path: Path, fake: FakeBatchServer) -> None:
    """A `gemini` target with `batch: true` goes through the Gemini Batch API; its rows are an
    interactive run's byte for byte, times aside."""
    (tmp_path / ".agentv").mkdir()
    targets = tmp_path / ".agentv" / "targets.yaml"
    gemini = ("targets:\n  - name: gem\n    provider: gemini\n    model: gemini-2.5-flash\n"
              "    api_key: ${{ GOOGLE_API_KEY }}\n    endpoint: ${{ GOOGLE_BASE_URL }}\n")
    tests = "".join(f"  - id: t{i}\n    input: question {i}\n    criteria: c\n    assert:\n"
                    f"      - {{type: contains, value: 'question {i}', required: true}}\n" for i in range(5))
    suite = tmp_path / "evals" / "s.eval.yaml"
    suite.parent.mkdir()
    suite.write_text(f"name: s\ndescription: d\nexecution:\n  targets: [gem]\ntests:\n{tests}", encoding="utf-8")
    targets.write_text(gemini, encoding="utf-8")
    inter = tmp_path / "interactive"
    assert main(["run", str(suite), "-o", str(inter), "--no-report", "--retries", "0"]) == 0
    assert fake.chat_calls == 5 and fake.creations == 0
    fake.forget_calls()
    targets.write_text(gemini + "    batch: true\n", encoding="utf-8")
    out = tmp_path / "batch"
    assert main(["run", str(suite), "-o", str(out), "--no-report", "--retries", "0", "--batch-poll", "0.01"]) == 0
    assert fake.chat_calls == 0 and [b.api for b in fake.batches.values()] == ["google"] and not fake.duplicates()
    assert all(r["score"] == 1 for r in _agentv_rows(out).values())
    assert _agentv_bytes(out) == _agentv_bytes(inter)


DURATION = re.compile(rb'"duration_ms":[0-9.e-]+')


def _agentv_bytes(out: Path) -> bytes:
    (results,) = [f for f in out.glob("agentv/*/*.jsonl") if not f.name.endswith(".journal.jsonl")]
    return DURATION.sub(b'"duration_ms":<ms>', STAMP.sub(b"<ts>", results.read_bytes()))


def _ctrl_c_live() -> None:
    """In the child: SIGINT as a terminal delivers it. A shell starts background jobs with SIGINT ignored
    (CI may run the suite that way), and Python keeps an ignored SIGINT ignored, so Ctrl-C would never
    reach the run."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("answer, cancels, said", [(b"c\n", 2, b"collects what the cancelled batches finished"),
                                                   (b"\n", 0, b"2 provider batch(es) left running")])
def test_ctrl_c_on_a_terminal_asks_what_to_do_with_the_batches(tmp_path: Path, fake: FakeBatchServer,
                                                               answer: bytes, cancels: int, said: bytes) -> None:
    import pty
    import select

    bp = blueprint(tmp_path, 6)
    fake.hold = True
    out = tmp_path / "batch"
    master, slave = pty.openpty()
    env = {**os.environ, **fake.env(), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "evalspec.cli", "run", str(bp), "-o", str(out), "--no-report",
                             "--batch", "--batch-poll", "0.05"], env=env, stdin=slave, stderr=slave,
                            stdout=subprocess.DEVNULL, preexec_fn=_ctrl_c_live)
    os.close(slave)
    seen = b""

    def read_until(text: bytes, seconds: float = 30) -> None:
        nonlocal seen
        deadline = time.monotonic() + seconds
        while text not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                with contextlib.suppress(OSError):
                    seen += os.read(master, 4096)
    try:
        _wait_for_batches(proc, out, fake, 2)
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        read_until(b"Cancel them (c) or leave them running for --resume (Enter)?")
        os.write(master, answer)
        read_until(said)
        assert proc.wait(30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert fake.cancels == cancels


def key_point_blueprint(tmp_path: Path, n: int = 6) -> Path:
    """Prompts with an `ideal` and no points (key points extracted, then judged) beside prompts with
    written text points; the first key-point model (judge a's) is also the model under test."""
    lines = ["title: key points", "models: [openai:gpt-4o-mini]",
             "evaluationConfig:", "  llm-coverage:", "    judges:",
             "      - {id: a, model: 'openai:gpt-4o-mini', approach: standard}",
             "      - {id: b, model: 'anthropic:claude-3-5-haiku-latest', approach: standard}", "---"]
    for i in range(n):
        lines += [f"- id: k{i}", f"  prompt: question {i} in two sentences",
                  f"  ideal: \"Answer {i} is short. It says sentences.\""]
    for i in range(2):
        lines += [f"- id: w{i}", f"  prompt: written {i}", "  should:", "    - mentions the word written"]
    bp = tmp_path / "kp.weval.yml"
    bp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return bp


def test_key_points_are_extracted_with_the_answers_and_judged_with_the_judges(tmp_path: Path,
                                                                             fake: FakeBatchServer) -> None:
    bp = key_point_blueprint(tmp_path)
    expected = interactive(tmp_path, bp)
    # 8 answers, 6 extractions (judge a's model), then 2 judges × (6 × 3 key points + 2 written points).
    assert fake.chat_calls == 8 + 6 + 2 * (6 * 3 + 2)
    coverage = json.loads(next((tmp_path / "interactive").rglob("*_comparison.json")).read_bytes())
    assert coverage["extractedKeyPoints"]["k1"] == ["Answer 1 is short", "It says sentences", "answers concisely"]
    fake.forget_calls()
    out = tmp_path / "batch"
    batched(bp, out)
    assert result_files(out) == expected
    assert fake.chat_calls == 0 and not fake.duplicates()
    # The answers and the extractions in one OpenAI batch (the same model); then every judge call, the
    # extracted points' too, a batch per judge's provider.
    sizes = [(b.api, len(b.items)) for b in in_order(fake)]
    assert sizes == [("openai", 8 + 6), ("openai", 20), ("anthropic", 20)]
    paid = {(x["role"], x["model"], x["via"]): x["calls"] for x in cost_block(out)["lines"]}
    assert paid[("key points", "openai:gpt-4o-mini", "batch")] == 6
    assert not any(via == "interactive" for _, _, via in paid)
    kinds = [r["t"] for r in journal(out)]
    assert kinds.count("kp") == 6 and kinds.index("kp") < kinds.index("batch_plan", kinds.index("batch_end"))


@pytest.mark.parametrize("phase, batch", [("extraction", True), ("judges", True), ("extraction", False)])
def test_killed_while_key_points_are_polled_then_resumed_sends_nothing_twice(tmp_path: Path, fake: FakeBatchServer,
                                                                            phase: str, batch: bool) -> None:
    """SIGKILL while the batch holding the key-point extractions polls (the first phase), or while the
    judges of the extracted points poll (the last): `--resume` polls the same batches, sends no request
    a second time, and the results are an interactive run's byte for byte. Resumed without `--batch`, the
    journaled batch is still collected (the judges, never batched by that run, then go one by one)."""
    bp = key_point_blueprint(tmp_path)
    expected = interactive(tmp_path, bp)
    fake.forget_calls()
    if phase == "extraction":
        fake.hold = True
        created = 1
    else:
        fake.hold_from = 2  # the first phase ends; the judges' batches stay in progress
        created = 3
    out = tmp_path / "batch"
    proc = _start(bp, out, fake)
    try:
        _wait_for_batches(proc, out, fake, created)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert fake.creations == created and fake.chat_calls == 0
    kps = sum(1 for r in journal(out) if r.get("t") == "kp")
    assert kps == (0 if phase == "extraction" else 6)  # journaled before the judges' batches were planned
    fake.hold = False
    fake.hold_from = None
    flags = ["--batch"] if batch else []
    assert main(["run", str(bp), "-o", str(out), "--no-report", *flags, "--batch-poll", "0.01", "--retries", "0",
                 "--resume"]) == 0
    if batch:
        assert fake.creations == 3 and fake.chat_calls == 0
    else:  # the first phase's batch collected; the judges (2 × (6 × 3 + 2)) one by one
        assert fake.creations == 1 and fake.chat_calls == 2 * (6 * 3 + 2)
    assert not fake.duplicates()
    assert result_files(out) == expected
    assert sum(1 for r in journal(out) if r.get("t") == "kp") == 6


def test_an_agentv_cell_its_batch_answered_makes_no_request_again(tmp_path: Path, fake: FakeBatchServer,
                                                                  monkeypatch) -> None:
    """A test's request is made once for its batch: the cell that takes the batch's answer does not
    build it again (AgentvGenerate.answer), and its row is the same."""
    from evalspec.run.generate.answers import AgentvGenerate

    made: list[str] = []
    request = AgentvGenerate.request

    def counted(self: Any, task: Any, model_name: str) -> Any:
        made.append(task.cell.item)
        return request(self, task, model_name)

    monkeypatch.setattr(AgentvGenerate, "request", counted)
    suite = _targets_suite(tmp_path, 4)
    out = tmp_path / "batch"
    assert main(["run", str(suite), "-o", str(out), "--no-report", "--retries", "0", "--batch-poll", "0.01",
                 "--batch-model", "oa"]) == 0
    assert fake.chat_calls == 0 and fake.creations == 2
    assert sorted(made) == sorted([f"t{i}" for i in range(4)] * 2)  # the batch phase's, one a cell
    rows = _agentv_rows(out)
    assert len(rows) == 8 and all(r["score"] == 1 for r in rows.values())
