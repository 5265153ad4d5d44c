"""Malformed 200 answers through the real CLI: error cells with the reason, the rest of the run scored, no
traceback (before: `{"choices":[{"message":"a string"}]}` or non-numeric usage aborted the run, exit 1, no
results). Weval blueprints and AgentV targets both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fakeprovider import Reply

from evalspec.cli import main

from .conftest import AGENTV_TARGETS, SmartFake, comparison, env_for, write

BAD = [
    ({"choices": [{"message": "a string"}]}, "choices[0].message (expected an object)"),
    ({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "abc"}}, "usage.prompt_tokens"),
    ({"choices": [{"message": {"content": "x"}}], "usage": ["a", "list"]}, "usage (expected an object)"),
]


def test_weval_run_keeps_going_and_records_each_bad_answer(tmp_path: Path, smart: SmartFake, monkeypatch,
                                                           capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    lines = ["models: [openai:candidate]", "---"]
    for i in range(len(BAD) + 1):
        lines += [f"- id: p{i}", f"  prompt: question {i}", "  should:", f"    - $contains: question {i}"]
    bp = write(tmp_path / "m.weval.yml", "\n".join(lines) + "\n")
    smart.then(*[Reply.raw(200, body) for body, _ in BAD])  # the last prompt gets an ordinary answer
    out = tmp_path / "out"
    assert main(["run", str(bp), "--output", str(out), "--concurrency", "1", "--retries", "0"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    result = comparison(out)
    errors = {k: str(v) for k, v in result.get("errors", {}).items()}
    assert len(errors) == len(BAD), errors
    for (_, words), message in zip(BAD, (errors[k] for k in sorted(errors)), strict=True):
        assert "malformed answer" in message and words in message
    scores = result["evaluationResults"]["llmCoverageScores"]
    assert scores[f"p{len(BAD)}"]["openai:candidate[temp:0]"]["avgCoverageExtent"] == 1.0


def test_agentv_target_answers_are_error_rows(tmp_path: Path, smart: SmartFake, monkeypatch) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    write(tmp_path / ".agentv" / "targets.yaml", AGENTV_TARGETS)
    tests = "\n".join(f"  - id: t{i}\n    input: question {i}\n    criteria: echo\n"
                      f"    assert: [{{type: contains, value: question {i}}}]" for i in range(len(BAD) + 1))
    suite = write(tmp_path / "evals" / "s.eval.yaml", f"name: bad\ndescription: d\ntests:\n{tests}\n")
    smart.then(*[Reply.raw(200, body) for body, _ in BAD])
    out = tmp_path / "out"
    assert main(["run", str(suite), "--output", str(out), "--concurrency", "1", "--retries", "0"]) in (0, 1)
    files = sorted(p for p in out.glob("agentv/*/*.jsonl") if not p.name.endswith(".journal.jsonl"))
    rows: dict[str, dict[str, Any]] = {r["test_id"]: r for r in map(json.loads, files[-1].read_text().splitlines())}
    for i, (_, words) in enumerate(BAD):
        assert words in json.dumps(rows[f"t{i}"]), rows[f"t{i}"]
    assert rows[f"t{len(BAD)}"]["score"] == 1.0


def test_deeply_nested_and_surrogate_answers_end_as_cells(tmp_path: Path, smart: SmartFake, monkeypatch,
                                                          capsys) -> None:
    """The attack run's second round: `[[[[…` 200,000 deep fell from orjson (1,024 levels) to the standard
    parser, whose RecursionError stopped the run; an answer holding a lone surrogate (`\\ud800`) stopped
    `--json` output with UnicodeEncodeError. Now an error cell, and the answer printed as its escape."""
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    bp = write(tmp_path / "m.weval.yml", "models: [openai:candidate]\n---\n"
                                         "- id: deep\n  prompt: a\n  should: [$contains: a]\n"
                                         "- id: surrogate\n  prompt: b\n  should: [$contains: b]\n")
    deep = b'{"choices":[{"message":{"content":"a"}}],"x":' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    surrogate = b'{"choices":[{"message":{"content":"b\\ud800b"}}]}'
    smart.then(Reply.raw(200, deep), Reply.raw(200, surrogate))
    out = tmp_path / "out"
    assert main(["run", str(bp), "--output", str(out), "--concurrency", "1", "--retries", "0", "--json"]) == 0
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err
    events = [json.loads(line) for line in printed.out.splitlines()]
    answers = [e["text"] for e in events if e["type"] == "response"]
    assert answers == ["b\ud800b"]  # printed as the JSON escape, read back as the same string
    result = comparison(out)
    assert "not valid JSON" in str(result["errors"]["deep"])
    assert result["evaluationResults"]["llmCoverageScores"]["surrogate"]["openai:candidate[temp:0]"][
        "avgCoverageExtent"] == 1.0
