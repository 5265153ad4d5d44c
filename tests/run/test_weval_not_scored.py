"""A Weval point that could not be scored never lets --fail-under pass: the cell's score leaves it out (as
the reference averages only the points it could score), so the mean cannot vouch for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.cli import main

BLUEPRINT = """title: not scored
models: [echo]
---
- id: capital
  prompt: What is the capital of France?
  should:
    - $contains: capital
    - mentions Paris
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "b.weval.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_judged_point_with_no_judge_fails_fail_under(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    bp = _write(tmp_path, BLUEPRINT)
    # The function point scores 1.0 on the echoed prompt, so the cell's mean is 1.0: above the bar.
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report", "--fail-under", "0.5"]) == 1
    err = capsys.readouterr().err
    assert "1 point(s) not scored" in err and "--fail-under 0.5 fails" in err
    assert "OPENROUTER_API_KEY" in err  # the note names why


def test_a_js_error_fails_fail_under_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bp = _write(tmp_path, BLUEPRINT.replace("    - mentions Paris\n", "    - $js: \"throw new Error('boom')\"\n"))
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report", "--fail-under", "0.5"]) == 1
    assert "1 point(s) not scored" in capsys.readouterr().err


def test_every_point_scored_passes_fail_under(tmp_path: Path) -> None:
    bp = _write(tmp_path, BLUEPRINT.replace("    - mentions Paris\n", ""))
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report", "--fail-under", "0.5"]) == 0


def test_a_regex_past_its_deadline_is_not_scored_even_in_should_not(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # The echoed answer makes `(a+)+$` backtrack without end: QuickJS stops it at the deadline, and the
    # inverted point is not scored (it would be a pass if a failed match were inverted).
    bp = _write(tmp_path, f"""title: slow regex
models: [echo]
---
- id: slow
  prompt: "{'a' * 5_000}!"
  should:
    - $contains: "!"
  should_not:
    - $matches: "(a+)+$"
""")
    assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report", "--fail-under", "0.5"]) == 1
    assert "1 point(s) not scored" in capsys.readouterr().err
    [coverage] = (tmp_path / "out").rglob("coverage/slow/*.json")
    points = json.loads(coverage.read_text(encoding="utf-8"))["pointAssessments"]
    [slow] = [p for p in points if p["isInverted"]]
    assert slow["coverageExtent"] is None and "longer than 1 s" in slow["error"]
