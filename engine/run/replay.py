"""`replay:<results file>`: score earlier answers again without calling any model.

The file is a Weval comparison file (`…_comparison.json`, FinalComparisonOutputV2) or an evalspec run
journal (`….journal.jsonl`). Each of its (prompt, effective model) answers becomes a cell of the new
run under the same effective model id; judges are still called for judged points (they are not the
models under test), so with no judge key those points are reported as not scored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .events import Cell
from .journal import load as load_journal

IDEAL = ("IDEAL_BENCHMARK", "ideal")
_SUFFIX = re.compile(r"(\[[a-z_]+:[^\]]*\])+$")


def is_replay(model: str) -> bool:
    return model.strip().startswith("replay:")


@dataclass
class Recorded:
    text: str | None  # the final answer; None when the cell failed
    generated: list[str] = field(default_factory=list)  # every generated turn, in order
    history: list[dict[str, Any]] | None = None
    error: str | None = None


class ReplayError(Exception):
    pass


@dataclass
class ReplaySource:
    path: Path
    answers: dict[str, dict[str, Recorded]]  # item → model → answer
    systems: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, raw_path: str) -> ReplaySource:
        from .weval_plan import PlanError

        path = Path(raw_path.strip()).expanduser()
        if not path.is_file():
            raise PlanError(f"replay: no such results file: {path}")
        try:
            if path.suffix == ".jsonl":
                return cls._from_journal(path)
            return cls._from_comparison(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PlanError(f"replay: cannot read {path}: {exc}") from None

    @classmethod
    def _from_comparison(cls, path: Path) -> ReplaySource:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "allFinalAssistantResponses" not in data:
            raise ValueError("not a Weval comparison file (no allFinalAssistantResponses)")
        histories = data.get("fullConversationHistories") or {}
        errors = data.get("errors") or {}
        answers: dict[str, dict[str, Recorded]] = {}
        for pid, by_model in (data.get("allFinalAssistantResponses") or {}).items():
            for model, text in (by_model or {}).items():
                if model in IDEAL:
                    continue
                error = (errors.get(pid) or {}).get(model)
                history = (histories.get(pid) or {}).get(model)
                rec = Recorded(None if error else str(text), [], history if isinstance(history, list) else None,
                               error)
                if rec.text is not None:
                    rec.generated = [rec.text]
                answers.setdefault(pid, {})[model] = rec
        return cls(path, answers, dict(data.get("modelSystemPrompts") or {}))

    @classmethod
    def _from_journal(cls, path: Path) -> ReplaySource:
        state = load_journal(path)
        if not state.header:
            raise ValueError("not an evalspec journal (no header line)")
        answers: dict[str, dict[str, Recorded]] = {}
        for cell, turns in state.turns.items():
            texts = [str(turns[n].get("text", "")) for n in sorted(turns)]
            answers.setdefault(cell.item, {})[cell.model] = Recorded(texts[-1] if texts else "", texts)
        for cell, rec in state.failures.items():
            answers.setdefault(cell.item, {}).setdefault(cell.model, Recorded(None, error=str(rec.get("error"))))
        return cls(path, answers, dict(state.header.get("systems") or {}))

    def models_for(self, item: str) -> list[str]:
        return list((self.answers.get(item) or {}).keys())

    def answer(self, cell: Cell) -> Recorded | None:
        return (self.answers.get(cell.item) or {}).get(cell.model)

    def system_for(self, model: str) -> str | None:
        value = self.systems.get(model)
        return value if isinstance(value, str) else None

    def base_models(self) -> list[str]:
        models = (m for by_model in self.answers.values() for m in by_model)
        return list(dict.fromkeys(_SUFFIX.sub("", m) for m in models))
