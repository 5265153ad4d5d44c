"""code-judge: real Python scripts as subprocesses — good answers, clamping, crashes, hangs, garbage,
non-zero exits, missing scripts, shell strings, the concurrency bound, cancellation — and whole runs."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evalspec.run.score.code_judge import (
    judge_command,
    parse_answer,
    run_code_judge,
    shell_argv,
    timeout_of,
)
from evalspec.script_process import STDERR_TAIL

from .conftest import AGENTV_TARGETS, SmartFake, env_for, options, run_events, write

JUDGES = Path(__file__).parent / "judges"
PY = sys.executable


def _run(argv: list[str], payload: Any = None, **kw: Any) -> Any:
    kw.setdefault("cwd", JUDGES)
    return asyncio.run(run_code_judge(argv, payload if payload is not None else {"answer": "x"}, **kw))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_good_answer_is_read_and_the_payload_reaches_the_script() -> None:
    got = _run([PY, "keyword.py"], {"answer": "alpha and gamma", "config": {"keywords": ["alpha", "beta", "gamma"]},
                                    "question": "q", "criteria": "c", "reference_answer": "r", "token_usage": None,
                                    "cost_usd": None, "duration_ms": 5, "trace": [], "expected_output": [],
                                    "output": [], "input": []})
    assert got.error is None
    assert got.score == pytest.approx(2 / 3)
    assert got.hits == ("alpha", "gamma") and got.misses == ("beta",)
    assert got.reasoning == "2/3 keywords"
    assert got.details["cwd"] == str(JUDGES)
    assert got.stderr_tail == "judging…"


@pytest.mark.parametrize(("raw", "clamped"), [("3.5", 1.0), ("-2", 0.0), ("0.25", 0.25)])
def test_scores_are_clamped(raw: str, clamped: float) -> None:
    got = _run([PY, "fixed.py", raw])
    assert got.error is None and got.score == clamped


def test_a_crash_scores_zero_with_the_reason_and_the_stderr_tail() -> None:
    got = _run([PY, "crash.py"])
    assert got.score == 0.0
    assert "exited with code 1" in got.error
    assert "RuntimeError: the judge fell over: boom" in got.error
    assert got.misses and "boom" in got.misses[0]


def test_garbage_output_scores_zero() -> None:
    got = _run([PY, "garbage.py"])
    assert got.score == 0.0
    assert "not a JSON object" in got.error and "<html>" in got.error
    assert "warning: something odd" in got.error


def test_a_non_zero_exit_fails_even_with_a_valid_answer() -> None:
    got = _run([PY, "exit3.py"])
    assert got.score == 0.0 and "exited with code 3" in got.error and "exit three" in got.error


def test_a_hanging_judge_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    got = _run([PY, "hang.py", str(pids)], timeout=1.0)
    assert got.score == 0.0 and "timed out after 1 s" in got.error
    grandchild = int(pids.read_text().split()[0])
    for _ in range(100):
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    assert not _alive(grandchild), "the judge's own child outlived the timeout"


def test_cancelling_the_run_kills_the_judge(tmp_path: Path) -> None:
    pids = tmp_path / "pids"

    async def go() -> None:
        task = asyncio.create_task(run_code_judge([PY, "hang.py", str(pids)], {}, cwd=JUDGES, timeout=60))
        for _ in range(200):
            await asyncio.sleep(0.05)
            if pids.exists() and pids.read_text().strip():
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    grandchild = int(pids.read_text().split()[0])
    for _ in range(100):
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_a_missing_script_or_program_is_not_scored() -> None:
    got = _run([PY, "nowhere.py"])
    assert got.score is None and "nowhere.py does not exist" in got.error
    got = _run(["no-such-program-xyz", "a.py"])
    assert got.score is None and "not installed" in got.error


def test_a_string_command_runs_through_the_shell() -> None:
    assert shell_argv("bun run x.ts", "linux") == ["/bin/sh", "-c", "bun run x.ts"]
    assert shell_argv("bun run x.ts", "win32")[-2:] == ["/c", "bun run x.ts"]
    argv = judge_command({"command": ["ignored"], "shell": f"{PY} fixed.py 0.5 | cat"}, "linux")
    got = _run(argv)
    assert got.error is None and got.score == 0.5  # the pipe worked: a shell ran it


def test_at_most_the_bound_run_at_once(tmp_path: Path) -> None:
    async def go() -> None:
        limit = asyncio.Semaphore(2)
        outs = await asyncio.gather(*(run_code_judge([PY, "gate.py", str(tmp_path)], {}, cwd=JUDGES, limit=limit)
                                      for _ in range(5)))
        assert all(o.score == 1.0 for o in outs)

    asyncio.run(go())
    seen = [int(p.read_text()) for p in tmp_path.glob("seen-*")]
    assert len(seen) == 5
    assert max(seen) == 2  # two ran together, never three


def test_timeouts_and_answers_parsed() -> None:
    assert timeout_of({"timeout_ms": 2500}) == 2.5
    assert timeout_of({"timeout_seconds": 7}) == 7.0
    assert timeout_of({}, 9.0) == 9.0
    assert parse_answer(b'log line\n{"score": 0.4}\n').score == 0.4  # a log line before the answer
    assert "no numeric 'score'" in parse_answer(b'{"score": "high"}').error
    assert parse_answer(b"").error.startswith("the code judge printed nothing")
    long = parse_answer(b"x", "e" * (STDERR_TAIL + 10))
    assert long.score == 0.0


# --- whole runs ---------------------------------------------------------------------------------------

def _suite(tmp_path: Path, body: str) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    for script in JUDGES.glob("*.py"):
        write(tmp_path / "evals" / "judges" / script.name, script.read_text())
    return write(tmp_path / "evals" / "s.eval.yaml", body)


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    return {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}


def test_code_judges_in_a_run(tmp_path: Path, smart: SmartFake) -> None:
    bp = _suite(tmp_path, f"""name: judged
