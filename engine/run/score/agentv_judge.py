"""AgentV's LLM judges: the freeform `llm-judge`, checklist rubrics and score-range rubrics (§5).

The contract is AgentV's: template variables `{{ answer }}`, `{{ question }}`, `{{ criteria }}`,
`{{ reference_answer }}`, `{{ expected_output }}`, `{{ input }}`, `{{ output }}`, `{{ file_changes }}` and
nothing else (AgentV v2.19.0 leaves `{{ candidate_answer }}` and the other legacy names as written); the judge
answers JSON — `{score, hits, misses, reasoning}` (freeform),
`{checks: [{id, satisfied, reasoning}]}` (checklist) or `{checks: [{id, score 0–10, reasoning}]}`
(score ranges). The prompts are AgentV v2.19.0's, word for word (system: the output schema; user: the
template or the rubric prompt); reading the reply is AgentV's (parse_json_reply, freeform_result,
rubric_checks: a reply outside its schema is not scored, as AgentV skips it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from ...agentv.model import AgentvTest, ContentBlock, Message
from ...jsonio import dumps_indented
from ...providers.redact import clip
from ...scoring.js_text import js_json_parse, json_blob

# What a cost estimate assumes an AgentV judge answers with (AgentV sets no max tokens on a judge call).
JUDGE_OUTPUT_ESTIMATE = 1500

# AgentV v2.19.0's own text (evaluators/llm-judge.ts): DEFAULT_EVALUATOR_TEMPLATE, buildOutputSchema,
# buildRubricOutputSchema, buildScoreRangeOutputSchema; the rubric prompts are built as its
# buildRubricPrompt and buildScoreRangePrompt build them.
DEFAULT_TEMPLATE = """You are an expert evaluator. Your goal is to grade the answer based on how well it achieves \
the criteria for the original task.

Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer may \
be a simple text response, or it may contain a sequence of expected agent messages including tool calls. When it \
contains multiple messages, the last message represents the final expected answer. The answer does not need to \
match it verbatim, but should capture the key points and follow the same spirit.

Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose explanations.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{question}}

[[ ## reference_answer ## ]]
{{reference_answer}}

[[ ## answer ## ]]
{{answer}}"""

FREEFORM_SYSTEM = """You must respond with a single JSON object matching this schema:

{
  "score": <number between 0.0 and 1.0>,
  "hits": [<array of strings, max 4 items, brief specific achievements>],
  "misses": [<array of strings, max 4 items, brief specific failures or omissions, empty if none>],
  "reasoning": "<string, concise explanation for the score, 1-2 sentences max>"
}"""

CHECKLIST_SYSTEM = """You are an expert evaluator. Evaluate the candidate answer against each rubric item.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (rubric id)",
      "satisfied": boolean,
      "reasoning": "string (brief explanation)"
    }
  ],
  "overall_reasoning": "string (summary)"
}"""

RANGES_SYSTEM = """You are an expert evaluator. Score the candidate answer on each criterion.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (criterion id)",
      "score": integer (0-10),
      "reasoning": "string (brief explanation for score)"
    }
  ],
  "overall_reasoning": "string (summary, optional)"
}

Important: The "score" must be an integer from 0 to 10 that falls within one of the defined score ranges for that \
criterion."""

_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _messages_json(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.text()}
        if m.tool_calls:
            item["tool_calls"] = [{"tool": c.tool, "input": c.input, "output": c.output} for c in m.tool_calls]
        out.append(item)
    return out


def input_segments(test: AgentvTest) -> list[dict[str, Any]]:
    """`{{ input }}`: AgentV's `input_segments` (loaders/message-processor.ts): each input message's content as
    segments, without roles: a string or a structured object (as indented JSON) is a text segment, a list's
    blocks are kept as written ({type, value}). A file block AgentV reads into {type: file, path, text,
    resolvedPath} is written here as {type: file, value} (left open)."""
    segments: list[dict[str, Any]] = []
    for m in test.input_messages:
        content = m.content
        if isinstance(content, str):
            segments.append({"type": "text", "value": content})
        elif isinstance(content, dict):
            segments.append({"type": "text", "value": dumps_indented(content)})
        elif isinstance(content, list):
            segments.extend({"type": b.type, "value": b.value} for b in content if isinstance(b, ContentBlock))
    return segments


def _text_segments(m: Message) -> list[str]:
    """A message's visible text as AgentV's prompt builder takes it (formatting/prompt-builder.ts): a string,
    a structured object as indented JSON, a list's non-blank text blocks (files: left open)."""
    content = m.content
    if isinstance(content, str):
        return [content] if content.strip() else []
    if isinstance(content, dict):
        return [dumps_indented(content)]
    if isinstance(content, list):
        return [str(b.value) for b in content if isinstance(b, ContentBlock) and b.type == "text"
                and isinstance(b.value, str) and b.value.strip()]
    return []


