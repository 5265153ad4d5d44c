"""Walks AgentV's own answers (../shared/vectors/agentv/, see its README) through evalspec's code paths:
the checker the CLI runs (analysis.analyze), the run's scoring dispatch (Agentv.assertion and
composite, with the judge's reply read by score/judged_types.judged_entry), its rows (Agentv.row), the
trial stop rule and combination (scoring/trials.py, agentv_stages._with_trials).

Only the transport is replaced: the target's answer is the vector's `response` (what it reports: usage,
cost, duration, tool calls) and every judge call answers the vector's `judge_reply`. `compare_*` return
the differences of one vector as text (empty: it matches).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from evalspec.analysis import analyze
from evalspec.file_source import DiskSource
from evalspec.findings import Severity
from evalspec.providers.tool_calls import calls_from_json
from evalspec.run.agentv_stages import Agentv, _with_trials
from evalspec.run.score.judged_types import judged_entry
from evalspec.run.write.agentv_measured import Measured
from evalspec.scoring.trials import Attempt, TrialSettings, combine, stop_reason

STARTED = datetime(2026, 1, 1, tzinfo=UTC)
VECTORS = Path(__file__).resolve().parents[2] / ".." / "shared" / "vectors" / "agentv"


def _undefined(value: Any) -> Any:
    """The README's {"$$": "NaN"|"undefined"|…} made Python values (undefined: dropped by the caller)."""
    if isinstance(value, dict):
        if set(value) == {"$$"}:
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(value["$$"], _UNDEFINED)
        return {k: _undefined(v) for k, v in value.items() if _undefined(v) is not _UNDEFINED}
    if isinstance(value, list):
        return [_undefined(v) for v in value]
    return value


_UNDEFINED = object()


@cache
def vectors(name: str) -> list[dict[str, Any]]:
    with (VECTORS / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# --- scoring: assertions.jsonl and tests.jsonl ------------------------------------------------------

class _Judges:
    """Every judge call answers `reply` (the runner's own reading of it: judged_entry)."""

    def __init__(self, reply: str | None) -> None:
        self.reply = reply

    async def judged(self, task: Any, index: int, a: Any, answer: str) -> dict[str, Any]:
        return judged_entry(a, self.reply if self.reply is not None else "")


def _suite_text(vector: dict[str, Any], assertions: list[Any]) -> str:
    test: dict[str, Any] = {"id": "v", "input": "Q"}
    if "expected_output" in vector:
        test["expected_output"] = vector["expected_output"]
    test["assert"] = assertions
    suite: dict[str, Any] = {"description": "vectors", "tests": [test]}
    if "trials" in vector:
        suite["execution"] = {"trials": vector["trials"]}
    # JSON is YAML; characters YAML reads as line breaks (U+0085, U+2028, U+2029) or does not allow raw
    # (C1 controls, lone surrogates) are written as \u escapes, the rest as they are.
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(suite, ensure_ascii=False))


_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _measured(response: dict[str, Any]) -> Measured:
    usage = response.get("token_usage")
    calls = calls_from_json([{"tool": c["tool"], **({"input": c["input"]} if "input" in c else {}),
                              **({"duration_ms": c["duration_ms"]} if "duration_ms" in c else {})}
                             for c in response.get("tool_calls") or []])
    return Measured(answer=response["answer"],
                    usage=(usage["input"], usage["output"]) if isinstance(usage, dict) else None,
                    duration_ms=response.get("duration_ms"), cost_usd=response.get("cost_usd"), priced=False,
                    trace=[c.to_json() for c in calls], calls=calls)


