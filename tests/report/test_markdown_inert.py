"""The Markdown report (what CI pastes into a pull request) shows ids, points, answers and reasons as
text: the eighth attack round's `report8` found `![b](https://evil.example/beacon.png)` from a failing
point and a test id live in it, an image GitHub fetches for everyone who opens the pull request."""

from __future__ import annotations

import re
from pathlib import Path

from evalspec.cli import main
from evalspec.report.markdown import cell_text, code_text
from tests.fakeprovider import FakeProvider

from ..run.conftest import env_for, write
from .conftest import run_cli

EVIL = ("![b](https://evil.example/beacon.png) [go](https://evil.example/phish) a\\](https://evil.example/x) "
        "`code` ``` @octocat <img src=x> \u202eRTL \x1b]8;;https://evil.example\x1b\\x")


def assert_inert(md: str) -> None:
    assert not re.search(r"(?<!\\)\]\(https://evil", md), md
    assert not re.search(r"(?<![\w\\])@octocat", md), md
    assert "<img" not in md and "\u202e" not in md and "\x1b" not in md, md


def test_cells_and_code_spans_are_inert() -> None:
    assert_inert(cell_text(EVIL, 1000))
    span = code_text("a``b")
    assert span == "```a``b```"
    assert cell_text("openai:gpt_4[temp:0] 0.5") == "openai:gpt_4[temp:0] 0.5"  # names read as written


def test_a_failing_hostile_point_and_id_in_the_markdown_report(tmp_path: Path, capsys) -> None:
    bp = write(tmp_path / "h.weval.yml", "title: t\nmodels: [openai:candidate]\n---\n"
               f"- id: {_dq('p ' + EVIL[:60])}\n  prompt: hi\n  should:\n    - $contains: {_dq('absent ' + EVIL)}\n")
    with FakeProvider(answer="an answer " + EVIL) as fake:
        assert run_cli(["run", str(bp), "-o", str(tmp_path / "out"), "--retries", "0"], env_for(fake)) == 0
    capsys.readouterr()
    results = sorted((tmp_path / "out").glob("live/blueprints/*/*_comparison.json"))[-1]
    assert main(["report", str(results), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "evil.example/beacon.png" in md  # the failing point is listed, as text
    assert_inert(md)


def _dq(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or 0x202A <= ord(ch) <= 0x202E:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