description: Code judges.
execution:
  target: default
tests:
  - id: keywords
    input: "alpha beta"
    criteria: mentions the words
    expected_output: "alpha beta gamma"
    assert:
      - name: kw
        type: code-judge
        command: [{PY}, judges/keyword.py]
        keywords: [alpha, beta, gamma, delta]
  - id: crash-gate
    input: "hello"
    criteria: c
    assert:
      - {{type: contains, value: hello}}
      - {{name: crashy, type: code-judge, command: [{PY}, judges/crash.py], required: true}}
  - id: hang
    input: "hello"
    criteria: c
    assert:
      - {{name: slow, type: code-judge, command: [{PY}, judges/hang.py, pids], timeout_ms: 500}}
  - id: negated
    input: "hello"
    criteria: c
    assert:
      - {{type: code-judge, command: [{PY}, judges/fixed.py, "0.25"], negate: true}}
  - id: missing
    input: "hello"
    criteria: c
    assert:
      - {{type: contains, value: hello}}
      - {{name: gone, type: code-judge, command: [{PY}, judges/gone.py]}}
""")
    run_events(bp, options(tmp_path, env_for(smart, PATH=os.environ.get("PATH", "/usr/bin:/bin"))))
    rows = _rows(tmp_path / "out")
    kw = rows["keywords"]
    assert kw["score"] == 0.5 and kw["verdict"] == "fail"
    entry = kw["scores"][0]
    assert (entry["name"], entry["type"], entry["hits"], entry["misses"]) == ("kw", "code-judge", ["alpha", "beta"],
                                                                              ["gamma", "delta"])
    details = entry["details"]
    for key in ("question", "criteria", "expected_output", "reference_answer", "answer", "output", "input", "trace",
                "token_usage", "cost_usd", "duration_ms", "config"):
        assert key in details["keys"], key
    assert details["question"] == "alpha beta" and details["reference_answer"] == "alpha beta gamma"
    assert details["token_usage"] == {"input": 11, "output": 7, "total": 18}
    assert details["cwd"] == str(tmp_path / "evals")
    assert details["trace"] == []
    crash = rows["crash-gate"]
    assert crash["score"] == 0.0 and crash["verdict"] == "fail"  # the required judge crashed: the gate fails
    assert "the judge fell over" in crash["scores"][1]["reasoning"]
    hang = rows["hang"]
    assert hang["score"] == 0.0 and "timed out after 0.5 s" in hang["scores"][0]["reasoning"]
    assert rows["negated"]["score"] == 0.75
    missing = rows["missing"]
    assert missing["scores"][1]["score"] is None
    assert "gone.py does not exist" in missing["scores"][1]["reasoning"]
    assert "not_supported" not in missing


def test_a_string_command_warns_when_the_run_starts(tmp_path: Path, smart: SmartFake) -> None:
    bp = _suite(tmp_path, f"""name: shelled