def score_vector(vector: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """(evalspec's row for the vector's test, the checker's errors) — the row is None when the checker
    refuses the file, as `evalspec run` would."""
    vector = _undefined(vector)
    assertions = [vector["assertion"]] if "assertion" in vector else vector["assert"]
    analysis = analyze(_suite_text(vector, assertions), "evals/dataset.eval.yaml", source=DiskSource({}))
    errors = [f"{f.code}: {f.message}" for f in analysis.findings if f.severity == Severity.ERROR]
    if errors or analysis.agentv is None:
        return None, errors
    assert analysis.agentv.suite is not None
    test = analysis.agentv.suite.tests[0]
    run: Any = Agentv.__new__(Agentv)
    run.rounds = None
    run.judges = _Judges(vector.get("judge_reply"))
    run.plan = SimpleNamespace(dataset="vectors")
    task: Any = SimpleNamespace(test=test, judge=SimpleNamespace(name="judge"), cell=("v", "t"),
                                target=SimpleNamespace(name="t"))

    async def attempt(k: int, response: dict[str, Any]) -> dict[str, Any]:
        measured = _measured(response)
        items = await run.assertions(task, measured.answer, measured.metrics(), measured, attempt=k)
        return run.row(task, STARTED, measured.answer, measured.usage, measured.duration_ms or 0.0, items,
                        cost_usd=measured.cost_usd)

    async def rows() -> dict[str, Any]:
        if "responses" not in vector:
            return await attempt(0, vector["response"])
        settings = TrialSettings.of(vector["trials"])
        done: list[dict[str, Any]] = []
        attempts: list[Attempt] = []
        stopped = None
        for k, response in enumerate(vector["responses"][:settings.count]):
            row = await attempt(k, response)
            done.append(row)
            attempts.append(Attempt(row["score"], row.get("verdict"), row["cost_usd"]))
            stopped = stop_reason(settings, attempts)
            if stopped is not None:
                break
        return _with_trials(done, combine(settings, attempts, stopped or "error",
                                          [str(r["execution_status"]) for r in done]))

    return asyncio.run(rows()), []


_ENTRY_KEYS = ("name", "type", "score", "verdict", "weight", "hits", "misses", "reasoning", "details")


def _entry_differences(where: str, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    out = []
    for key in _ENTRY_KEYS:
        if key in ("reasoning", "details") and key not in want:
            continue
        if key == "weight" and "weight" not in want:
            continue
        w, g = want.get(key), got.get(key)
        if key == "score" and isinstance(w, int | float) and isinstance(g, int | float):
            same = w == g
        else:
            same = w == g
        if not same:
            out.append(f"{where}.{key}: reference {w!r}, evalspec {g!r}")
    children = want.get("children")
    if children is not None:
        nested = got.get("scores") or []
        if len(nested) != len(children):
            out.append(f"{where}.children: reference {len(children)}, evalspec {len(nested)}")
        for j, (w, g) in enumerate(zip(children, nested, strict=False)):
            out.extend(_entry_differences(f"{where}.children[{j}]", w, g))
    return out


def compare_scoring(vector: dict[str, Any]) -> list[str]:
    ref = _undefined(vector["reference"])
    row, errors = score_vector(vector)
    if row is None:
        return [f"refused by the checker: {errors}"]
    out = []
    for key in ("score", "verdict", "execution_status"):
        if ref[key] != row.get(key):
            out.append(f"{key}: reference {ref[key]!r}, evalspec {row.get(key)!r}")
    wanted = [ref["assertion"]] if "assertion" in ref else ref["assertions"]
    got = row["scores"]
    if len(wanted) != len(got):
        out.append(f"assertions: reference {len(wanted)}, evalspec {len(got)}")
    for j, (w, g) in enumerate(zip(wanted, got, strict=False)):
        out.extend(_entry_differences(f"assertions[{j}]", w, g))
    if "trials" in ref:
        got_trials = [{"attempt": t["attempt"], "score": t["score"], "verdict": t["verdict"],
                       **({"cost_usd": t["cost_usd"]} if t["cost_usd"] is not None else {})}
                      for t in row.get("trials") or []]
        if got_trials != ref["trials"]:
            out.append(f"trials: reference {ref['trials']!r}, evalspec {got_trials!r}")
    return out


# --- loading: load.jsonl -----------------------------------------------------------------------------

def load_vector(vector: dict[str, Any], folder: Path) -> Any:
    """The analysis `evalspec check`/`run` make of the vector's repository (written under `folder`)."""
    from evalspec.analysis import analyze_file

    (folder / ".git").mkdir(parents=True, exist_ok=True)  # the repository's root, as AgentV's folder was
    for rel, text in vector["files"].items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    suite = folder / "evals" / "dataset.eval.yaml"
    suite.parent.mkdir(parents=True, exist_ok=True)
    suite.write_text(vector["suite"], encoding="utf-8")
    return analyze_file(suite, source=DiskSource({}))


def _evaluator(a: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": a.name, "type": "llm-judge" if a.type == "rubrics" else a.type}
    if a.weight != 1.0:
        out["weight"] = a.weight
    if a.required is not False:
        out["required"] = a.required
    if a.negate:
        out["negate"] = True
    if a.children:
        out["children"] = [_evaluator(c) for c in a.children]
    return out


def _reference_evaluator(e: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in e.items() if k in ("name", "type", "weight", "required", "negate", "children")}
    if out.get("weight") == 1:
        del out["weight"]
    if "children" in out:
        out["children"] = [_reference_evaluator(c) for c in out["children"]]
    return out


def compare_load(vector: dict[str, Any], folder: Path) -> list[str]:
    ref = vector["reference"].get("load")
    if ref is None:
        return []
    analysis = load_vector(vector, folder)
    errors = [f"{f.code}: {f.message}" for f in analysis.findings if f.severity == Severity.ERROR]
    refused = bool(errors) or analysis.agentv is None or analysis.agentv.suite is None
    if not ref["accepted"]:
        return [] if refused else [f"accepted; the reference's loader refused it: {ref['error']}"]
    if refused:
        return [f"refused ({errors[:3]}); the reference's loader accepted it"]
    out = []
    tests = analysis.agentv.suite.tests
    want = ref["tests"]
    if [t.id for t in tests] != [t["id"] for t in want]:
        out.append(f"tests: reference {[t['id'] for t in want]}, evalspec {[t.id for t in tests]}")
    for got, w in zip(tests, want, strict=False):
        evaluators = [_evaluator(a) for a in got.assertions]
        wanted = [_reference_evaluator(e) for e in w["evaluators"]]
        if evaluators != wanted and not (got.uses_default_judge and not wanted):
            out.append(f"{w['id']}.evaluators: reference {wanted}, evalspec {evaluators}")
        if (got.criteria or None) != (w.get("criteria") or None):
            out.append(f"{w['id']}.criteria: reference {w.get('criteria')!r}, evalspec {got.criteria!r}")
    trials = ref.get("trials")
    if trials is not None and analysis.agentv.suite.trials is not None:
        got_trials = {k: v for k, v in analysis.agentv.suite.trials.items() if v is not None}
        if {k: v for k, v in trials.items() if v is not None} != got_trials:
            out.append(f"trials: reference {trials}, evalspec {got_trials}")
    return out
