"""AgentV's LLM judges: the freeform `llm-judge`, checklist rubrics and score-range rubrics (§5).

The contract is AgentV's: template variables `{{ answer }}`, `{{ question }}`, `{{ criteria }}`,
`{{ reference_answer }}`, `{{ expected_output }}`, `{{ input }}`, `{{ output }}`, `{{ file_changes }}` and
the legacy names; the judge answers JSON — `{score, hits, misses, reasoning}` (freeform),
`{checks: [{id, satisfied, reasoning}]}` (checklist) or `{checks: [{id, score 0–10, reasoning}]}`
(score ranges). The wording of the prompts is ours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...agentv.model import AgentvTest, Message
from ...jsonio import dumps_indented, loads
from ...providers.redact import clip
from ...scoring.tagged_text import fenced_blocks

JUDGE_MAX_TOKENS = 1500

DEFAULT_TEMPLATE = """Grade the answer by how well it achieves the criteria for the task below.

A reference answer, when given, shows what a good answer looks like; the answer need not match it word \
for word but should cover the same key points in the same spirit. Be brief and specific.

[[ ## criteria ## ]]
{{ criteria }}

[[ ## question ## ]]
{{ question }}

[[ ## reference_answer ## ]]
{{ reference_answer }}

[[ ## answer ## ]]
{{ answer }}"""

FREEFORM_SYSTEM = """You are an exacting evaluator. Reply with one JSON object and nothing else:
{"score": <number from 0.0 to 1.0>, "hits": [<what the answer does well, short strings>], \
"misses": [<what it gets wrong or leaves out>], "reasoning": "<one or two sentences>"}"""

CHECKLIST_SYSTEM = """You are an exacting evaluator. For every rubric item decide whether the answer \
satisfies it. Reply with one JSON object and nothing else:
{"checks": [{"id": "<rubric id>", "satisfied": true | false, "reasoning": "<one sentence>"}], \
"overall_reasoning": "<one or two sentences>"}"""

RANGES_SYSTEM = """You are an exacting evaluator. Score the answer on every rubric criterion with an \
integer from 0 to 10, using the criterion's score ranges. Reply with one JSON object and nothing else:
{"checks": [{"id": "<rubric id>", "score": <integer 0-10>, "reasoning": "<one sentence>"}], \
"overall_reasoning": "<one or two sentences>"}"""

_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _messages_json(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.text()}
        if m.tool_calls:
            item["tool_calls"] = [{"tool": c.tool, "input": c.input, "output": c.output} for c in m.tool_calls]
        out.append(item)
    return out


def question_text(test: AgentvTest) -> str:
    """The task as the judge reads it: the user turns (and system turns), labelled when several."""
    msgs = [m for m in test.input_messages if m.role != "tool"]
    if len(msgs) == 1:
        return msgs[0].text()
    return "\n\n".join(f"@[{m.role}]:\n{m.text()}" for m in msgs)


def variables(test: AgentvTest, answer: str) -> dict[str, str]:
    expected = dumps_indented(_messages_json(test.expected_messages))
    inputs = dumps_indented(_messages_json(test.input_messages))
    output = dumps_indented([{"role": "assistant", "content": answer}])
    values = {
        "answer": answer.strip(),
        "question": question_text(test).strip(),
        "criteria": (test.criteria or "").strip(),
        "reference_answer": test.reference_answer.strip(),
        "expected_output": expected,
        "input": inputs,
        "output": output,
        "file_changes": "",
    }
    # AgentV's legacy names.
    values.update({
        "candidate_answer": values["answer"],
        "expected_messages": expected,
        "input_messages": inputs,
        "output_messages": output,
        "expected_outcome": values["criteria"],
    })
    return values


def render(template: str, values: Mapping[str, str]) -> str:
    """`{{ name }}` → value; unknown names are left as written (the checker reports them)."""
    return _VAR.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def freeform_prompt(template: str | None, test: AgentvTest, answer: str) -> tuple[str, str]:
    return FREEFORM_SYSTEM, render(template or DEFAULT_TEMPLATE, variables(test, answer))


def rubric_prompt(criteria: Sequence[Mapping[str, Any]], test: AgentvTest, answer: str) -> tuple[str, str]:
    """(system, user) for a rubric judge; score-range mode when any criterion has score_ranges."""
    ranges = any(c.get("score_ranges") for c in criteria)
    v = variables(test, answer)
    lines = []
    for c in criteria:
        line = f"- id: {c.get('id')}\n  outcome: {c.get('outcome')}"
        if c.get("weight", 1) != 1:
            line += f"\n  weight: {c.get('weight')}"
        for r in c.get("score_ranges") or []:
            lo, hi = (r.get("score_range") or [0, 0])[:2]
            line += f"\n  {lo}-{hi}: {r.get('outcome')}"
        lines.append(line)
    user = f"""[[ ## question ## ]]
{v['question']}

[[ ## criteria ## ]]
{v['criteria']}

[[ ## reference_answer ## ]]
{v['reference_answer']}

[[ ## answer ## ]]
{v['answer']}

[[ ## rubric ## ]]
{chr(10).join(lines)}"""
    return (RANGES_SYSTEM if ranges else CHECKLIST_SYSTEM), user


class JudgeReplyError(ValueError):
    pass


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in a judge's answer (code fences and text around it tolerated)."""
    if not text or not text.strip():
        raise JudgeReplyError("the judge returned an empty answer")
    candidates = fenced_blocks(text)[:1]
    start, end = text.find("{"), text.rfind("}")
    if start >= 0 and end > start:
        candidates.append(text[start:end + 1])
    for c in candidates:
        try:
            value = loads(c)  # a judge's reply: nested too deeply is a ValueError too (jsonio)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise JudgeReplyError(f"the judge's answer is not a JSON object: {clip(text, 120)!r}")


def freeform_result(data: Mapping[str, Any]) -> tuple[float, list[str], list[str], str | None]:
    raw = data.get("score")
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise JudgeReplyError(f"the judge's answer has no numeric score: {raw!r}")
    score = min(1.0, max(0.0, float(raw)))
    hits = [str(h) for h in data.get("hits") or [] if isinstance(h, str | int | float)][:8]
    misses = [str(m) for m in data.get("misses") or [] if isinstance(m, str | int | float)][:8]
    reasoning = data.get("reasoning")
    return score, hits, misses, reasoning if isinstance(reasoning, str) else None


def rubric_checks(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    checks = data.get("checks")
    if not isinstance(checks, list):
        raise JudgeReplyError("the judge's answer has no 'checks' list")
    return [c for c in checks if isinstance(c, dict)]
