"""A blueprint Python's json.dumps wrote (every emoji a surrogate pair's escapes), with a lone surrogate's
escape too, runs (engine/yaml_feed.py reads them as js-yaml does): the pair is its character in the request
and in the scoring; the lone surrogate is U+FFFD (docs/reference-differences.md), which every file, label
and request can hold."""

from __future__ import annotations

import json
from pathlib import Path

from fakeprovider import Reply

from evalspec.cli import main

from .conftest import SmartFake, comparison, env_for, write


def test_a_json_blueprint_with_emoji_and_a_lone_surrogate_runs(tmp_path: Path, smart: SmartFake, monkeypatch,
                                                                capsys) -> None:
    for k, v in env_for(smart).items():
        monkeypatch.setenv(k, v)
    text = json.dumps({"models": ["openai:candidate"], "prompts": [
        {"id": "emoji", "prompt": "Wave \U0001F44B", "should": [{"$contains": "\U0001F44B"}]},
        {"id": "lone", "prompt": "half \ud83d", "should": [{"$contains": "\ud83d"}]}]})
    assert "\\ud83d\\udc4b" in text and "\\ud83d\"" in text
    bp = write(tmp_path / "blueprints" / "e.json", text)
    smart.then(Reply.ok("\U0001F44B back"), Reply.ok("half \ufffd too"))
    out = tmp_path / "out"
    assert main(["run", str(bp), "--output", str(out), "--concurrency", "1", "--retries", "0", "--json"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    sent = [r["messages"][-1]["content"] for r in smart.chat_requests()]
    assert sent == ["Wave \U0001F44B", "half \ufffd"]
    scores = comparison(out)["evaluationResults"]["llmCoverageScores"]
    assert scores["emoji"]["openai:candidate[temp:0]"]["avgCoverageExtent"] == 1.0
    assert scores["lone"]["openai:candidate[temp:0]"]["avgCoverageExtent"] == 1.0
