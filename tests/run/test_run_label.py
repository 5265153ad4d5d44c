"""Run labels and effective model ids, against the reference's definitions (compat notes §9)."""

from __future__ import annotations

from pathlib import Path

from evalspec.analysis import analyze_file
from evalspec.run.options import RunOptions
from evalspec.run.plan.run_label import content_hash, content_hash_input, run_label
from evalspec.run.plan.weval import plan_weval
from evalspec.run.write.jsjson import js_stringify, locale_compare_key

from .conftest import write

VECTOR = """models: [openai:gpt-4o-mini]
temperatures: [0.7, 0]
---
- id: p1
  prompt: Hi
  should: ["x"]
"""


def _bp(tmp_path: Path, text: str, name: str = "b.weval.yml"):
    a = analyze_file(write(tmp_path / name, text))
    assert not a.errors, [f.message for f in a.errors]
    return a.blueprint


def test_reference_vector(tmp_path: Path) -> None:
    bp = _bp(tmp_path, VECTOR)
    # The string the reference hashes: promptText is never set by its YAML parser, temperatures are
    # sorted as strings, points are normalized to {text, multiplier}.
    assert content_hash_input(bp, bp.models_resolved) == (
        '{"models":["openai:gpt-4o-mini"],"prompts":[{"id":"p1","points":[{"text":"x","multiplier":1}]}],'
        '"temperatureSettings":[0,0.7]}')
    assert content_hash(bp, bp.models_resolved) == "d12a4b4ab8a1fbb1"


def test_label_prefix_and_plan(tmp_path: Path) -> None:
    bp = _bp(tmp_path, VECTOR)
    assert run_label("d12a4b4ab8a1fbb1", "nightly") == "nightly_d12a4b4ab8a1fbb1"
    assert run_label("d12a4b4ab8a1fbb1", "  ") == "d12a4b4ab8a1fbb1"
    plan = plan_weval(bp, tmp_path / "b.weval.yml", RunOptions(label="nightly"))
    assert plan.run_label == "nightly_d12a4b4ab8a1fbb1"


def test_hash_ignores_prompt_text_and_should_not_but_not_ideal(tmp_path: Path) -> None:
    base = content_hash(_bp(tmp_path, VECTOR), ["openai:gpt-4o-mini"])
    other_text = VECTOR.replace("prompt: Hi", "prompt: Hello there")
    assert content_hash(_bp(tmp_path, other_text, "c.weval.yml"), ["openai:gpt-4o-mini"]) == base
    with_not = VECTOR + '  should_not: ["y"]\n'
    assert content_hash(_bp(tmp_path, with_not, "d.weval.yml"), ["openai:gpt-4o-mini"]) == base
    with_ideal = VECTOR + "  ideal: An ideal.\n"
    assert content_hash(_bp(tmp_path, with_ideal, "e.weval.yml"), ["openai:gpt-4o-mini"]) != base


def test_function_points_use_the_reference_form(tmp_path: Path) -> None:
    text = """models: [openai:gpt-4o-mini]
---
- id: p1
  prompt: Hi
  should:
    - $contain: "a"
    - $word_count_between: [1, 10]
      weight: 2
    - - $icontains: b
    - - c
"""
    got = content_hash_input(_bp(tmp_path, text), ["openai:gpt-4o-mini"])
    assert ('"points":[{"fn":"contains","fnArgs":"a","multiplier":1},'
            '{"fn":"word_count_between","fnArgs":[1,10],"multiplier":2},'
            '[{"fn":"icontains","fnArgs":"b","multiplier":1}],[{"text":"c","multiplier":1}]]') in got
    assert '"temperatureSettings"' not in got  # no temperature at all: undefined, skipped


