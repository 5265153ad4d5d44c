"""The command line as a person sees it: `evalspec check` on a terminal (source line, caret, colour),
piped (one line per finding), `evalspec init`, help on every option, counts with separators."""

from __future__ import annotations

import argparse
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from evalspec.cli import build_parser, main

BAD = """title: x
models: [openai:gpt-4o-mini]
---
- id: a
  prompt: héllo 日本
  shuld:
    - $contains: x
"""


def _on_terminal(args: list[str], cwd: Path, *, stream: str = "stdout", codes: tuple[int, ...] = (0, 1),
                 **env: str) -> str:
    """Run the real CLI with its stdout (or stderr) on a pseudo-terminal; what the terminal received."""
    master, slave = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full_env.update(TERM="xterm-256color", **env)
    where = {"stdout": slave, "stderr": subprocess.PIPE} if stream == "stdout" else \
        {"stdout": subprocess.PIPE, "stderr": slave}
    proc = subprocess.run([sys.executable, "-m", "evalspec.cli", *args], cwd=cwd, env=full_env, timeout=60,
                          check=False, **where)  # type: ignore[call-overload]
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.returncode in codes, proc
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_check_on_a_terminal_shows_the_line_and_a_caret_in_colour(tmp_path: Path) -> None:
    (tmp_path / "bad.weval.yml").write_text(BAD)
    shown = _on_terminal(["check", "bad.weval.yml"], tmp_path)
    assert "\x1b[1;33mwarning[unknown-key]\x1b[0m" in shown
    plain = shown.replace("\x1b[0m", "").replace("\x1b[1;33m", "").replace("\x1b[1;34m", "").replace("\x1b[1m", "")
    assert plain.startswith("warning[unknown-key]: Unknown key 'shuld' in a prompt; did you mean 'should'?\n"
                            " --> bad.weval.yml:6:3\n"
                            "  |\n"
                            "6 |   shuld:\n"
                            "  |   ^^^^^\n"
                            "  = help: Rename 'shuld' to 'should'\n")


def test_no_color_keeps_the_excerpt_without_escapes(tmp_path: Path) -> None:
    (tmp_path / "bad.weval.yml").write_text(BAD)
    shown = _on_terminal(["check", "bad.weval.yml"], tmp_path, NO_COLOR="1")
    assert "\x1b[" not in shown
    assert "6 |   shuld:\n  |   ^^^^^\n" in shown


def test_run_shows_the_errors_that_stop_it_like_check(tmp_path: Path) -> None:
    (tmp_path / "bad.weval.yml").write_text(BAD.replace("shuld:", "should:").replace("$contains", "$contians"))
    shown = _on_terminal(["run", "bad.weval.yml", "-m", "echo"], tmp_path, stream="stderr", codes=(2,),
                         NO_COLOR="1")
    assert ("error[unknown-function]: Unknown point function '$contians'; did you mean '$contains'?\n"
            " --> bad.weval.yml:7:7\n  |\n7 |     - $contians: x\n  |       ^^^^^^^^^\n") in shown
    assert "nothing was run" in shown


def test_piped_output_stays_one_line_per_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.weval.yml"
    bad.write_text(BAD)
    assert main(["check", str(bad)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].endswith(":6:3: warning[unknown-key]: Unknown key 'shuld' in a prompt; "
                                             "did you mean 'should'?")


def test_carets_count_wide_characters_and_tabs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "wide.weval.yml"
    f.write_text("title: x\nmodels: [openai:gpt-4o-mini]\n---\n- id: 日本\n  prompt: hi\n  idael: x\n")
    assert main(["check", "--format", "full", "--color", "never", str(f)]) == 0
    out = capsys.readouterr().out
    assert "6 |   idael: x\n  |   ^^^^^\n" in out
    from evalspec.findings import Finding, Severity, Span
    from evalspec.terminal import excerpt

    text = excerpt(Finding("c", Severity.ERROR, "m", Span(0, 3, 0, 5)), "p", ["日本\tab: x"], color=False)
    assert text.splitlines()[3:5] == ["1 | 日本    ab: x", "  |         ^^"]  # 2+2 wide, a tab of 4


def test_init_check_run_and_report_a_starter(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for fmt, name in (("weval", "blueprint.weval.yml"), ("agentv", "suite.eval.yaml")):
        assert main(["init", fmt, "starters/"]) == 0
        path = tmp_path / "starters" / name
        assert f"wrote starters/{name}" in capsys.readouterr().out
        assert path.read_text().startswith("# ")  # commented
        assert main(["check", "--strict", str(path)]) == 0
        assert capsys.readouterr().out == ""  # not even a warning
        assert main(["run", str(path), "-m", "echo", "-o", str(tmp_path / "out")]) == 0
        out = capsys.readouterr().out
        row = out.splitlines()[2].split()
        assert row[-4:] == ["0", "0", "0", "0"]  # borderline, fail, not scored, errors: all pass offline
        assert "report: " in out
        assert main(["init", fmt, "starters/"]) == 2  # never overwrites
        assert "exists; pass --force" in capsys.readouterr().err
        assert main(["init", fmt, "starters/", "--force"]) == 0


def _actions(parser: argparse.ArgumentParser, where: str = "evalspec"):  # type: ignore[no-untyped-def]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{where} {name}")
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            yield where, action


def test_every_subcommand_and_option_has_help() -> None:
    parser = build_parser()
    missing = [f"{where} {'/'.join(a.option_strings) or a.dest}" for where, a in _actions(parser)
               if not a.help or a.help == argparse.SUPPRESS]
    assert missing == []
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {c.dest for c in sub._choices_actions if c.help} == set(sub.choices)


def test_large_counts_have_separators() -> None:
    from evalspec.run.events import ModelSummary, RunSummary
    from evalspec.run.render import format_plan, format_table

    table = format_table(RunSummary("weval", "x", (ModelSummary("m", cells=20000, scored=20000, mean=0.5,
                                                                passed=12345, failed=7655),), calls=20000))
    assert "20,000" in table and "12,345" in table and "7,655" in table and "20,000 call(s)" in table
    cost = {"lines": [{"role": "answers", "model": "m", "calls": 20000, "input_tokens": 1234567,
                       "output_tokens": 30000000, "usd": 18.5, "batch_usd": 9.25}],
            "input_tokens": 1234567, "output_tokens": 30000000, "usd": 18.5, "batch_usd": 9.25, "unpriced": []}
    plan = format_plan({"kind": "weval", "prompts": 20000, "effective_models": ["m"], "cells": 20000,
                        "calls": 20000, "per_model": {}, "cost": cost})
    assert "20,000 prompt(s)" in plan and "total: 20,000 call(s)" in plan
    assert "estimated total: 1,234,567 input + 30,000,000 output tokens; interactive $18.50; batch $9.25" in plan
