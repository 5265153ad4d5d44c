"""A run's check notes what the plan reads of each prompt as it stores it (`analyze_file(note_prompts=PromptPass)`),
and the plan made from those notes is the plan made by decoding every stored prompt again: the same run label,
cells (model, temperature, system prompt, system index), facts and fingerprints, for blueprints past the
store's bound with per-prompt system prompts and temperatures, ideals, weights, paths, citations and
generated turns, with and without the header's `systems` and temperatures, whole and sharded; the notes'
plan decodes no prompt, and a selection or another blueprint's prompts fall back to decoding them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalspec.analysis import analyze_file
from evalspec.run.options import RunOptions
from evalspec.run.plan import weval as plan_module
from evalspec.run.plan.plan_for import plan_for
from evalspec.run.plan.shard import parse_shard
from evalspec.run.plan.weval import DEFAULT_TEMPERATURE, PromptPass
from evalspec.weval.prompt_store import DEFAULT_BOUND

N = DEFAULT_BOUND + 300  # past the bound: the prompts are stored, and each read decodes one


def _prompt(i: int) -> str:
    kind = i % 7
    if kind == 0:
        return (f"- id: p{i}\n  prompt: \"Question {i}?\"\n  should:\n    - $contains: \"answer {i}\"\n"
                "    - $word_count_between: [3, 60]\n")
    if kind == 1:
        return f"- id: p{i}\n  prompt: Q{i}\n  system: \"Be brief {i % 3}.\"\n  temperature: 0.{i % 5}\n  should:\n    - a point\n"
    if kind == 2:
        return f"- id: p{i}\n  prompt: Q{i}\n  system: null\n  ideal: \"The ideal {i}\"\n  weight: 2\n"
    if kind == 3:
        return (f"- id: p{i}\n  messages:\n    - user: hi {i}\n    - assistant: null\n    - user: more\n"
                "  should:\n    - - $contains: a\n      - text b\n    - - c\n")
    if kind == 4:
        return f"- id: p{i}\n  prompt: Q{i}\n  temperature: 1\n  should:\n    - point: \"cite {i}\"\n  should_not:\n    - bad\n"
    if kind == 5:
        return f"- prompt: no id {i}\n  should:\n    - $icontains: x\n"
    return f"- id: p{i}\n  prompt: Q{i}\n  should:\n    - text: weighted\n      weight: 3\n      citation: c{i}\n"


def _blueprint(tmp_path: Path, header: str) -> Path:
    path = tmp_path / "big.weval.yml"
    items = "".join(_prompt(i) for i in range(N))
    if "systems:" in header:  # then a prompt may not set its own
        items = "".join(line for line in items.splitlines(keepends=True) if not line.startswith("  system:"))
    path.write_text(header + "---\n" + items, encoding="utf-8")
    return path


def _facts(plan: Any) -> tuple[Any, ...]:
    tasks = [(t.cell, t.index, t.model, t.temperature, t.system, t.sp_index) for t in plan.tasks]
    facts = tuple(list(a) for a in plan.__dict__.get("_facts", ((), (), ())))
    return (plan.run_label, plan.content_hash, tasks, facts, plan.fingerprints, len(plan.prompts))


def _prompts_own(plan: Any) -> None:
    """Each cell's system prompt and temperature, from its prompt as decoded (not through PromptPass)."""
    bp = plan.blueprint
    for t in plan.tasks:
        p = t.prompt
        if not bp.systems:
            assert t.system == (p.system if p.system_set else bp.system), t.cell
        if not bp.temperatures:
            # the header's temperature first, as the reference runs them (`temperatures_to_run`)
            own = bp.temperature if bp.temperature is not None else p.temperature
            assert t.temperature == (own if own is not None else DEFAULT_TEMPERATURE), t.cell


def _decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the prompts PromptPass is given (the check's, then the plan's own pass)."""
    counted = [0]
    add = PromptPass.add

    def counting(self: PromptPass, prompt: Any) -> None:
        counted[0] += 1
        add(self, prompt)

    monkeypatch.setattr(PromptPass, "add", counting)
    return counted


@pytest.mark.parametrize("header", [
    "title: t\nmodels: [openai:gpt-4o-mini, echo]\n",
    "title: t\nmodels: [echo]\nsystem: The header's.\ntemperatures: [0.3, 0.9]\n",
    "title: t\nmodels: [echo]\nsystems: [first, null]\ntemperature: 0.7\n",
])
def test_the_notes_plan_is_the_decoded_plan(tmp_path: Path, header: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _blueprint(tmp_path, header)
    options = RunOptions(output=tmp_path / "out", env={"OPENAI_API_KEY": "sk-test"})
    counted = _decodes(monkeypatch)
    noted = analyze_file(path, note_prompts=PromptPass)
    assert not noted.errors, [f.message for f in noted.errors][:3]
    assert noted.weval is not None and len(noted.weval.notes) == N
    assert counted[0] == N  # the check's notes
    with_notes = plan_for(noted, options)
    assert counted[0] == N  # the plan decoded none
    decoded = plan_for(analyze_file(path), options)
    assert counted[0] == 2 * N  # the plan's own pass
    assert _facts(with_notes) == _facts(decoded)
    _prompts_own(with_notes)
    assert len(with_notes.tasks) >= N

    sharded = RunOptions(output=tmp_path / "out", env={"OPENAI_API_KEY": "sk-test"}, shard=parse_shard("2/3"))
    assert _facts(plan_for(noted, sharded)) == _facts(plan_for(analyze_file(path), sharded))


def test_a_selection_or_other_prompts_decode_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _blueprint(tmp_path, "title: t\nmodels: [echo]\n")
    counted = _decodes(monkeypatch)
    noted = analyze_file(path, note_prompts=PromptPass)
    selected = RunOptions(output=tmp_path / "out", env={}, select=["p1*"])
    plan = plan_for(noted, selected)
    assert counted[0] == N + len(plan.prompts)  # the selected prompts, decoded by the plan's pass
    assert _facts(plan) == _facts(plan_for(analyze_file(path), selected))

    other = analyze_file(path)  # the notes describe another analysis' prompts: not read
    assert other.blueprint is not None and noted.weval is not None
    before = counted[0]
    plan_module.plan_weval(other.blueprint, path, RunOptions(output=tmp_path / "out", env={}), noted.weval.notes)
    assert counted[0] == before + N
