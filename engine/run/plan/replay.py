"""`replay:<results file>`: score earlier answers again without calling any model under test.

A Weval blueprint replays a Weval comparison file (`…_comparison.json`, FinalComparisonOutputV2) or an
evalspec Weval run journal; each (prompt, effective model) answer becomes a cell of the new run under
the same effective model id. An AgentV suite replays an AgentV results JSONL written by evalspec
(`<out>/agentv/<dataset>/<runLabel>_<timestamp>.jsonl`, AgentV's layout) or an evalspec AgentV
run journal; each (test_id, target) answer becomes a cell under the same target name, and a recorded
execution error stays a failed cell. Judges are still called for judged points and assertions (they are
not the models under test), so with no judge those are reported as not scored.

What a file is, is read from its content (its first line), so that one format given to the other kind
of eval file is a clear error rather than "no answers".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...appendlog import read_records
from ...jsonio import loads
from ...providers.base import ToolCall
from ...providers.tool_calls import calls_from_json, calls_from_messages
from ...results_kind import sniff
from ..events import Cell
from ..journal.journal_file import load as load_journal
from .error import PlanError

IDEAL = ("IDEAL_BENCHMARK", "ideal")
_SUFFIX_START = re.compile(r"\[[a-z_]+:")  # a `[temp:0.5]`-style suffix's start


def without_suffixes(model: str) -> str:
    r"""`model` without its trailing `[name:value]` suffixes (`gpt-4o[temp:0.5][sp_idx:1]` → `gpt-4o`).

    What `re.sub(r"(\[[a-z_]+:[^\]]*\])+$", "", model)` does, peeled from the end: that regex
    tried every position against every suffix after it (quadratic: a results file's model id of
    25,000 suffixes and a letter took minutes)."""
    end = len(model)
    while end and model[end - 1] == "]":
        segment = model.rfind("]", 0, end - 1) + 1  # a suffix holds no ']' but its last
        start = _SUFFIX_START.search(model, segment, end - 1)
        if start is None:
            break
        end = start.start()
    return model[:end]

# What each kind of eval file replays, for the error that names the other format.
_WANTS = {
    "weval": "a Weval blueprint replays a Weval comparison file (…_comparison.json) or a Weval run journal "
             "(….journal.jsonl)",
    "agentv": "an AgentV suite replays an AgentV results file (<out>/agentv/<dataset>/…jsonl) or an AgentV "
              "run journal (….journal.jsonl)",
}
_FORMATS = {  # format → (what it is, the kind of eval file that wrote it)
    "comparison": ("a Weval comparison file", "weval"),
    "weval-journal": ("a Weval run journal", "weval"),
    "agentv-results": ("an AgentV results file", "agentv"),
    "agentv-journal": ("an AgentV run journal", "agentv"),
}


def is_replay(model: str) -> bool:
    return model.strip().startswith("replay:")


@dataclass
class Recorded:
    text: str | None  # the final answer; None when the cell failed
    generated: list[str] = field(default_factory=list)  # every generated turn, in order
    history: list[dict[str, Any]] | None = None
    error: str | None = None
    # As the original call reported them: AgentV's latency and token-usage assertions score these (None: the
    # target reported no usage, and a token-usage check fails with "no data" again).
    usage: tuple[int, int] | None = (0, 0)
    latency_ms: float = 0.0
    tool_calls: tuple[ToolCall, ...] = ()  # AgentV: the answer's trace (tool-trajectory scores it)


@dataclass
class ReplaySource:
    path: Path
    answers: dict[str, dict[str, Recorded]]  # item → model → answer (AgentV: test id → target → answer)
    systems: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, raw_path: str, kind: str = "weval") -> ReplaySource:
        """The answers of `raw_path` for a run of a `kind` ("weval" | "agentv") file. Raises PlanError."""
        path = Path(raw_path.strip()).expanduser()
        if not path.is_file():
            raise PlanError(f"replay: no such results file: {path}")
        try:
            found = sniff(path)
            if found and _FORMATS[found][1] != kind:
                raise PlanError(f"replay: {path} is {_FORMATS[found][0]}; {_WANTS[kind]}")
            if kind == "agentv":
                if found == "agentv-journal":
                    return cls._from_journal(path)
                if found == "agentv-results":
                    return cls._from_agentv_results(path)
                if _is_comparison(path):  # a pretty-printed one: its first line says nothing
                    raise PlanError(f"replay: {path} is {_FORMATS['comparison'][0]}; {_WANTS[kind]}")
                raise PlanError(f"replay: {path} is neither an AgentV results file nor an evalspec AgentV run "
                                f"journal; {_WANTS[kind]}")
            if path.suffix == ".jsonl":
                return cls._from_journal(path)
            return cls._from_comparison(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PlanError(f"replay: cannot read {path}: {exc}") from None

    @classmethod
    def _from_comparison(cls, path: Path) -> ReplaySource:
        data = loads(path.read_text(encoding="utf-8"))  # nested too deeply: ValueError too
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
        if state.header is None:
            raise ValueError("not an evalspec journal (no header line)")
        answers: dict[str, dict[str, Recorded]] = {}
        for cell, turns in state.turns.items():
            texts = [turns[n].text for n in sorted(turns)]
            last = turns[max(turns)] if turns else None
            answers.setdefault(cell.item, {})[cell.model] = Recorded(
                texts[-1] if texts else "", texts, usage=_usage(last.usage if last else None),
                latency_ms=_ms(last.ms if last else None),
                tool_calls=calls_from_json(list(last.tool_calls) if last else None))
        for cell, failed in state.failures.items():
            answers.setdefault(cell.item, {}).setdefault(cell.model, Recorded(None, error=failed.error))
        # An AgentV journal records a failed cell as a score whose row says execution_error (no "fail" line).
        for cell, scored in state.scores.items():
            row = scored.result
            if row.get("execution_status") == "execution_error":
                answers.setdefault(cell.item, {}).setdefault(cell.model, Recorded(None, error=_error(row)))
        return cls(path, answers, dict(state.header.systems or {}))

    @classmethod
    def _from_agentv_results(cls, path: Path) -> ReplaySource:
        answers: dict[str, dict[str, Recorded]] = {}
        for row in read_records(path):
            if row.get("test_id") is None or row.get("target") is None:
                continue
            if row.get("execution_status") == "execution_error":
                rec = Recorded(None, error=_error(row))
            else:
                text = str(row.get("answer") or "")
                tokens = row.get("token_usage") or {}
                usage = _usage([tokens.get("input"), tokens.get("output")] if isinstance(tokens, dict) else None)
                messages = row.get("output") if isinstance(row.get("output"), list) else row.get("output_messages")
                rec = Recorded(text, [text], usage=usage, latency_ms=_ms(row.get("duration_ms")),
                               tool_calls=calls_from_messages(messages if isinstance(messages, list) else []))
            # A later row for the same cell wins, as a later line of a journal does.
            answers.setdefault(str(row["test_id"]), {})[str(row["target"])] = rec
        return cls(path, answers)

    def models_for(self, item: str) -> list[str]:
        return list((self.answers.get(item) or {}).keys())

    def answer(self, cell: Cell) -> Recorded | None:
        return (self.answers.get(cell.item) or {}).get(cell.model)

    def system_for(self, model: str) -> str | None:
        value = self.systems.get(model)
        return value if isinstance(value, str) else None

    def base_models(self) -> list[str]:
        models = (m for by_model in self.answers.values() for m in by_model)
        return list(dict.fromkeys(without_suffixes(m) for m in models))


def _is_comparison(path: Path) -> bool:
    try:
        data = loads(path.read_bytes())
    except ValueError:
        return False
    return isinstance(data, dict) and "allFinalAssistantResponses" in data


def _usage(value: Any) -> tuple[int, int] | None:
    """(input, output) tokens as recorded; None when none were (a target that reported no usage)."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return int(value[0]), int(value[1])
    return None


def _ms(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _error(row: dict[str, Any]) -> str:
    return str(row.get("error") or "execution error (no message recorded)")
