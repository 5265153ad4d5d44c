"""The LLM judge of Weval text points, and key-point extraction from an `ideal`, as the reference judges them.

A judge sees the conversation (generated assistant turns marked as such), the text to assess and one
criterion, and answers `<reflection>…</reflection><classification>CLASS_…</classification>` on the
reference's 10-class scale, at temperature 0. The wording is ours; the contract (inputs, scale, answer
format, temperature, the judge id `approach(model)` / `id(model)`) is the reference's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ...scoring.tagged_text import all_tagged
from ...weval.model import Judge
from .judge_calls import JUDGE_MAX_TOKENS as JUDGE_MAX_TOKENS

# name, score, guideline: the reference's scale (CLASS_ prefix, case-insensitive answers).
SCALE: tuple[tuple[str, float, str], ...] = (
    ("CLASS_UTTERLY_UNMET", 0.0, "The text contradicts or works against the criterion."),
    ("CLASS_UNMET", 0.001, "The criterion is not met."),
    ("CLASS_TRACE", 0.125, "Only a trace or a hint of the criterion is present."),
    ("CLASS_SLIGHT", 0.25, "The criterion is slightly present."),
    ("CLASS_PARTIAL", 0.375, "Partly met; important elements are missing."),
    ("CLASS_MODERATE", 0.5, "Moderately met, with notable gaps."),
    ("CLASS_SUBSTANTIAL", 0.625, "Substantially met; most key aspects are present."),
    ("CLASS_MAJOR", 0.75, "Largely met; minor omissions remain."),
    ("CLASS_VERY_NEARLY", 0.875, "Very nearly fully met; only negligible details are missing."),
    ("CLASS_EXACT", 1.0, "Fully and exactly met."),
)

SYSTEM_PROMPT = """You are a precise examiner. You judge how well one criterion is met by a text, and you \
answer with a short reflection and one classification, in the XML format the user asks for, and nothing else.

The criterion is a statement about the text (it may call the text "the response"). It can be phrased \
as a requirement ("Must mention X"), a description ("Mentions X") or a fragment ("X, briefly"); judge \
what it asks, not how it is worded. Judge only the criterion given: other qualities of the text do not \
count for or against it.{suite}"""

_SUITE = """

For context only (this is not a criterion): the evaluation this belongs to is described as
<SUITE_DESCRIPTION>
{description}
</SUITE_DESCRIPTION>"""


# The reference's backup judge: asked, after the default judges, only when one of them failed, and then
# averaged in with those that succeeded (never with judges the blueprint or --judge names).
BACKUP_JUDGE = Judge(id="backup-claude-4-5-haiku", model="openrouter:anthropic/claude-haiku-4.5", approach="holistic")


def judge_label(judge: Judge) -> str:
    """`id(model)` when the judge has an id, else `approach(model)` (the reference's judgeModelId)."""
    return f"{judge.id}({judge.model})" if judge.id else f"{judge.approach}({judge.model})"


def transcript(history: Sequence[tuple[str, str, bool]]) -> str:
    """(role, content, generated) turns as the judge reads them."""
    lines = []
    for role, content, generated in history:
        label = ("assistant (generated)" if generated else "assistant (fixed)") if role == "assistant" else role
        lines.append(f"{label}: {content}")
    return "\n--------------------\n".join(lines)


def judge_messages(judge: Judge, *, conversation: str, text: str, criterion: str,
                   suite_description: str | None) -> tuple[str, str]:
    """(system prompt, user prompt) for one judge and one criterion."""
    suite = ""
    if judge.approach == "holistic" and (suite_description or "").strip():
        suite = _SUITE.format(description=suite_description.strip())  # type: ignore[union-attr]
    focus = "THIS SPECIFIC criterion" if judge.approach in ("prompt-aware", "holistic") else "the criterion"
    guidelines = "\n".join(f"- {name}: {desc}" for name, _, desc in SCALE)
    user = f"""Below are a conversation and the text a candidate model produced in it. Assess only what the \
candidate generated (turns marked "assistant (generated)"); fixed assistant turns were written by the \
evaluation, not the candidate, and earn no credit.

<TRANSCRIPT>
{conversation}
</TRANSCRIPT>

<TEXT>
{text}
</TEXT>

How well is {focus} met by the generated text?
<CRITERION>
{criterion}
</CRITERION>

Classify it with one of these {len(SCALE)} classes:
{guidelines}

Answer in exactly this format:
<reflection>One or two sentences explaining your classification.</reflection>
<classification>ONE class name, e.g. {SCALE[-1][0]}</classification>"""
    return _system_prompt(suite), user


@functools.lru_cache(maxsize=8)
def _system_prompt(suite: str) -> str:
    """One string per suite text: batch mode holds every judge request of a run at once."""
    return SYSTEM_PROMPT.format(suite=suite)


# --- key points from an ideal answer -------------------------------------------------------------

EXTRACT_SYSTEM = """You turn an ideal answer into the key points a good answer must cover: short, \
self-contained, checkable statements. You answer only in the XML format asked for."""

def extraction_prompt(ideal: str, conversation: str) -> str:
    return f"""A model will be asked the following:
<PROMPT>
{conversation}
</PROMPT>

This is an ideal answer:
<IDEAL>
{ideal}
</IDEAL>

List the distinct key points of the ideal answer that a good answer must cover (usually 3 to 8), each \
as one short criterion, in this format and nothing else:
<key_point>first point</key_point>
<key_point>second point</key_point>"""


def parse_key_points(text: str) -> list[str]:
    points = [p.strip() for p in all_tagged(text or "", "key_point")]
    return [p for p in points if p]
