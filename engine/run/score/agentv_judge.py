"""AgentV's LLM judges: the freeform `llm-judge`, checklist rubrics and score-range rubrics (§5).

The contract is AgentV's: template variables `{{ answer }}`, `{{ question }}`, `{{ criteria }}`,
`{{ reference_answer }}`, `{{ expected_output }}`, `{{ input }}`, `{{ output }}`, `{{ file_changes }}` and
the legacy names; the judge answers JSON — `{score, hits, misses, reasoning}` (freeform),
`{checks: [{id, satisfied, reasoning}]}` (checklist) or `{checks: [{id, score 0–10, reasoning}]}`
(score ranges). The wording of the prompts is ours; reading the reply is AgentV's (parse_json_reply,
freeform_result, rubric_checks: a reply outside its schema is not scored, as AgentV skips it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from ...agentv.model import AgentvTest, Message
from ...jsonio import dumps_indented
from ...providers.redact import clip
from ...scoring.js_text import js_json_parse, json_blob

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


_FENCE = re.compile(r"```json\n?|```")


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in a judge's answer, as AgentV's parseJsonFromText finds it: code fences removed,
    then the text from the first `{` to the last `}` (else all of it) parsed as JSON."""
    if not text or not text.strip():
        raise JudgeReplyError("the judge returned an empty answer")
    cleaned = _FENCE.sub("", text).strip()
    try:
        value = js_json_parse(json_blob(cleaned))
    except ValueError:
        raise JudgeReplyError(f"the judge's answer is not a JSON object: {clip(text, 120)!r}") from None
    if not isinstance(value, dict):
        raise JudgeReplyError(f"the judge's answer is not a JSON object: {clip(text, 120)!r}")
    return value


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _strings(data: Mapping[str, Any], key: str) -> list[str]:
    if key not in data:
        return []
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise JudgeReplyError(f"the judge's answer has '{key}' that is not a list of strings")
    return value


def freeform_result(data: Mapping[str, Any]) -> tuple[float, list[str], list[str], str | None]:
    """AgentV's freeform schema: `score` a number in [0, 1]; `hits`, `misses` lists of strings and
    `reasoning` a string when given (the first 4 non-empty hits and misses are kept). A reply outside it
    is not scored (AgentV skips the assertion)."""
    raw = data.get("score")
    if not _number(raw) or not 0 <= raw <= 1:
        raise JudgeReplyError(f"the judge's answer has no score between 0 and 1: {raw!r}")
    hits = [h for h in _strings(data, "hits") if h.strip()][:4]
    misses = [m for m in _strings(data, "misses") if m.strip()][:4]
    reasoning = data.get("reasoning")
    if "reasoning" in data and not isinstance(reasoning, str):
        raise JudgeReplyError("the judge's answer has a 'reasoning' that is not a string")
    return float(raw), hits, misses, reasoning


def rubric_checks(data: Mapping[str, Any], *, ranges: bool = False) -> list[dict[str, Any]]:
    """The judge's checks, held to AgentV's schema: checklist checks are {id: string, satisfied:
    boolean, reasoning: string} with `overall_reasoning` a string; score-range checks {id: string,
    score: an integer 0-10, reasoning?: string}. One check outside it and the reply is not scored."""
    checks = data.get("checks")
    if not isinstance(checks, list):
        raise JudgeReplyError("the judge's answer has no 'checks' list")
    overall = data.get("overall_reasoning")
    if not (isinstance(overall, str) or (ranges and "overall_reasoning" not in data)):
        raise JudgeReplyError("the judge's answer has no 'overall_reasoning' text")
    for k, check in enumerate(checks):
        if not isinstance(check, dict) or not isinstance(check.get("id"), str):
            raise JudgeReplyError(f"the judge's check {k} has no 'id' text")
        if ranges:
            score = check.get("score")
            if not _number(score) or not float(score).is_integer() or not 0 <= score <= 10:
                raise JudgeReplyError(f"the judge's check '{check['id']}' has no integer score from 0 to 10")
            if "reasoning" in check and not isinstance(check["reasoning"], str):
                raise JudgeReplyError(f"the judge's check '{check['id']}' has a reasoning that is not text")
        elif not isinstance(check.get("satisfied"), bool) or not isinstance(check.get("reasoning"), str):
            raise JudgeReplyError(f"the judge's check '{check['id']}' needs 'satisfied' (true/false) and "
                                  "'reasoning' (text)")
    return checks
