"""The scorers of judged AgentV assertion types (registry stage JUDGE): how each asks the judge target,
and how it reads the judge's reply into the assertion's result entry.

An entry names one of these (`scorer="evalspec.run.score.judged_types:LLM_JUDGE"`); `AgentvJudges.judged`
(score/judges.py) does the rest alike for every judged type: the judge target, the call (batched or
interactive), the run database's record of the reply (so `--resume` asks again for nothing), a failed
call or a reply that cannot be read left not scored with its reason.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...scoring.agentv_aggregate import (
    negated,
    rubric_items,
    score_checklist,
    score_ranges,
    verdict,
)
from .agentv_entries import entry, skipped

if TYPE_CHECKING:
    from ...agentv.model import AgentvTest, Assertion

# The `prompt:` of the assertion as text (a template file, inline text, a prompt script's output), or
# None when it has none: read only when asked (score/judges.py, AgentvJudges.template).
Template = Callable[[], Awaitable[str | None]]
Prompt = Callable[["Assertion", "AgentvTest", str, Template], Awaitable[tuple[str | None, str]]]


Estimate = Callable[["Assertion", "AgentvTest", str, Callable[[], "str | None"]], tuple[str, str]]


@dataclass(frozen=True)
class JudgedType:
    """A judged type's scorer: `prompt(a, test, answer, template)` gives the judge's (system, user)
    messages (raise judges.TemplateError for a prompt that cannot be had: not scored); `read(a, reply)`
    gives the result entry (score/agentv_entries.entry, or .skipped with the reason: by default AgentV's judge
    JSON, a checklist or score ranges over the `criteria` field's rubric when there is one); `estimate(a, test,
    answer, template)`, the same messages made before the run for its cost estimate (run/cost/),
    nothing run: by default AgentV's default judge prompt stands in."""

    prompt: Prompt
    read: Callable[[Assertion, str], dict[str, Any]] = lambda a, reply: judged_entry(a, reply)
    estimate: Estimate | None = None
    criteria: str | None = None  # the field holding the type's rubric criteria, when it takes them

    def estimated(self, a: Assertion, test: AgentvTest, answer: str, template: Callable[[], str | None]
                  ) -> tuple[str, str]:
        if self.estimate is not None:
            return self.estimate(a, test, answer, template)
        from .agentv_judge import freeform_prompt

        return freeform_prompt(None, test, answer)


async def llm_judge_prompt(a: Assertion, test: AgentvTest, answer: str, template: Template
                           ) -> tuple[str | None, str]:
    """`rubrics` and `llm-judge`: the rubric prompt when there are criteria, else the freeform one
    (the assertion's `prompt`, or AgentV's default)."""
    from .agentv_judge import freeform_prompt, rubric_prompt
    criteria = judged_criteria(a)
    if criteria:
        return rubric_prompt(criteria, test, answer)
    return freeform_prompt(await template(), test, answer)


def llm_judge_estimate(a: Assertion, test: AgentvTest, answer: str, template: Callable[[], str | None]
                       ) -> tuple[str, str]:
    from .agentv_judge import freeform_prompt, rubric_prompt

    field = judged_type(a).criteria
    criteria = a.config.get(field) if field else None
    if criteria:
        listed = [{"id": f"rubric-{i + 1}", "outcome": c, "weight": 1.0, "required": True}
                  if isinstance(c, str) else dict(c) for i, c in enumerate(criteria)]
        return rubric_prompt(listed, test, answer)
    return freeform_prompt(template(), test, answer)


def judged_type(a: Assertion) -> JudgedType:
    """The scorer the registry entry of `a`'s type names (stage JUDGE)."""
    from ...registry.agentv_assertions import ASSERTION_TYPES
    from ...registry.stages import resolve_scorer

    got = resolve_scorer(ASSERTION_TYPES[a.type].scorer)
    assert isinstance(got, JudgedType), f"{a.type}: a judged type's scorer is a JudgedType"
    return got


RUBRICS = JudgedType(llm_judge_prompt, estimate=llm_judge_estimate, criteria="criteria")
LLM_JUDGE = JudgedType(llm_judge_prompt, estimate=llm_judge_estimate, criteria="rubrics")


def judged_criteria(a: Assertion) -> list[dict[str, Any]]:
    """A judged assertion's rubric criteria (its JudgedType's `criteria` field: a `rubrics` assertion's
    `criteria`, an llm-judge's `rubrics`) as AgentV reads them (rubric_items)."""
    field = judged_type(a).criteria
    criteria = a.config.get(field) if field else None
    return rubric_items(criteria) if isinstance(criteria, list) else []


class UnreadReply(dict[str, Any]):
    """A not-scored entry because the judge's reply is outside AgentV's schema (no JSON, a wrong field):
    AgentV asks its judge again, three times in all, before it gives up (`runWithRetry`)."""


JUDGE_ATTEMPTS = 3  # AgentV's llm-judge asks this many times for a reply its schema reads


def judged_entry(a: Assertion, reply: str) -> dict[str, Any]:
    """A judged assertion's entry from its judge's reply text (the runner asks the judge;
    this reads the answer). A reply AgentV's schema refuses is not scored (AgentV skips the assertion)."""
    from .agentv_judge import JudgeReplyError, freeform_result, parse_json_reply, rubric_checks

    criteria = judged_criteria(a)
    try:
        data = parse_json_reply(reply)
        if criteria:
            ranges = any(c.get("score_ranges") for c in criteria)
            checks = rubric_checks(data, ranges=ranges)
            rs = score_ranges(criteria, checks) if ranges else score_checklist(criteria, checks)
            if rs.unassessed:
                return skipped(a, "not scored: the judge did not assess " + ", ".join(
                    f"'{rid}'" for rid in rs.unassessed) + " (AgentV would score the rubric without it)")
            score, result_verdict = rs.score, rs.verdict
            hits, misses = list(rs.hits), list(rs.misses)
            reasoning = data.get("overall_reasoning") if isinstance(data.get("overall_reasoning"), str) else None
            details = rs.details
        else:
            score, hits, misses, reasoning = freeform_result(data)
            result_verdict, details = verdict(score), None
    except JudgeReplyError as err:
        return UnreadReply(skipped(a, f"not scored: {err}"))
    if a.negate:
        score, result_verdict, hits, misses, reasoning = negated(score, result_verdict, hits, misses, reasoning)
    out = entry(a, score, result_verdict, hits, misses, reasoning)
    if details is not None:
        out["details"] = details
    return out