description: d
execution:
  target: default
tests:
  - id: t
    input: hi
    criteria: c
    assert:
      - name: piped
        type: code-judge
        command: "{PY} judges/fixed.py 0.9 | cat"
""")
    events = run_events(bp, options(tmp_path, env_for(smart)))
    notices = [e.message for e in events if e.type == "notice"]
    assert any("code-judge piped" in m and "/bin/sh -c" in m for m in notices)
    assert _rows(tmp_path / "out")["t"]["score"] == 0.9


def test_a_custom_assertion_script_runs_as_a_code_judge(tmp_path: Path, smart: SmartFake) -> None:
    import shutil

    node = shutil.which("node")
    assert node is not None, "node is needed (the CI installs it for yaml-language-server)"
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    write(tmp_path / ".agentv" / "assertions" / "word-count.js", """
let data = "";
process.stdin.on("data", (c) => (data += c));
process.stdin.on("end", () => {
  const p = JSON.parse(data);
  const words = p.answer.trim().split(/\\s+/).length;
  const min = (p.config && p.config.min) || 3;
  console.log(JSON.stringify({ pass: words >= min, reasoning: `${words} words (min ${min})` }));
});
""")
    bp = write(tmp_path / "evals" / "c.eval.yaml", """name: custom
description: d
execution:
  target: default
tests:
  - {id: long, input: "one two three four", criteria: c, assert: [{type: word-count, min: 4}]}
  - {id: short, input: "one", criteria: c, assert: [{type: word-count, min: 4}]}
  - {id: unknown, input: "one", criteria: c, assert: [{type: no-such-check}]}
""")
    import os as _os

    run_events(bp, options(tmp_path, env_for(smart, PATH=_os.path.dirname(node) + ":/usr/bin:/bin")))
    rows = _rows(tmp_path / "out")
    assert rows["long"]["score"] == 1.0 and rows["long"]["scores"][0]["reasoning"] == "5 words (min 4)"  # ECHO: …
    assert rows["short"]["score"] == 0.0 and rows["short"]["scores"][0]["reasoning"] == "2 words (min 4)"
    unknown = rows["unknown"]["scores"][0]
    assert unknown["score"] is None and "no .agentv/assertions/no-such-check.ts or .js" in unknown["reasoning"]


def test_an_llm_judge_prompt_script_writes_the_judges_prompt(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / "evals" / "prompt.py", """import json, sys
p = json.load(sys.stdin)
print(f"PROMPT-SCRIPT style={p['config']['style']} answer={p['answer']} criteria={p['criteria']}")
""")
    write(tmp_path / "evals" / "broken.py", "import sys\nprint('no template', file=sys.stderr)\nsys.exit(1)\n")
    bp = _suite(tmp_path, f"""name: prompts
description: d
execution:
  target: default
tests:
  - id: scripted
    input: hi
    criteria: greets
    assert:
      - type: llm-judge
        prompt: {{command: [{PY}, prompt.py], config: {{style: terse}}}}
  - id: broken
    input: hi
    criteria: greets
    assert:
      - type: llm-judge
        prompt: {{command: [{PY}, broken.py]}}
