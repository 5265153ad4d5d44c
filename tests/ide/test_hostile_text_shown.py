"""What the editor shows of a model's answer, a judge's reason, a provider's error and someone else's
eval file is text: no live image, link or HTML in a hover, no control or bidi character anywhere (the
eighth attack round, `bench/attack.py editor8`: `![](https://host/…)` from a judge's reason was fetched
by the editor as the hover opened, and U+202E reversed lens titles and diagnostics)."""

from __future__ import annotations

import re

import pytest

from evalspec.analysis import analyze
from evalspec.ide.hover import hover
from evalspec.ide.markdown_text import md_code, md_fence, md_text
from evalspec.ide.run_notes import point_markdown, run_notes
from evalspec.ide.runs import RunBoard, run_items
from evalspec.run.events import Cell, CellFailed, Response, Scored
from evalspec.terminal_text import shown

EVIL = ("![b](https://evil.example/beacon.png) <img src=https://evil.example/i.png> "
        "[go](command:workbench.action.terminal.new) ``` ` \x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\ "
        "\u202eRTL\u202c \x1b[31mred")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def outside_code(md: str) -> str:
    """The Markdown without fenced blocks and code spans (where links and HTML are shown as written)."""
    md = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1`*[ \t]*$", "", md)
    out, i = [], 0
    for m in re.finditer(r"(?<!\\)`+", md):
        if m.start() < i:
            continue
        close = re.compile(r"(?<!`)" + "`" * len(m.group()) + r"(?!`)").search(md, m.end())
        if close is not None:
            out.append(md[i:m.start()])
            i = close.end()
    return "".join(out) + md[i:]


def assert_inert(md: str) -> None:
    assert not CONTROL.search(md), repr(md)
    live = outside_code(md)
    assert not re.search(r"(?<!\\)\]\(\s*(https?://evil|command:)", live), md
    assert not re.search(r"(?<!\\)<img", live), md


def test_the_helpers_keep_text_text() -> None:
    for md in (md_text(EVIL), md_code(EVIL), md_code("`" + EVIL + "``"), md_fence(EVIL + "\n````\n" + EVIL)):
        assert_inert(md)
    assert md_text("openai:gpt_4 [temp:0]") == "openai:gpt_4 [temp:0]"  # names read as written


BLUEPRINT = """\
title: T
models: [echo]
---
- id: p1
  prompt: Hi
  should:
    - $contains: hi
    - is friendly
- id: p2
  prompt: Bye
  should: [is kind]
"""


def test_a_run_of_hostile_answers_reasons_and_errors_shows_as_text() -> None:
    analysis = analyze(BLUEPRINT, "t.weval.yml")
    board = RunBoard()
    board.start(run_items(analysis), None)
    model = "echo" + EVIL
    board.apply(Response(Cell("p1", model), EVIL))
    board.apply(Scored(Cell("p1", model), 0.1, "fail", {"pointAssessments": [
        {"keyPointText": EVIL, "coverageExtent": 0.0, "reflection": EVIL, "pathId": EVIL},
        {"keyPointText": "is friendly", "coverageExtent": 0.2, "reflection": EVIL}]}))
    board.apply(CellFailed(Cell("p2", model), "HTTP 400: " + EVIL))
    for item in ("p1", "p2"):
        md = board.item_markdown(item)
        assert md is not None and "evil.example" in md  # the text is there, made inert
        assert_inert(md)
    for line in (6, 7):
        md = point_markdown(analysis, board, line)
        assert md is not None and "evil.example" in md
        assert_inert(md)
    notes = run_notes(analysis, board)
    assert len(notes) == 3 and all("evil.example" in n.message for n in notes)
    for n in notes:
        assert not CONTROL.search(n.message), repr(n.message)
    titles = [board.item_title(item) for item in run_items(analysis) if item.item_id]
    assert len(titles) == 2 and all(t is not None and "evil.example" in t for t in titles)
    for title in titles:
        assert not CONTROL.search(title or ""), repr(title)


def test_hovers_on_a_files_own_values_are_text() -> None:
    suite = ("name: s\ndescription: d\ntests:\n  - id: t\n    input: hi\n    criteria: c\n    assert:\n"
             '      - type: "x![b](https://evil.example/t.png)<img src=x>"\n')
    info = hover(analyze(suite, "s.eval.yaml"), 7, 16)
    assert info is not None and "evil.example" in info.markdown
    assert_inert(info.markdown)
    model = ('title: t\nmodels: ["openai:x![b](https://evil.example/m.png)"]\n---\n'
             "- id: a\n  prompt: hi\n  should: [be kind]\n")
    info = hover(analyze(model, "m.weval.yml"), 1, 20)
    assert info is not None and "evil.example" in info.markdown
    assert_inert(info.markdown)
    ref = ('title: t\npoint_defs:\n  "r![b](https://evil.example/r.png)": "a ``` b <img src=x>"\n'
           'models: [openai:candidate]\n---\n- id: a\n  prompt: hi\n'
           '  should: [{$ref: "r![b](https://evil.example/r.png)"}]\n')
    info = hover(analyze(ref, "r.weval.yml"), 7, 22)
    assert info is not None and "evil.example" in info.markdown
    assert_inert(info.markdown)


@pytest.mark.parametrize("text", ["", "   ", "a", "`", "``x", "x`", "a ``` b", "`" * 40, "tab\there"])
def test_hover_and_report_code_spans_fence_alike(text: str) -> None:
    """The editor's hovers and the reports show untrusted text in one code-span rule (markdown_code.py):
    the fence longer than any backtick run inside, padded when the text touches a backtick or is blank
    (the report's `` was two fences run together, not an empty span)."""
    from evalspec.markdown_code import code_span
    from evalspec.report.markdown import code_text

    assert md_code(text) == code_span(shown(text))
    assert code_text(text) == code_span(shown(" ".join(text.split())))
    span = code_span(text)
    fence = span[: len(span) - len(span.lstrip("`"))]
    assert span.endswith(fence) and fence not in span[len(fence):-len(fence)]
