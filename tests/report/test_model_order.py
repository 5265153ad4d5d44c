"""The report's model columns come in the blueprint's order, as the terminal lists them, whether it is
read from the comparison file (which lists `effectiveModels` sorted), read streamed, or read from the run
database of an unfinished run."""

from __future__ import annotations

import json
from pathlib import Path

from evalspec.cli import main
from evalspec.report import load_results, sources

from ..run.conftest import SmartFake, env_for, write

BLUEPRINT = """models: [openai:zeta, openai:alpha, openai:mid]
temperatures: [0.7, 0.2]
---
- id: p
  prompt: hello
  should: [$contains: hello]
"""


def test_report_columns_follow_the_blueprint(tmp_path: Path, monkeypatch, capsys) -> None:
    bp = write(tmp_path / "order.weval.yml", BLUEPRINT)
    with SmartFake() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        assert main(["run", str(bp), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    terminal = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("openai:")]
    assert [t.split("[")[0] for t in terminal] == ["openai:zeta"] * 2 + ["openai:alpha"] * 2 + ["openai:mid"] * 2

    comparison = next((tmp_path / "out").rglob("*_comparison.json"))
    assert json.loads(comparison.read_text())["effectiveModels"] == sorted(terminal)  # the reference's order
    database = next((tmp_path / "out").rglob("*.run.db"))
    assert load_results(comparison).models == terminal
    streamed = sources._weval_streamed(comparison)
    assert streamed is not None and streamed.models == terminal
    assert load_results(database).models == terminal


def test_models_the_blueprint_does_not_list_keep_their_place_after_it() -> None:
    order = sources.blueprint_order(
        ["a:x[temp:0]", "b:y[temp:0.1][sp_idx:1]", "b:y[temp:0.1][sp_idx:0]", "c:z[temp:0]", "b:y[temp:0.9][sp_idx:0]"],
        {"models": ["b:y", {"id": "c:z"}, 3], "temperatures": [0.9, "0.1"]})
    assert order == ["b:y[temp:0.9][sp_idx:0]", "b:y[temp:0.1][sp_idx:0]", "b:y[temp:0.1][sp_idx:1]", "c:z[temp:0]",
                     "a:x[temp:0]"]
    assert sources.blueprint_order(["b", "a"], None) == ["b", "a"]