""")
    smart.decide = lambda req: (json.dumps({"score": 0.7, "reasoning": "ok"})
                                if req.get("model") == "grader-model" else None)
    run_events(bp, options(tmp_path, env_for(smart)))
    rows = _rows(tmp_path / "out")
    assert rows["scripted"]["score"] == 0.7
    judged = [r for r in smart.chat_requests() if r["model"] == "grader-model"]
    assert len(judged) == 1
    assert "PROMPT-SCRIPT style=terse answer=ECHO: hi criteria=greets" in judged[0]["messages"][-1]["content"]
    entry = rows["broken"]["scores"][0]
    assert entry["score"] is None and "prompt script exited with code 1" in entry["reasoning"]
    assert "no template" in entry["reasoning"]


def test_dry_run_names_a_code_judge_that_cannot_start(tmp_path: Path, smart: SmartFake,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from evalspec.cli import main

    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    bp = _suite(tmp_path, f"""name: dry
description: d
execution:
  target: default
tests:
  - id: t
    input: hi
    criteria: c
    assert:
      - {{name: gone, type: code-judge, command: [{PY}, judges/gone.py], required: true}}
      - {{name: here, type: code-judge, command: [{PY}, judges/fixed.py, "1"]}}
""")
    assert main(["run", str(bp), "--dry-run", "--json", "-o", str(tmp_path / "out")]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    [group] = plan["not_scored"]
    assert group["name"] == "gone" and "judges/gone.py does not exist" in group["reason"] and group["required"]
    assert smart.requests == []  # nothing was called, and no script ran


PROXY_JUDGE = """import json, os, sys, urllib.request, urllib.error
payload = json.load(sys.stdin)
url, token = os.environ["AGENTV_TARGET_PROXY_URL"], os.environ["AGENTV_TARGET_PROXY_TOKEN"]

def call(path, body=None, auth=True):
    req = urllib.request.Request(url + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": "Bearer " + token} if auth else {})})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)

info = call("/info")
first = call("/invoke", {"question": "Is it good? " + payload["answer"], "systemPrompt": "Be brief."})
second = call("/invoke", {"question": "Again?"})
third = call("/invoke", {"question": "Once more?"})
anonymous = call("/invoke", {"question": "x"}, auth=False)
print(json.dumps({"score": 1 if first[1].get("rawText") == "PROXY-ANSWER" else 0,
                  "details": {"info": info, "first": first, "third": third[0], "anonymous": anonymous[0]}}))
"""


def test_a_code_judge_calls_the_judge_target_through_the_proxy(tmp_path: Path, smart: SmartFake) -> None:
    write(tmp_path / "evals" / "proxy_judge.py", PROXY_JUDGE)
    bp = _suite(tmp_path, f"""name: proxied
description: d
execution:
  target: default
tests:
  - id: t
    input: hi
    criteria: c
    assert:
      - {{type: code-judge, command: [{PY}, proxy_judge.py], target: {{max_calls: 2}}}}
""")
    smart.decide = lambda req: ("PROXY-ANSWER" if req.get("model") == "grader-model" else None)
    run_events(bp, options(tmp_path, env_for(smart)))
    entry = _rows(tmp_path / "out")["t"]["scores"][0]
    assert entry["score"] == 1.0, entry
    details = entry["details"]
    assert details["info"] == [200, {"targetName": "grader", "maxCalls": 2, "callCount": 0,
                                     "availableTargets": ["grader", "default"]}]
    assert details["first"][1]["output"] == [{"role": "assistant", "content": "PROXY-ANSWER"}]
    assert details["first"][1]["tokenUsage"] == {"input": 11, "output": 7}
    assert details["third"] == 429 and details["anonymous"] == 401  # past max_calls; no token
    assert entry["target_proxy"]["call_count"] == 2
    judged = [r for r in smart.chat_requests() if r["model"] == "grader-model"]
    assert judged[0]["messages"] == [{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "Is it good? ECHO: hi"}]
