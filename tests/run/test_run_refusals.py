"""`evalspec run` as a newcomer meets it (issue 30, items 1-2): the file's check warnings before the run
and again in the closing notes; a run refused before any call when a model cannot be called; --dry-run's
exit code; a folder. Each test reads what the terminal shows (stdout and stderr)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.cli import main

from .conftest import SmartFake, env_for, write

TYPO_BP = """title: typo
models: [echo]
---
- id: a
  prompt: Say hi
  shuld:
    - $contains: hi
- id: b
  prompt: Say bye
  should:
    - $contains: bye
"""

TYPO_SUITE = """name: typo
description: an assertion key misspelt
tests:
  - id: t1
    criteria: says hi
    input: say hi
    asserts:
      - type: contains
        value: hi
"""


def test_a_typo_is_shown_before_the_run_and_named_in_the_notes(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "typo.weval.yml", TYPO_BP)
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report", "--fail-under", "0.5"]) == 1
    out, err = capsys.readouterr()
    before = err.split("Running blueprint")[0]
    assert "warning[unknown-key]: Unknown key 'shuld' in a prompt; did you mean 'should'?" in before
    assert "has 1 warning(s) (above)" in before
    # The closing notes, under the table: why 'a' has no score, and the typo tied to it.
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert any("1 cell(s) not scored (a × echo[temp:0]): the prompt has no points" in n for n in notes), notes
    assert any("Unknown key 'shuld'" in n and "(in 'a', which has cell(s) not scored: the key is ignored" in n
               for n in notes), notes
    # --fail-under's message points at notes that exist, and repeats them.
    tail = err.split("--fail-under 0.5 fails")[1]
    assert "the prompt has no points" in tail and "did you mean 'should'" in tail


def test_an_agentv_assert_typo_is_named_not_only_blamed_on_the_judge(tmp_path: Path, capsys) -> None:
    suite = write(tmp_path / "typo.eval.yaml", TYPO_SUITE)
    assert main(["run", str(suite), "-m", "echo", "-o", str(tmp_path / "out"), "--no-report"]) == 0
    out, err = capsys.readouterr()
    assert "Unknown key 'asserts' in a test; did you mean 'assert'?" in err.split("Running suite")[0]
    note = next(n for n in out.splitlines() if "Unknown key 'asserts'" in n)
    assert "in 't1', which has cell(s) not scored" in note and "no assertions" in note


def test_an_unknown_provider_and_a_missing_key_refuse_the_run_before_any_call(
        tmp_path: Path, smart: SmartFake, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    bp = write(tmp_path / "p.weval.yml", """title: p
models: [opneai:gpt-4o-mini, anthropic:claude-x, openai:candidate]
---
- id: a
  prompt: Say hi
  should:
    - $contains: hi
""")
    out_dir = tmp_path / "out"
    assert main(["run", str(bp), "-o", str(out_dir)]) == 2
    err = capsys.readouterr().err
    assert "unknown provider 'opneai' in model id 'opneai:gpt-4o-mini'; did you mean 'openai'?" in err
    assert "model anthropic:claude-x" in err and "ANTHROPIC_API_KEY is not set" in err
    assert "nothing was run (no call made)" in err and "--keep-going" in err
    assert smart.count == 0 and not out_dir.exists()  # no call, no results
    # --dry-run knows the same, and says so with its exit code.
    assert main(["run", str(bp), "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert "problem: model anthropic:claude-x" in captured.out and "would be refused" in captured.err
    # --keep-going runs the rest: the good model's cell is scored, the two others fail.
    assert main(["run", str(bp), "-o", str(out_dir), "--keep-going", "--no-report"]) == 0
    out = capsys.readouterr().out
    assert smart.count == 1
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("openai:", "opneai:",
                                                                                          "anthropic:"))}
    assert rows["openai:candidate[temp:0]"][-1] == "0" and rows["openai:candidate[temp:0]"][2] != "—"
    assert rows["opneai:gpt-4o-mini[temp:0]"][-1] == "1" and rows["anthropic:claude-x[temp:0]"][-1] == "1"


def test_a_judge_without_a_key_is_listed_and_the_run_goes_on(tmp_path: Path, capsys,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    bp = write(tmp_path / "j.weval.yml", """title: j
models: [echo]
---
- id: a
  prompt: Say hi
  should:
    - says hi
""")
    assert main(["run", str(bp), "--dry-run"]) == 1  # a problem, but not one that refuses the run
    assert "OPENROUTER_API_KEY is not set" in capsys.readouterr().out
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    err = capsys.readouterr().err
    assert "evalspec run: warning: " in err and "OPENROUTER_API_KEY is not set" in err


def test_a_clean_dry_run_exits_0(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "c.weval.yml", TYPO_BP.replace("shuld", "should"))
    assert main(["run", str(bp), "--dry-run"]) == 0
    assert "problem:" not in capsys.readouterr().out


def test_run_a_folder_runs_each_eval_file_in_it(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "evals"
    write(folder / "one.weval.yml", TYPO_BP.replace("shuld", "should"))
    write(folder / "sub" / "two.eval.yaml", TYPO_SUITE.replace("asserts", "assert"))
    write(folder / "sub" / "cases.jsonl", '{"id": "x", "input": "hi", "criteria": "c"}\n')  # a dataset: not alone
    write(folder / "notes.yml", "just: a config\n")
    assert main(["run", str(folder), "-m", "echo", "-o", str(tmp_path / "out"), "--no-report"]) == 0
    out, err = capsys.readouterr()
    assert "2 eval file(s) in" in err and "== 1/2:" in err and "== 2/2:" in err
    assert "Running blueprint" in err and "Running suite" in err
    assert out.count("results: ") >= 2


def test_run_a_folder_refuses_when_a_file_cannot_run(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "evals"
    write(folder / "good.weval.yml", TYPO_BP.replace("shuld", "should"))
    write(folder / "bad.weval.yml", "title: bad\nmodels: [echo]\n---\n- id: a\n  should: 3\n")
    assert main(["run", str(folder), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bad.weval.yml" in err and "cannot run (above); nothing was run" in err
    assert not (tmp_path / "out").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["run", str(empty)]) == 2
    assert "no Weval blueprint or AgentV eval file in it" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "nowhere")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_an_unknown_model_collection_refuses_the_run_naming_the_known_ones(
        tmp_path: Path, smart: SmartFake, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    write(tmp_path / "models" / "CORE.json", '["openai:candidate"]')
    bp = write(tmp_path / "blueprints" / "c.yml", """title: c
models: [COER]
---
- id: a
  prompt: Say hi
  should:
    - $contains: hi
""")
    out_dir = tmp_path / "out"
    assert main(["run", str(bp), "-o", str(out_dir)]) == 2
    err = capsys.readouterr().err
    before, _, refusal = err.partition("has 1 warning(s) (above)")
    assert "warning[unknown-collection]: Unknown model collection 'COER'. Known: CORE." in before
    assert "model collection COER is not resolved" in refusal
    assert smart.count == 0 and not out_dir.exists()
    assert main(["run", str(bp), "--dry-run"]) == 2
    capsys.readouterr()
