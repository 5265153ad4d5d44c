"""A validator for Weval comparison files, read from `../shared/spec/weval-output-format.md` itself.

The field tables (top level, `evaluationResults`) and the TypeScript blocks (`CoverageResult`,
`PointAssessment`, `IndividualJudgement`, `ConversationMessage`) are parsed from the document, so a
field the document lists and a file lacks (or the reverse) is found without a hand-copied list.
`problems(data)` returns every difference as `path: what` text; an empty list is a valid file.

Where the reference's own output departs from the document, the validator follows the reference and
says so: `promptContexts` keeps `{"role": "assistant", "content": null}` for a turn the model generates
(the reference stores its normalized messages as they are, blueprint-parser.ts maps `assistant: null`
to `content: null`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "weval-output-format.md"

# What a run paid is in its cost file (run/cost/cost_file.py), not in the comparison file: no field of
# evalspec's own is allowed there.
EVALSPEC_EXTENSIONS: frozenset[str] = frozenset()


def _table(text: str, heading: str) -> dict[str, tuple[str, bool]]:
    """`| key | type | description |` rows under `heading`: key → (type, optional)."""
    start = text.index(heading)
    rows: dict[str, tuple[str, bool]] = {}
    started = False
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            m = re.fullmatch(r"`([^`]+)`", cells[0])
            if m and m.group(1) != "Key":
                type_cell = cells[1]
                rows[m.group(1)] = (re.sub(r"[`\s]|\(optional\)", "", type_cell), "(optional)" in type_cell)
        elif started:
            break
    return rows


def _ts_fields(text: str, heading: str) -> dict[str, str]:
    """`"name": type, // comment` (or `name: type;`) lines of the first code block after `heading`."""
    start = text.index(heading)
    block = text[start:].split("```", 2)[1]
    out: dict[str, str] = {}
    for line in block.splitlines():
        m = re.match(r'\s*"?(\w+)"?\??\s*:\s*([^,;/]+)', line)
        if m and m.group(1) not in ("interface", "typescript"):
            out[m.group(1)] = m.group(2).strip()
    return out


class Spec:
    def __init__(self, path: Path = SPEC) -> None:
        text = path.read_text(encoding="utf-8")
        self.top = _table(text, "## 1. Top-Level Structure")
        self.evaluation = _table(text, "## 2. Evaluation Results Structure")
        self.coverage = _ts_fields(text, "#### Successful `CoverageResult`")
        self.assessment = _ts_fields(text, "#### `PointAssessment` Object")
        self.judgement = _ts_fields(text, "### `IndividualJudgement` Object")
        self.message = _ts_fields(text, "### `ConversationMessage` Object")
        self.roles = set(re.findall(r"'(\w+)'", self.message.get("role", "")))


def _is(value: Any, ts_type: str) -> bool:
    ts_type = ts_type.strip()
    if ts_type.endswith("[]"):
        return isinstance(value, list) and all(_is(v, ts_type[:-2]) for v in value)
    return {
        "string": lambda v: isinstance(v, str),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
    }.get(ts_type, lambda v: True)(value)


def problems(data: dict[str, Any], spec: Spec | None = None) -> list[str]:
    spec = spec or Spec()
    out: list[str] = []

    def check_fields(obj: dict[str, Any], table: dict[str, tuple[str, bool]], where: str) -> None:
        for key, (ts_type, optional) in table.items():
            if key not in obj:
                if not optional:
                    out.append(f"{where}.{key}: missing (the format requires it)")
            elif ts_type in ("string", "string[]", "object") and not _is(obj[key], ts_type):
                out.append(f"{where}.{key}: not {ts_type}: {obj[key]!r:.80}")
        for key in obj:
            if key not in table:
                out.append(f"{where}.{key}: not in the format")

    # evalspec's own top-level additions, which the dashboard ignores: real tokens and cost (run/cost/spend.py).
    check_fields({k: v for k, v in data.items() if k not in EVALSPEC_EXTENSIONS}, spec.top, "$")
    models = set(data.get("effectiveModels") or [])
    prompt_ids = list(data.get("promptIds") or [])
    if prompt_ids != sorted(prompt_ids):
        out.append("$.promptIds: not sorted")

    def check_messages(msgs: Any, where: str, *, generated_null: bool) -> None:
        if isinstance(msgs, str):
            return  # a single string is the format's other form
        if not isinstance(msgs, list):
            out.append(f"{where}: neither a string nor a list of messages")
            return
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or set(m) != set(spec.message):
                out.append(f"{where}[{i}]: not a ConversationMessage {{{', '.join(spec.message)}}}: {m!r:.80}")
                continue
            if m["role"] not in spec.roles:
                out.append(f"{where}[{i}].role: {m['role']!r} is not one of {sorted(spec.roles)}")
            if m["content"] is None and generated_null and m["role"] == "assistant":
                continue  # the reference's form for `assistant: null` (see the module's docstring)
            if not isinstance(m["content"], str):
                out.append(f"{where}[{i}].content: not a string: {m['content']!r:.80}")

    for key in ("promptContexts", "allFinalAssistantResponses", "fullConversationHistories",
                "llmCoverageScores", "perPromptSimilarities"):
        mapping = data.get(key, (data.get("evaluationResults") or {}).get(key))
        if isinstance(mapping, dict) and set(mapping) - set(prompt_ids):
            out.append(f"{key}: prompt ids not in promptIds: {sorted(set(mapping) - set(prompt_ids))}")
    for pid, ctx in (data.get("promptContexts") or {}).items():
        check_messages(ctx, f"$.promptContexts[{pid!r}]", generated_null=True)
    for pid, row in (data.get("allFinalAssistantResponses") or {}).items():
        for mid, text in row.items():
            if mid not in models:
                out.append(f"$.allFinalAssistantResponses[{pid!r}][{mid!r}]: not an effective model")
            if not isinstance(text, str):
                out.append(f"$.allFinalAssistantResponses[{pid!r}][{mid!r}]: not text")
    for pid, row in (data.get("fullConversationHistories") or {}).items():
        for mid, msgs in row.items():
            check_messages(msgs, f"$.fullConversationHistories[{pid!r}][{mid!r}]", generated_null=False)
    for pid, row in (data.get("errors") or {}).items():
        for mid, text in row.items():
            if not isinstance(text, str):
                out.append(f"$.errors[{pid!r}][{mid!r}]: not text")
    for pid, points in (data.get("extractedKeyPoints") or {}).items():
        if not _is(points, "string[]"):
            out.append(f"$.extractedKeyPoints[{pid!r}]: not string[]")

    results = data.get("evaluationResults") or {}
    check_fields(results, spec.evaluation, "$.evaluationResults")
    methods = data.get("evalMethodsUsed") or []
    if ("similarityMatrix" in results) != ("embedding" in methods):
        out.append("$.evaluationResults.similarityMatrix: present exactly when 'embedding' is used")
    if ("llmCoverageScores" in results) != ("llm-coverage" in methods):
        out.append("$.evaluationResults.llmCoverageScores: present exactly when 'llm-coverage' is used")

    def check_similarity(matrix: Any, where: str) -> None:
        if not isinstance(matrix, dict):
            out.append(f"{where}: not a SimilarityScore object")
            return
        for a, row in matrix.items():
            if not isinstance(row, dict):
                out.append(f"{where}[{a!r}]: not an object")
                continue
            for b, v in row.items():
                if not _is(v, "number"):
                    out.append(f"{where}[{a!r}][{b!r}]: not a number: {v!r}")
                elif not -1 - 1e-9 <= v <= 1 + 1e-9:
                    out.append(f"{where}[{a!r}][{b!r}]: {v} is not a cosine similarity")

    if "similarityMatrix" in results:
        check_similarity(results["similarityMatrix"], "$.evaluationResults.similarityMatrix")
    for pid, matrix in (results.get("perPromptSimilarities") or {}).items():
        check_similarity(matrix, f"$.evaluationResults.perPromptSimilarities[{pid!r}]")

    for pid, by_model in (results.get("llmCoverageScores") or {}).items():
        for mid, r in by_model.items():
            where = f"$.evaluationResults.llmCoverageScores[{pid!r}][{mid!r}]"
            if mid not in models:
                out.append(f"{where}: not an effective model")
            if not isinstance(r, dict):
                out.append(f"{where}: not a CoverageResult")
                continue
            extra = set(r) - set(spec.coverage) - {"error"}
            if extra:
                out.append(f"{where}: fields not in the format: {sorted(extra)}")
            if set(r) == {"error"}:
                if not isinstance(r["error"], str):
                    out.append(f"{where}.error: not text")
                continue  # the error form
            for key, ts_type in spec.coverage.items():
                if key == "avgCoverageExtent" and key not in r:
                    # The format's marker for "nothing was scored" is the error field.
                    if not isinstance(r.get("error"), str):
                        out.append(f"{where}: neither avgCoverageExtent nor an error saying why")
                    continue
                if key not in r:
                    out.append(f"{where}.{key}: missing")
                elif not _is(r[key], "object[]" if key == "pointAssessments" else ts_type.split()[0]):
                    out.append(f"{where}.{key}: not {ts_type}")
            if isinstance(r.get("pointAssessments"), list) and r.get("keyPointsCount") != len(r["pointAssessments"]):
                out.append(f"{where}.keyPointsCount: {r.get('keyPointsCount')} points counted, "
                           f"{len(r['pointAssessments'])} assessed")
            if _is(r.get("avgCoverageExtent"), "number") and not 0 <= r["avgCoverageExtent"] <= 1:
                out.append(f"{where}.avgCoverageExtent: {r['avgCoverageExtent']} is outside 0–1")
            for i, pa in enumerate(r.get("pointAssessments") or []):
                pwhere = f"{where}.pointAssessments[{i}]"
                for key, value in pa.items():
                    if key not in spec.assessment:
                        out.append(f"{pwhere}.{key}: not in the format")
                    elif value is None and key == "coverageExtent":
                        if not isinstance(pa.get("error"), str):
                            out.append(f"{pwhere}: no coverageExtent and no error saying why")
                    elif key == "individualJudgements":
                        for j, ij in enumerate(value):
                            for k2, t2 in spec.judgement.items():
                                if not _is(ij.get(k2), t2.split()[0]):
                                    out.append(f"{pwhere}.individualJudgements[{j}].{k2}: not {t2}")
                    elif not _is(value, spec.assessment[key].split()[0]):
                        out.append(f"{pwhere}.{key}: not {spec.assessment[key]}: {value!r:.60}")
                if "keyPointText" not in pa:
                    out.append(f"{pwhere}.keyPointText: missing")
    return out