def question_text(test: AgentvTest) -> str:
    """`{{ question }}` as AgentV builds it (buildPromptInputs): with role markers (`@[User]:`, messages
    without visible text left out, joined by a blank line) when the input has an assistant or tool turn or
    more than one message with text; else the text of its segments, each trimmed, joined by a blank line."""
    per_message = [(m, _text_segments(m)) for m in test.input_messages]
    with_text = sum(1 for _, parts in per_message if parts)
    if any(m.role in ("assistant", "tool") for m in test.input_messages) or with_text > 1:
        return "\n\n".join(f"@[{m.role[:1].upper()}{m.role[1:]}]:\n" + "\n".join(parts)
                           for m, parts in per_message if parts)
    flat = [seg["value"] for seg in input_segments(test) if seg.get("type") == "text"]
    return "\n\n".join(p.strip() for p in flat if isinstance(p, str) and p.strip())


def variables(test: AgentvTest, answer: str) -> dict[str, str]:
    expected = dumps_indented(_messages_json(test.expected_messages))
    inputs = dumps_indented(input_segments(test))
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
    return values


def render(template: str, values: Mapping[str, str]) -> str:
    """`{{ name }}` → value; unknown names are left as written (the checker reports them)."""
    return _VAR.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def freeform_prompt(template: str | None, test: AgentvTest, answer: str) -> tuple[str, str]:
    return FREEFORM_SYSTEM, render(template or DEFAULT_TEMPLATE, variables(test, answer))


def rubric_prompt(criteria: Sequence[Mapping[str, Any]], test: AgentvTest, answer: str) -> tuple[str, str]:
    """(system, user) for a rubric judge, as AgentV's buildRubricPrompt / buildScoreRangePrompt: score-range
    mode when any criterion has score_ranges. The question, criteria, reference answer and answer go in
    as they are (not trimmed, unlike the freeform template's); the reference answer only when not blank."""
    from ...weval.js_values import js_string

    ranges = any(c.get("score_ranges") for c in criteria)
    head = (["You are an expert evaluator. Score the candidate answer on each criterion below using the provided "
             "score ranges.",
             "For each criterion, output an integer score from 0 to 10 based on which score range best matches the "
             "answer."] if ranges else
            ["You are an expert evaluator. Evaluate the candidate answer against each rubric item below."])
    parts = [*head, "", "[[ ## question ## ]]", question_text(test), "", "[[ ## criteria ## ]]", test.criteria or "", ""]
    reference = test.reference_answer
    if reference.strip():
        parts += ["[[ ## reference_answer ## ]]", reference, ""]
    parts += ["[[ ## answer ## ]]", answer, ""]
    if ranges:
        parts.append("[[ ## scoring_criteria ## ]]")
        for c in criteria:
            weight = c.get("weight", 1)
            label = f" (weight: {js_string(weight)})" if weight != 1 else ""
            if c.get("required_min_score") is not None:
                label += f" [REQUIRED: min score {js_string(c['required_min_score'])}]"
            parts += ["", f"### Criterion: {c.get('id')}{label}"]
            if c.get("outcome"):
                parts.append(f"Description: {c['outcome']}")
            if c.get("score_ranges"):
                parts.append("Score ranges:")
                for r in c["score_ranges"]:
                    lo, hi = [*(r.get("score_range") or []), None, None][:2]
                    span = js_string(lo) if lo == hi else f"{js_string(lo)}-{js_string(hi)}"
                    parts.append(f"  - Score {span}: {js_string(r.get('outcome'))}")
        parts += ["", "For each criterion, provide an integer score 0-10 that matches one of its defined score ranges."]
        return RANGES_SYSTEM, "\n".join(parts)
    parts.append("[[ ## rubrics ## ]]")
    for c in criteria:
        weight = c.get("weight", 1)
        label = (" (REQUIRED)" if c.get("required") else "") + (f" (weight: {js_string(weight)})" if weight != 1 else "")
        parts.append(f"- [{c.get('id')}]{label}: {js_string(c.get('outcome'))}")
    parts += ["", "For each rubric, determine if it is satisfied and provide brief reasoning."]
    return CHECKLIST_SYSTEM, "\n".join(parts)


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
