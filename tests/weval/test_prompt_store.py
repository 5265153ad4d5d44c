"""weval/prompt_store.py: a stored prompt with a reference form is a split record. A cell's read
(`cell_prompt`) decodes its first part only, the export's (`exported_prompt(s)`) its second only, a whole
read both; each equal to the prompt stored, but for the part it leaves out."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from evalspec.analysis import analyze
from evalspec.weval import prompt_store
from evalspec.weval.model import Prompt

BLUEPRINT = "title: Stored\nmodels: [openai:m]\n---\n" + "".join(
    f"- id: p{i}\n  prompt: \"Question {i}\"\n  should:\n    - $contains: \"answer {i}\"\n"
    + ("  ideal: The ideal answer.\n" if i % 3 == 0 else "") + ("  weight: 2\n" if i % 4 == 0 else "")
    for i in range(6)) + "- id: chat\n  messages:\n    - user: Hello\n    - assistant: null\n    - user: And now?\n"


def _prompts() -> list[Prompt]:
    a = analyze(BLUEPRINT, Path("b.weval.yml"))
    assert a.blueprint is not None and not a.errors
    prompts = list(a.blueprint.prompts)
    assert all(p.reference is not None for p in prompts)
    return prompts


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(prompt_store, name)

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(prompt_store, name, counted)
    return calls


def test_a_cell_s_read_decodes_no_reference_form(monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = _prompts()
    store = prompt_store.PromptStore.of_prompts(prompts)
    exports = _counting(monkeypatch, "_export_part")
    for k, p in enumerate(prompts):
        cell = prompt_store.cell_prompt(store, k)
        assert cell.reference is None and dataclasses.replace(cell, reference=p.reference) == p
        assert prompt_store.cell_prompt(store, k) is cell  # kept for the cell's next read
    assert exports == []
    assert list(store) == prompts and len(exports) == len(prompts)  # a whole read has both parts
    assert prompt_store.cell_prompt(prompts, 2) is prompts[2]  # a list's prompt as it is


def test_the_export_reads_its_part_only_and_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = _prompts()
    store = prompt_store.PromptStore.of_prompts(prompts)
    made = _counting(monkeypatch, "_prompt")
    expected = [prompt_store.ExportedPrompt(p.id, p.ideal, p.weight, p.reference or {},
                                            [prompt_store.Turn(m.role, m.content) for m in p.messages])
                for p in prompts]
    assert list(prompt_store.exported_prompts(store)) == expected
    assert [prompt_store.exported_prompt(store, k) for k in range(len(prompts))] == expected
    assert made == []  # no prompt made for it: its messages, points and spans stay records


def test_a_prompt_without_a_reference_form_is_one_part() -> None:
    p = dataclasses.replace(_prompts()[1], reference=None)
    store = prompt_store.PromptStore.of_prompts([p])
    assert store.record(0)[:1] == prompt_store._MARSHAL
    assert store[0] == p and prompt_store.cell_prompt(store, 0) == p and prompt_store.exported_prompt(store, 0) == p
