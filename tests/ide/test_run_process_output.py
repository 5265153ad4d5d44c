"""The run process's stdout (engine/ide/run_process.py): every event goes through as one JSON line,
whatever text a model answered; once nobody reads it, the run is cancelled (once) and nothing more is
written. The process itself, over the protocol: tests/lsp/test_run_process.py."""

from __future__ import annotations

import io
import json
import sys

import pytest

from evalspec.ide.run_process import _Out
from evalspec.run.events import Cell, Response, from_json


def test_an_answer_with_a_lone_surrogate_goes_through(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, as a pipe's stdout is
    monkeypatch.setattr(sys, "stdout", out)
    cancelled: list[bool] = []
    say = _Out(lambda: cancelled.append(True))
    event = Response(Cell("p1", "m"), "half a pair: \ud800, and é")
    say(event.to_json())
    out.flush()
    [line] = out.buffer.getvalue().splitlines()  # type: ignore[attr-defined]
    assert not cancelled and from_json(json.loads(line)) == event


def test_a_reader_gone_cancels_the_run_once(monkeypatch: pytest.MonkeyPatch) -> None:
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Gone())
    cancelled: list[bool] = []
    say = _Out(lambda: cancelled.append(True))
    for _ in range(3):
        say({"type": "notice", "message": "m"})
    assert cancelled == [True] and say.gone