def test_javascript_json_and_sorting() -> None:
    assert js_stringify({"a": 1.0, "b": [0.7, 1e21, None], "c": "é\n"}) == '{"a":1,"b":[0.7,1e+21,null],"c":"é\\n"}'
    # Array.prototype.sort() compares strings: 10 sorts before 9; localeCompare sorts p10 before p2 and
    # ignores case at first.
    assert sorted(["p2", "p10", "P1", "p1"], key=locale_compare_key) == ["p1", "P1", "p10", "p2"]
    assert sorted(["b", "_a", "a-b", "a"], key=locale_compare_key) == ["_a", "a", "a-b", "b"]


def test_effective_model_ids(tmp_path: Path) -> None:
    bp = _bp(tmp_path, """models: [openai:gpt-4o-mini, anthropic:claude-3-5-haiku]
temperatures: [0.7, 1.0]
systems: ["Be brief.", null]
---
- id: p1
  prompt: Hi
  should: [x]
""")
    plan = plan_weval(bp, tmp_path / "b.weval.yml", RunOptions())
    assert plan.effective_models == [
        "openai:gpt-4o-mini[temp:0.7][sp_idx:0]", "openai:gpt-4o-mini[temp:0.7][sp_idx:1]",
        "openai:gpt-4o-mini[temp:1][sp_idx:0]", "openai:gpt-4o-mini[temp:1][sp_idx:1]",
        "anthropic:claude-3-5-haiku[temp:0.7][sp_idx:0]", "anthropic:claude-3-5-haiku[temp:0.7][sp_idx:1]",
        "anthropic:claude-3-5-haiku[temp:1][sp_idx:0]", "anthropic:claude-3-5-haiku[temp:1][sp_idx:1]"]
    systems = {t.cell.model: t.system for t in plan.tasks}
    assert systems["openai:gpt-4o-mini[temp:1][sp_idx:0]"] == "Be brief."
    assert systems["openai:gpt-4o-mini[temp:1][sp_idx:1]"] is None


def test_default_temperature_and_prompt_temperature(tmp_path: Path) -> None:
    bp = _bp(tmp_path, """models: [openai:gpt-4o-mini]
system: Top.
---
- id: p1
  prompt: Hi
  should: [x]
- id: p2
  prompt: Hi
  temperature: 0.3
  system: null
  should: [x]
""")
    plan = plan_weval(bp, tmp_path / "b.weval.yml", RunOptions())
    got = {(t.cell.item, t.cell.model, t.temperature, t.system) for t in plan.tasks}
    assert got == {("p1", "openai:gpt-4o-mini[temp:0]", 0.0, "Top."),
                   ("p2", "openai:gpt-4o-mini[temp:0.3]", 0.3, None)}


ENTRIES = """models: [openai:gpt-4o-mini]
---
- id: plain
  prompt: Hi
  should: ["x", $contains: "a", $word_count_between: [3, 60], $word_count_between: [1.5, 60]]
- id: paths
  prompt: Hi
  ideal: Yes
  system: null
  weight: 2
  should:
    - - $contain: a
      - text b
    - - {fn: imatch, fnArgs: "^a", weight: 0.5, citation: c}
    - {text: t, weight: 3, citation: "https://e"}
    - $contains_any_of: [a, b]
    - $is_json
    - {fn: is_json, citation: "c2"}
- id: "é\\u2028\\"q"
  prompt: Hi
  system: "S"
  should: [{$icontains: x, multiplier: 2}, {text: u, weight: 1.0}]
"""


def test_entry_json_is_the_generic_walks(tmp_path: Path) -> None:
    """prompt_entry_json writes, member by member, what js_stringify makes of the prompt's entry: paths,
    function points with no argument, lists of mixed arguments, citations, weights, non-ASCII ids."""
    from evalspec.run.plan.run_label import _prompt_entry, prompt_entry_json

    bp = _bp(tmp_path, ENTRIES)
    assert len(bp.prompts) == 3
    for p in bp.prompts:
        assert prompt_entry_json(p) == js_stringify(_prompt_entry(p)), p.id
